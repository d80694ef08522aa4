import { Migration } from '@mikro-orm/migrations';

/**
 * Transfers accepted by the simulated rails, their outcome callbacks (one per transfer, retried
 * until delivered) and the fault switches. Everything a restart must not lose lives here.
 */
export class Migration0001SandboxInitial extends Migration {
  override name = '0001-sandbox-initial';

  override up(): void {
    // One row per rail transfer; `transaction_id` is the caller's idempotency key on both rails.
    this.addSql(`
      create table sandbox.transfers (
        provider_transfer_id text primary key,
        transaction_id text not null,
        rail text not null check (rail in ('BREB', 'ACH')),
        amount_cents bigint not null check (amount_cents > 0),
        status text not null default 'PENDING' check (status in ('PENDING', 'COMPLETED', 'FAILED')),
        error_message text,
        callback_url text not null,
        request jsonb not null,
        outcome_due_at timestamptz not null,
        outcome_at timestamptz,
        forced boolean not null default false,
        created_at timestamptz not null default now(),
        constraint transfers_transaction_id_uq unique (transaction_id),
        constraint transfers_outcome_ck check ((status = 'PENDING') = (outcome_at is null))
      )`);
    this.addSql(`create index transfers_due_idx on sandbox.transfers (outcome_due_at) where status = 'PENDING'`);

    // The outcome callback of a transfer. `sending` is a lease: `next_attempt_at` is when it
    // expires, so a delivery cut short by a crash is sent again; `attempts` fences late writers.
    this.addSql(`
      create table sandbox.callbacks (
        event_id uuid primary key,
        transaction_id text not null,
        callback_url text not null,
        body text not null,
        state text not null default 'pending' check (state in ('pending', 'sending', 'delivered', 'abandoned')),
        attempts integer not null default 0,
        next_attempt_at timestamptz not null default now(),
        expires_at timestamptz not null,
        last_attempt_at timestamptz,
        last_status integer,
        last_error text,
        delivered_at timestamptz,
        created_at timestamptz not null default now(),
        constraint callbacks_transaction_id_uq unique (transaction_id)
      )`);
    this.addSql(`create index callbacks_due_idx on sandbox.callbacks (next_attempt_at) where state in ('pending', 'sending')`);

    this.addSql(`
      create table sandbox.faults (
        name text primary key check (name in ('directory', 'brebRail', 'achRail', 'pse', 'callbacks')),
        state text not null check (state in ('up', 'down')),
        updated_at timestamptz not null default now()
      )`);
    this.addSql(
      `insert into sandbox.faults (name, state) values ('directory', 'up'), ('brebRail', 'up'), ('achRail', 'up'), ('pse', 'up'), ('callbacks', 'up')`,
    );
  }
}
