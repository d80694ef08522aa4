import { Migration } from '@mikro-orm/migrations';

/**
 * The reconciliation's read path (ListSettlements, docs/reconciliation.md): a day's settled
 * transfers of one rail in id order, read in keyset batches. The index is on the settlement's
 * Bogotá date (UTC-5, no daylight saving: a fixed offset, so the expression is immutable), then the
 * id, over the settled rows only; persistence/settlement.store.ts writes the same expressions, so each batch is an
 * index range scan from the last id, whatever the day's size.
 *  - COMPLETED settles at `completed_at` (the ledger's commit time of the rail's completion);
 *  - FAILED settles at `finished_at` (when the rail's failure was applied), and only if the rail
 *    took the transfer (`provider_transfer_id`): one it refused at dispatch or never got has no line.
 */
export class Migration0006SettlementsIndex extends Migration {
  override name = '0006-settlements-index';

  override up(): void {
    this.addSql(`create index transfers_settlements_idx on transfer.transfers
      (rail, (timezone(interval '-05:00', case state when 'COMPLETED' then completed_at else finished_at end)::date), id)
      where state = 'COMPLETED' or (state = 'FAILED' and provider_transfer_id is not null)`);
  }

  override down(): void {
    this.addSql('drop index if exists transfer.transfers_settlements_idx');
  }
}
