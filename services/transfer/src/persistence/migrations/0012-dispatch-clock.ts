import { Migration } from '@mikro-orm/migrations';

/**
 * The dispatch clock: when a transfer was accepted for dispatch (its funds reserved), if that came later
 * than its record. A batch's lines are recorded at execute and funded by the batch's one
 * ReserveBatch, possibly much later (a ledger outage): RAIL_DISPATCH_TIMEOUT_SECONDS counts from
 * here, not from the record. Null for a single send (reserved in the request that records it).
 * Nullable, no default: adding it rewrites nothing.
 */
export class Migration0012DispatchClock extends Migration {
  override name = '0012-dispatch-clock';

  override up(): void {
    this.addSql('alter table transfer.transfers add column if not exists accepted_at timestamptz');
  }

  override down(): void {
    this.addSql('alter table transfer.transfers drop column if exists accepted_at');
  }
}
