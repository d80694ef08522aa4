import { Migration } from '@mikro-orm/migrations';

/**
 * Returns of inbound Bre-B payments in a table of their own (docs/sandbox.md "Bre-B collect keys and
 * inbound payments"): a participant may return a payment several times, each return all or part of
 * it, while the returns' sum stays within the payment's amount (checked under the payment's row
 * lock). `return_id` is the participant's id of the return (its idempotency key), `returned_at` the
 * network's time of it (database clock). The breb-inbound settlement report has one RETURNED line per
 * return, its `our_id` the return id.
 *
 * The returns migration 0007 kept on the payment (`breb_incoming.return_id`, `returned_at`) are
 * copied here. Those columns stay, still set to the payment's FIRST return: readers of 0007's
 * columns (tests of the participant) keep working; nothing in the sandbox reads them any more.
 */
export class Migration0009SandboxBrebPartialReturns extends Migration {
  override name = '0009-sandbox-breb-partial-returns';

  override up(): void {
    this.addSql(`
      create table if not exists sandbox.breb_returns (
        return_id text primary key,
        provider_transfer_id text not null references sandbox.breb_incoming (provider_transfer_id),
        amount_cents bigint not null check (amount_cents > 0),
        returned_at timestamptz not null default clock_timestamp()
      )`);
    // The payment's returns (their sum, under its lock); the report's day of returns.
    this.addSql(`create index if not exists breb_returns_transfer_idx on sandbox.breb_returns (provider_transfer_id)`);
    this.addSql(`create index if not exists breb_returns_returned_idx on sandbox.breb_returns (returned_at)`);
    this.addSql(`
      insert into sandbox.breb_returns (return_id, provider_transfer_id, amount_cents, returned_at)
      select return_id, provider_transfer_id, amount_cents, returned_at from sandbox.breb_incoming
       where return_id is not null and returned_at is not null
      on conflict (return_id) do nothing`);
  }

  override down(): void {
    this.addSql(`drop table if exists sandbox.breb_returns`);
  }
}
