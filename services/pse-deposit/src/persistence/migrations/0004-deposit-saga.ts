import { Migration } from '@mikro-orm/migrations';

/**
 * The PSE saga's money states (domain/deposit-machine.ts): a deposit is CREDITING while its
 * credit is owed and REVERSING while its reversal is owed (formerly PENDING_CONFIRM / ASSIGNED with
 * `pending_step` set). `pending_step` stays, derived from the state (a CHECK ties the two), for
 * operators' queries. The sweeper's queues follow: links by expiry, money states by step time
 * (`step_at` null = parked for an operator). And the money exceptions: a provider outcome or a
 * ledger answer that contradicts our state (CONTRACT §10), the same shape as the transfer's.
 */
export class Migration0004DepositSaga extends Migration {
  override name = '0004-deposit-saga';

  override up(): void {
    this.addSql(`alter table pse_deposit.deposits drop constraint if exists deposits_status_check`);
    this.addSql(`update pse_deposit.deposits set status = 'CREDITING' where status = 'PENDING_CONFIRM' and pending_step = 'CREDIT'`);
    this.addSql(`update pse_deposit.deposits set status = 'REVERSING' where status = 'ASSIGNED' and pending_step = 'REVERSE'`);
    this.addSql(`alter table pse_deposit.deposits add constraint deposits_status_check check (status in
      ('PENDING_CONFIRM', 'CREDITING', 'ASSIGNED', 'REVERSING', 'REVERSED', 'FAILED', 'EXPIRED', 'UNASSIGNED'))`);
    this.addSql(`alter table pse_deposit.deposits add constraint deposits_money_step_ck check (
      (status = 'CREDITING' and pending_step = 'CREDIT') or (status = 'REVERSING' and pending_step = 'REVERSE')
      or (status not in ('CREDITING', 'REVERSING') and pending_step is null))`);
    this.addSql(`drop index if exists pse_deposit.deposits_expiry_idx`);
    this.addSql(`create index deposits_expiry_idx on pse_deposit.deposits (expires_at) where status = 'PENDING_CONFIRM'`);
    this.addSql(`drop index if exists pse_deposit.deposits_step_idx`);
    this.addSql(`create index deposits_step_idx on pse_deposit.deposits (step_at) where status in ('CREDITING', 'REVERSING') and step_at is not null`);

    this.addSql(`
      create table pse_deposit.money_exceptions (
        id text primary key check (id ~ '^exc_[0-9a-f]{32}$'),
        kind text not null,
        status text not null default 'OPEN' check (status in ('OPEN', 'RESOLVING', 'RESOLVED')),
        company_id text not null,
        rail text not null,
        resource_id text not null,
        ours jsonb not null,
        theirs jsonb not null,
        opened_at timestamptz not null default date_trunc('milliseconds', now()), -- ms: the gateway merges two services' lists on (opened_at, id)
        resolved_at timestamptz,
        resolved_by text,
        action text,
        note text,
        constraint money_exceptions_kind_resource_uq unique (kind, resource_id)
      )`);
    this.addSql(`create index money_exceptions_listing_idx on pse_deposit.money_exceptions (opened_at desc, id desc)`);
    this.addSql(`create index money_exceptions_open_idx on pse_deposit.money_exceptions (kind) where status <> 'RESOLVED'`);
  }

  override down(): void {
    this.addSql('drop table if exists pse_deposit.money_exceptions');
    this.addSql(`alter table pse_deposit.deposits drop constraint if exists deposits_money_step_ck, drop constraint if exists deposits_status_check`);
    this.addSql(`update pse_deposit.deposits set status = 'PENDING_CONFIRM' where status = 'CREDITING'`);
    this.addSql(`update pse_deposit.deposits set status = 'ASSIGNED' where status = 'REVERSING'`);
    this.addSql(`alter table pse_deposit.deposits add constraint deposits_status_check check (status in
      ('PENDING_CONFIRM', 'ASSIGNED', 'FAILED', 'EXPIRED', 'UNASSIGNED', 'REVERSED'))`);
    this.addSql(`drop index if exists pse_deposit.deposits_expiry_idx`);
    this.addSql(`create index deposits_expiry_idx on pse_deposit.deposits (expires_at) where status = 'PENDING_CONFIRM' and pending_step is null`);
    this.addSql(`drop index if exists pse_deposit.deposits_step_idx`);
    this.addSql(`create index deposits_step_idx on pse_deposit.deposits (step_at) where pending_step is not null`);
  }
}
