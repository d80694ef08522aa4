import { Migration } from '@mikro-orm/migrations';

/**
 * Carried-forward balance checkpoints (docs/balance-checkpoints.md): a wallet now gets a checkpoint when
 * its *company's* postings since its last one cross the threshold, so a wallet that never moved beside a
 * busy one gets checkpoints of zero postings. The check `postings > 0` becomes `postings >= 0`.
 *
 * `NOT VALID`: every existing row already has postings > 0; the new check is enforced on every row
 * written from now on, and nothing scans the table under the migration's lock (docs/migrations.md).
 */
export class Migration0016CarriedCheckpoints extends Migration {
  override name = '0016-carried-checkpoints';

  override up(): void {
    this.addSql('alter table ledger.balance_checkpoints drop constraint if exists balance_checkpoints_postings_check');
    this.addSql('alter table ledger.balance_checkpoints add constraint balance_checkpoints_postings_check check (postings >= 0) not valid');
  }

  override down(): void {
    this.addSql('delete from ledger.balance_checkpoints where postings = 0');
    this.addSql('alter table ledger.balance_checkpoints drop constraint if exists balance_checkpoints_postings_check');
    this.addSql('alter table ledger.balance_checkpoints add constraint balance_checkpoints_postings_check check (postings > 0) not valid');
  }
}
