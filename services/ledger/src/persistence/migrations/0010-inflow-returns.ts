import { Migration } from '@mikro-orm/migrations';

/**
 * Returns of credited inflows (docs/returns.md): a Reserve may name the inflow it returns to its payer
 * (`return_of`). Its hold keeps the inflow's movement and the settlement account the money goes back
 * to (breb_settlement, pse_settlement), which its Commit credits instead of rail_clearing; the
 * inflow's movement keeps how much of it open or committed returns claim (`returned_cents`), raised
 * by the return's Reserve and lowered by its Release in the same statement, only while the sum stays
 * within the inflow's gross. Nullable columns and a constant default: adding them rewrites nothing.
 */
export class Migration0010InflowReturns extends Migration {
  override name = '0010-inflow-returns';

  override up(): void {
    this.addSql('alter table ledger.holds add column if not exists return_of uuid, add column if not exists return_account text');
    this.addSql('alter table ledger.movements add column if not exists returned_cents bigint not null default 0');
  }

  override down(): void {
    this.addSql('alter table ledger.movements drop column if exists returned_cents');
    this.addSql('alter table ledger.holds drop column if exists return_of, drop column if exists return_account');
  }
}
