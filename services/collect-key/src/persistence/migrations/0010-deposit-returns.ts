import { Migration } from '@mikro-orm/migrations';

/**
 * Returns (devoluciones) of credited inbound Bre-B payments (docs/returns.md): all or part of an
 * ASSIGNED payment sent back to its payer, any number of times while their sum stays within the
 * payment's gross (checked under the payment's row lock; the ledger checks it again on the hold).
 * A return is a saga of its own (`RETURN_MACHINE`): RESERVING (the hold on the BREB wallet) →
 * SENDING (the network's return, then the commit to breb_settlement) → RETURNED, or RELEASING →
 * FAILED. `returned_at` is the network's time of the return: the settlement time of the return's
 * leg (OUT) for the reconciliation, read by Bogotá day in provider id then return id order.
 * `inflow_key` is the ledger key of the inflow it returns (the credit, or the assignment of a held payment).
 */
export class Migration0010DepositReturns extends Migration {
  override name = '0010-deposit-returns';

  override up(): void {
    this.addSql(`create table collect_key.payment_returns (
      id text primary key check (id ~ '^ret_[a-z0-9]{24}$'),
      deposit_id text not null references collect_key.payments (deposit_id),
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
    this.addSql(`create index payment_returns_deposit_idx on collect_key.payment_returns (deposit_id, created_at)`);
    this.addSql(`create index payment_returns_live_idx on collect_key.payment_returns (step_at)
      where status in ('RESERVING', 'SENDING', 'RELEASING') and not parked`);
    this.addSql(`create index payment_returns_settled_idx on collect_key.payment_returns
      ((timezone(interval '-05:00', returned_at)::date), provider_transfer_id collate "C", id collate "C") where status = 'RETURNED'`);
    this.addSql(`create table collect_key.payment_return_history (
      return_id text not null references collect_key.payment_returns (id),
      seq serial,
      from_status text,
      to_status text not null,
      reason text not null,
      at timestamptz not null default clock_timestamp(),
      primary key (return_id, seq)
    )`);
  }

  override down(): void {
    this.addSql('drop table if exists collect_key.payment_return_history, collect_key.payment_returns');
  }
}
