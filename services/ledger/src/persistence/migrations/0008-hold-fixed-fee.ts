import { Migration } from '@mikro-orm/migrations';

/**
 * The fixed part of a hold's fee: a Reserve may ask the ledger to compute the fee from
 * the company's schedule (`compute_fee`), and its caller shows the fee's fixed/variable split, so
 * the hold keeps it for the replays (and VoidReserve) to answer. Nullable: holds reserved before it
 * have none. Adding a nullable column without a default rewrites nothing.
 */
export class Migration0008HoldFixedFee extends Migration {
  override name = '0008-hold-fixed-fee';

  override up(): void {
    this.addSql('alter table ledger.holds add column if not exists fixed_fee bigint');
  }

  override down(): void {
    this.addSql('alter table ledger.holds drop column if exists fixed_fee');
  }
}
