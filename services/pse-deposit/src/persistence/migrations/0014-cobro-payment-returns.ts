import { Migration } from '@mikro-orm/migrations';

/**
 * Returns of matched payments (issue 40, docs/cobros.md "Giving money back"): a payment returned to its
 * payer after it was matched (POST /deposits/{id}/returns) is taken off its cobro. Each return is
 * recorded once by its id (the `deposit.returned` event may be redelivered; a payment attached by hand
 * later finds the returns made before); the payment keeps what of it was returned, the cobro what of
 * its COUNTED payments was. The cobro's state does not go back: it was paid (as an invoice refunded
 * after payment stays paid).
 */
export class Migration0014CobroPaymentReturns extends Migration {
  override up(): void {
    this.addSql(`create table pse_deposit.cobro_payment_returns (
      return_id text primary key,
      deposit_id text not null,
      company_id text not null,
      amount bigint not null check (amount > 0),
      applied_at timestamptz not null default now()
    )`);
    this.addSql(`create index cobro_payment_returns_deposit_idx on pse_deposit.cobro_payment_returns (deposit_id)`);
    this.addSql(`alter table pse_deposit.cobro_payments add column returned_cents bigint not null default 0 check (returned_cents >= 0)`);
    this.addSql(`alter table pse_deposit.cobros add column returned_amount bigint not null default 0 check (returned_amount >= 0)`);
  }

  override down(): void {
    this.addSql(`alter table pse_deposit.cobros drop column returned_amount`);
    this.addSql(`alter table pse_deposit.cobro_payments drop column returned_cents`);
    this.addSql(`drop table pse_deposit.cobro_payment_returns`);
  }
}
