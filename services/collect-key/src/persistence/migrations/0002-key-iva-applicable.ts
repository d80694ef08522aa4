import { Migration } from '@mikro-orm/migrations';

/** Whether IVA applies to the inflow fees of a key's payments: the company's tax regime when the key was issued. */
export class Migration0002KeyIvaApplicable extends Migration {
  override name = '0002-key-iva-applicable';

  override up(): void {
    this.addSql('alter table collect_key.keys add column if not exists iva_applicable boolean not null default false');
  }
}
