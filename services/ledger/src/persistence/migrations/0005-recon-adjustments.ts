import { Migration } from '@mikro-orm/migrations';

/**
 * The `recon_adjustment` posting kind (PostClearingAdjustment: a reconciliation difference accepted
 * on the provider's side, booked on the report's clearing account against
 * reconciliation_differences). Such a posting belongs to no company: its `company_id` is ''.
 */
export class Migration0005ReconAdjustments extends Migration {
  override name = '0005-recon-adjustments';

  override up(): void {
    this.addSql('alter table ledger.postings drop constraint if exists postings_kind_check');
    this.addSql(`alter table ledger.postings add constraint postings_kind_check
      check (kind in ('credit', 'fee_charge', 'reserve', 'commit', 'release', 'inflow', 'reversal', 'void', 'correction', 'recon_adjustment'))`);
  }

  override down(): void {
    this.addSql('alter table ledger.postings drop constraint if exists postings_kind_check');
    this.addSql(`alter table ledger.postings add constraint postings_kind_check
      check (kind in ('credit', 'fee_charge', 'reserve', 'commit', 'release', 'inflow', 'reversal', 'void', 'correction'))`);
  }
}
