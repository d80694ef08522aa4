import { Migration } from '@mikro-orm/migrations';

/**
 * Refunds of paid PSE payments (docs/sandbox.md "PSE gateway"): the product refunds all or part of a
 * paid link to its payer, several times, while the refunds' sum stays within the link's paid amount
 * (checked under the link's row lock). `refund_id` is the product's id of the refund (its idempotency
 * key: our return id `ret_…`), `refunded_at` the gateway's time of it (database clock). The pse
 * settlement report has one REFUNDED (OUT) line per refund, its `our_id` the refund id. A link with a
 * refund can no longer be reversed by the provider.
 */
export class Migration0010SandboxPseRefunds extends Migration {
  override name = '0010-sandbox-pse-refunds';

  override up(): void {
    this.addSql(`
      create table if not exists sandbox.pse_refunds (
        refund_id text primary key,
        deposit_id text not null references sandbox.pse_links (deposit_id),
        amount_cents bigint not null check (amount_cents > 0),
        refunded_at timestamptz not null default clock_timestamp()
      )`);
    // The link's refunds (their sum, under its lock); the report's day of refunds.
    this.addSql(`create index if not exists pse_refunds_deposit_idx on sandbox.pse_refunds (deposit_id)`);
    this.addSql(`create index if not exists pse_refunds_refunded_idx on sandbox.pse_refunds (refunded_at)`);
  }

  override down(): void {
    this.addSql(`drop table if exists sandbox.pse_refunds`);
  }
}
