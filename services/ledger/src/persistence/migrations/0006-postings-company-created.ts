import { Migration } from '@mikro-orm/migrations';

/**
 * An index for balances at past instants (GetBalanceAt): a company's postings up to an instant,
 * each joined to its entries by the entries' primary key (posting_id, seq). A plain (not
 * concurrent) build: migrations run all-or-nothing in one transaction, where CONCURRENTLY is not
 * allowed; the build blocks postings while it runs (run it in a maintenance window on a big journal).
 */
export class Migration0006PostingsCompanyCreated extends Migration {
  override name = '0006-postings-company-created';

  override up(): void {
    this.addSql('create index if not exists postings_company_created_idx on ledger.postings (company_id, created_at)');
  }

  override down(): void {
    this.addSql('drop index if exists ledger.postings_company_created_idx');
  }
}
