import { Migration } from '@mikro-orm/migrations';

/**
 * No single insider moves money (docs/security.md, insider threat model).
 *
 * - approval_requests: every sensitive admin change an operator asks for (lowering a company's
 *   multi-signature threshold or loosening its counterparty limits, a WRITE API key, a dashboard
 *   user, an operator invitation, disabling an operator, a fee schedule, removing an AML entry)
 *   waits here for a second, independent operator:
 *     PENDING_APPROVAL --approve (CAS)--> APPROVED --applied--> APPLIED | FAILED
 *     PENDING_APPROVAL --reject--> REJECTED        PENDING_APPROVAL --past expires_at--> EXPIRED
 *   `not_before` is the delay during which the company (told by company.security_changed) can
 *   object. `dedupe_key` keeps one open request per change (the same request again is a replay).
 *   The payload never holds a credential (a password is never accepted from an operator here).
 * - bootstrap_state: one row, written when the second operator enrols; from then on the shared
 *   ADMIN_TOKEN invites no one in production, whatever happens to the operators later.
 * - admin_credits: every direct (below the dual-control threshold) credit by an operator, so the
 *   running totals per operator and per company over a window decide whether the next one needs
 *   a second operator — splitting a large credit into small ones no longer avoids maker-checker.
 */
export class Migration0008ApprovalRequests extends Migration {
  override name = '0008-approval-requests';

  override up(): void {
    this.addSql(`
      create table if not exists gateway.approval_requests (
        id text primary key check (id ~ '^apr_[0-9a-f]{32}$'),
        action text not null check (action in ('COMPANY_UPDATE', 'API_KEY_ISSUE', 'DASHBOARD_USER_ADD', 'OPERATOR_INVITE', 'OPERATOR_DISABLE', 'FEE_SET', 'AML_REMOVE')),
        company_id uuid,
        target_id text,
        payload jsonb not null,
        dedupe_key text not null,
        status text not null check (status in ('PENDING_APPROVAL', 'APPROVED', 'APPLIED', 'FAILED', 'REJECTED', 'EXPIRED')),
        requested_by uuid not null references gateway.operators (id),
        requested_at timestamptz not null default now(),
        not_before timestamptz not null,
        expires_at timestamptz not null,
        decided_by uuid references gateway.operators (id),
        decided_at timestamptz,
        reason text,
        result jsonb,
        error_code text,
        completed_at timestamptz,
        check (status in ('PENDING_APPROVAL', 'EXPIRED') or decided_by is not null),
        check (expires_at > not_before)
      )`);
    // One open request per change: a second identical ask replays the first.
    this.addSql(`create unique index if not exists approval_requests_open_uq on gateway.approval_requests (dedupe_key)
      where status in ('PENDING_APPROVAL', 'APPROVED')`);
    this.addSql(`create index if not exists approval_requests_status_idx on gateway.approval_requests (status, requested_at desc, id desc)`);
    this.addSql(
      `create index if not exists approval_requests_company_idx on gateway.approval_requests (company_id, requested_at desc) where company_id is not null`,
    );

    this.addSql(`
      create table if not exists gateway.bootstrap_state (
        singleton boolean primary key default true check (singleton),
        bootstrapped_at timestamptz not null default now(),
        operator_ids uuid[] not null
      )`);
    // Permanent: nothing but a superuser's DDL can take the mark back.
    this.addSql(`
      create or replace function gateway.bootstrap_state_permanent() returns trigger language plpgsql as $$
      begin
        raise exception 'gateway.bootstrap_state is permanent (% refused)', tg_op using errcode = '42501';
      end $$`);
    this.addSql(`drop trigger if exists bootstrap_state_no_update_delete on gateway.bootstrap_state`);
    this.addSql(`create trigger bootstrap_state_no_update_delete before update or delete on gateway.bootstrap_state
      for each row execute function gateway.bootstrap_state_permanent()`);
    this.addSql(`drop trigger if exists bootstrap_state_no_truncate on gateway.bootstrap_state`);
    this.addSql(`create trigger bootstrap_state_no_truncate before truncate on gateway.bootstrap_state
      for each statement execute function gateway.bootstrap_state_permanent()`);

    this.addSql(`
      create table if not exists gateway.admin_credits (
        company_id uuid not null,
        reference text not null,
        operator_id uuid not null references gateway.operators (id),
        rail text not null check (rail in ('BREB', 'ACH')),
        amount_cents bigint not null check (amount_cents > 0),
        at timestamptz not null default now(),
        status text not null check (status in ('RESERVED', 'CREDITED', 'VOID')),
        movement_id text,
        primary key (company_id, reference)
      )`);
    this.addSql(`create index if not exists admin_credits_operator_idx on gateway.admin_credits (operator_id, at) where status <> 'VOID'`);
    this.addSql(`create index if not exists admin_credits_company_idx on gateway.admin_credits (company_id, at) where status <> 'VOID'`);
  }

  override down(): void {
    this.addSql('drop table if exists gateway.admin_credits');
    this.addSql('drop table if exists gateway.bootstrap_state');
    this.addSql('drop function if exists gateway.bootstrap_state_permanent()');
    this.addSql('drop table if exists gateway.approval_requests');
  }
}
