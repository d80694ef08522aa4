import { Migration } from '@mikro-orm/migrations';

/**
 * Scheduled payouts (docs/schedules.md).
 *
 * - `gateway.schedules`: a company's standing instruction — its rule (recurrence, business-day rule,
 *   start, end, number of runs), what each run does (a send, a move or a top-up, as JSON) and who
 *   wrote it (the API key each run acts as). `next_*` is the run the scheduler starts next; a
 *   replica claims due ones with `for update skip locked` and, in the same transaction, records the
 *   run and moves `next_*` on, so a run is claimed once whatever the number of replicas.
 * - `gateway.schedule_runs`: one row per run, unique per schedule and nominal time (its key
 *   `schedule:<id>:<nominal>` downstream). STARTING until its send or move answered; a run whose
 *   replica died is taken again once its lease ran out, under the same key, so the send or move
 *   it makes is still one.
 */
export class Migration0011Schedules extends Migration {
  override name = '0011-schedules';

  override up(): void {
    this.addSql(`
      create table if not exists gateway.schedules (
        id uuid primary key,
        company_id uuid not null references gateway.companies (id),
        status text not null check (status in ('ACTIVE', 'PAUSED', 'CANCELLED', 'COMPLETED')),
        description text,
        rule jsonb not null,
        action jsonb not null,
        author_kind text not null check (author_kind in ('apikey', 'user')),
        author_id text not null,
        runs_started int not null default 0,
        last_nominal_at timestamptz,
        next_seq int,
        next_nominal_at timestamptz,
        next_nominal_local text,
        next_due_at timestamptz,
        version int not null default 1,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        check (status <> 'ACTIVE' or next_due_at is not null)
      )`);
    this.addSql(`create index if not exists schedules_due_idx on gateway.schedules (next_due_at) where status = 'ACTIVE'`);
    this.addSql(`create index if not exists schedules_company_idx on gateway.schedules (company_id, created_at desc, id desc)`);
    this.addSql(`
      create table if not exists gateway.schedule_runs (
        id uuid primary key,
        schedule_id uuid not null references gateway.schedules (id),
        company_id uuid not null,
        seq int not null,
        nominal_at timestamptz not null,
        nominal_local text not null,
        due_at timestamptz not null,
        run_key text not null,
        action jsonb not null,
        status text not null check (status in ('STARTING', 'STARTED', 'FAILED', 'SKIPPED')),
        amount_cents bigint,
        transfer_id text,
        move_id text,
        batch_id text,
        outcome_status text,
        error_code text,
        error_message text,
        attempts int not null default 0,
        lease_until timestamptz,
        claimed_at timestamptz not null default now(),
        finished_at timestamptz,
        unique (schedule_id, nominal_local),
        check ((status = 'STARTING') = (finished_at is null))
      )`);
    this.addSql(`create index if not exists schedule_runs_lease_idx on gateway.schedule_runs (lease_until) where status = 'STARTING'`);
    this.addSql(`create index if not exists schedule_runs_schedule_idx on gateway.schedule_runs (schedule_id, seq desc)`);
  }

  override down(): void {
    this.addSql('drop table if exists gateway.schedule_runs');
    this.addSql('drop table if exists gateway.schedules');
  }
}
