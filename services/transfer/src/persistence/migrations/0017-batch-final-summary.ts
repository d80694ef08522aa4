import { Migration } from '@mikro-orm/migrations';

/**
 * A finished bulk payout's summary, kept (GET /transfers/batches, issue 44): its totals and items by
 * status, written by the move into its final state. Every item of a finished batch is final and a final
 * transfer never moves again, so the summary never changes; the listing reads it instead of grouping
 * every item of every batch on the page with its transfer (184 ms for 20 batches of 5,000). Nullable, no
 * default: adding it rewrites nothing; batches finished before it are summarised on read as before.
 */
export class Migration0017BatchFinalSummary extends Migration {
  override name = '0017-batch-final-summary';

  override up(): void {
    this.addSql('alter table transfer.batches add column if not exists final_summary jsonb');
  }

  override down(): void {
    this.addSql('alter table transfer.batches drop column if exists final_summary');
  }
}
