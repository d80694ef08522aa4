import { Migration } from '@mikro-orm/migrations';

/**
 * Returns (devoluciones) of paid PSE deposits (docs/returns.md): all or part of a PSE payment credited
 * to the ACH wallet refunded to its payer through the PSE provider's refund API, any number of times
 * while their sum stays within the payment's gross (checked under the deposit's row lock; the ledger
 * checks it again on the hold). The saga and its states are collect-key's for Bre-B
 * (`RETURN_MACHINE`): RESERVING (the hold on the ACH wallet) → SENDING (the provider's refund, then
 * the commit to pse_settlement) → RETURNED, or RELEASING → FAILED. `returned_at` is the provider's
 * time of the refund: the settlement time of the refund's leg (OUT) for the reconciliation, read by
 * Bogotá day in return id order (the pse report's `our_id` of a refund line is the return's id).
 * A new table: nothing is rewritten.
 */
export class Migration0011DepositReturns extends Migration {
  override name = '0011-deposit-returns';

  override up(): void {
    this.addSql(`create table pse_deposit.deposit_returns (
      id text primary key check (id ~ '^ret_[a-z0-9]{24}$'),
      deposit_id text not null references pse_deposit.deposits (id),
      company_id text not null,
      provider_transfer_id text not null,
      inflow_key text not null,
      amount bigint not null check (amount > 0),
      reason text not null check (reason in ('CUSTOMER_REQUEST', 'DUPLICATE', 'OVERPAYMENT', 'FRAUD', 'OTHER')),
      description text,
      status text not null check (status in ('RESERVING', 'SENDING', 'RELEASING', 'RETURNED', 'FAILED')),
      hold_id uuid,
      movement_id uuid not null unique,
      failure_code text,
      failure_message text,
      requested_by text not null,
      returned_at timestamptz,
      parked boolean not null default false,
      traceparent text,
      step_at timestamptz not null default clock_timestamp(),
      created_at timestamptz not null default clock_timestamp(),
      updated_at timestamptz not null default clock_timestamp(),
      check ((status = 'RETURNED') = (returned_at is not null))
    )`);
    this.addSql(`create index deposit_returns_deposit_idx on pse_deposit.deposit_returns (deposit_id, created_at)`);
    this.addSql(`create index deposit_returns_live_idx on pse_deposit.deposit_returns (step_at)
      where status in ('RESERVING', 'SENDING', 'RELEASING') and not parked`);
    this.addSql(`create index deposit_returns_settled_idx on pse_deposit.deposit_returns
      ((timezone(interval '-05:00', returned_at)::date), id collate "C") where status = 'RETURNED'`);
    this.addSql(`create table pse_deposit.deposit_return_history (
      return_id text not null references pse_deposit.deposit_returns (id),
      seq serial,
      from_status text,
      to_status text not null,
      reason text not null,
      at timestamptz not null default clock_timestamp(),
      primary key (return_id, seq)
    )`);
  }

  override down(): void {
    this.addSql('drop table if exists pse_deposit.deposit_return_history, pse_deposit.deposit_returns');
  }
}
