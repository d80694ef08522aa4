import { Migration } from '@mikro-orm/migrations';

/** BREB sends name their destination key on the receipt (TransferEvent.breb_key_type / breb_key_value). */
export class Migration0002TransferBrebKey extends Migration {
  override name = '0002-transfer-breb-key';

  override up(): void {
    this.addSql('alter table receipt.transactions add column if not exists breb_key text');
  }
}
