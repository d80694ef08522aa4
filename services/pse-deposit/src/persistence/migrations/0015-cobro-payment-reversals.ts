import { Migration } from '@mikro-orm/migrations';

/**
 * Reversals of matched payments (issue 40, docs/cobros.md "Reversals"): a payment its provider reversed
 * after it was credited (a PSE payment debited back: `deposit.reversed`) comes off its cobro. Each
 * reversal is recorded once by its payment (a payment is reversed once, whole; the event may be
 * redelivered, and a payment whose reversal arrives before its match is never matched after it); the
 * payment keeps what was reversed of it (its gross) and no longer counts, and the cobro's state follows
 * its new paid total through the cobro table.
 */
export class Migration0015CobroPaymentReversals extends Migration {
  override name = '0015-cobro-payment-reversals';

  override up(): void {
    this.addSql(`create table pse_deposit.cobro_payment_reversals (
      deposit_id text primary key,
      company_id text not null,
      amount bigint not null check (amount > 0),
      reversed_at timestamptz not null,
      applied_at timestamptz not null default now()
    )`);
    this.addSql(`alter table pse_deposit.cobro_payments add column reversed_cents bigint not null default 0 check (reversed_cents >= 0)`);
  }

  override down(): void {
    this.addSql(`alter table pse_deposit.cobro_payments drop column reversed_cents`);
    this.addSql(`drop table pse_deposit.cobro_payment_reversals`);
  }
}
