import { Migration } from '@mikro-orm/migrations';

/**
 * The saga's intermediate money states (ABANDONING, RELEASING, EXPIRING, COMPLETING: a writer wins
 * the move into one before it touches the ledger), the dispatch intent (attempts counted before the
 * rail is called, misses after a definite "not received"), what a RELEASING transfer writes when it
 * closes, and the money exceptions (a provider outcome that contradicts our state).
 */
export class Migration0003MoneySafeSaga extends Migration {
  override name = '0003-money-safe-saga';

  override up(): void {
    this.addSql(`alter table transfer.transfers drop constraint if exists transfers_state_check`);
    this.addSql(`alter table transfer.transfers add constraint transfers_state_check check (state in
      ('RECEIVED', 'RESERVED', 'AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED', 'ABANDONING', 'RELEASING', 'EXPIRING', 'COMPLETING',
       'COMPLETED', 'FAILED', 'REJECTED', 'EXPIRED'))`);
    this.addSql(`drop index if exists transfer.transfers_due_idx`);
    this.addSql(`create index transfers_due_idx on transfer.transfers (next_attempt_at)
      where state in ('RECEIVED', 'RESERVED', 'AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED', 'ABANDONING', 'RELEASING', 'EXPIRING', 'COMPLETING')`);
    this.addSql(`alter table transfer.transfers
      add column dispatch_misses integer not null default 0,
      add column last_dispatch_at timestamptz,
      add column release_event text check (release_event in ('failed', 'rejected')),
      add column rejected_by text`);
    // Every transfer that reached RESERVED before this migration may have been dispatched.
    this.addSql(`update transfer.transfers set dispatch_ambiguous = true where state in ('RESERVED', 'EXECUTING') and dispatch_attempts > 0`);

    this.addSql(`
      create table transfer.money_exceptions (
        id text primary key,
        kind text not null,
        status text not null default 'OPEN' check (status in ('OPEN', 'RESOLVING', 'RESOLVED')),
        company_id text not null,
        rail text not null,
        resource_id uuid not null,
        ours jsonb not null,
        theirs jsonb not null,
        opened_at timestamptz not null default date_trunc('milliseconds', now()), -- ms: the gateway merges two services' lists on (opened_at, id)
        resolved_at timestamptz,
        resolved_by text,
        action text,
        note text,
        constraint money_exceptions_kind_resource_uq unique (kind, resource_id)
      )`);
    this.addSql(`create index money_exceptions_listing_idx on transfer.money_exceptions (opened_at desc, id desc)`);
    this.addSql(`create index money_exceptions_open_idx on transfer.money_exceptions (kind) where status <> 'RESOLVED'`);
  }

  override down(): void {
    this.addSql('drop table if exists transfer.money_exceptions');
    this.addSql(`alter table transfer.transfers drop column dispatch_misses, drop column last_dispatch_at, drop column release_event, drop column rejected_by`);
  }
}
