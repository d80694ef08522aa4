import { Migration } from '@mikro-orm/migrations';

/**
 * The reconciliation's read path (ListSettlements, rail breb-inbound, docs/reconciliation.md): a
 * Bogotá day's inbound payments in the key the engine uses for them, the network's transfer id
 * (`collate "C"`), read in keyset batches. A payment settles at `received_at`, the time the network
 * received it (from its notification). persistence/settlement.store.ts writes the same expressions.
 */
export class Migration0004SettlementsIndex extends Migration {
  override name = '0004-settlements-index';

  override up(): void {
    this.addSql(`create index payments_settlements_idx on collect_key.payments
      ((timezone(interval '-05:00', received_at)::date), provider_transfer_id collate "C")`);
  }

  override down(): void {
    this.addSql('drop index if exists collect_key.payments_settlements_idx');
  }
}
