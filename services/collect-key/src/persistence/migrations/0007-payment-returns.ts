import { Migration } from '@mikro-orm/migrations';

/**
 * A held payment returned to the payer through the Bre-B network (docs/decisions.md "Inbound Bre-B payments"): `returned_at` is the
 * network's time of the return (its answer), the settlement time of the payment's second leg
 * (OUT) for the reconciliation, read by day like the first (migration 0004).
 */
export class Migration0007PaymentReturns extends Migration {
  override name = '0007-payment-returns';

  override up(): void {
    this.addSql(`alter table collect_key.payments add column returned_at timestamptz`);
    this.addSql(`create index payments_returns_idx on collect_key.payments
      ((timezone(interval '-05:00', returned_at)::date), provider_transfer_id collate "C") where returned_at is not null`);
  }

  override down(): void {
    this.addSql('drop index if exists collect_key.payments_returns_idx');
    this.addSql('alter table collect_key.payments drop column if exists returned_at');
  }
}
