import { Migration } from '@mikro-orm/migrations';

/**
 * Named operators of `/admin` (CONTRACT §10), their sessions, the append-only audit log of every
 * admin action, and the credit requests that wait for a second operator (maker-checker).
 *
 * - operators: invited (an enrollment token, stored only as an HMAC) → enrolled (argon2id password,
 *   TOTP secret sealed with AES-256-GCM, `totp_last_step` makes every code single-use) → disabled.
 *   `created_by` names the operator who invited them (null: the shared bootstrap token), which is
 *   how an approval checks that maker and checker are independent.
 * - operator_sessions: tokens stored only as HMAC-SHA256(pepper, token); short-lived; revocable.
 * - admin_audit: one row per admin action and outcome. A trigger refuses UPDATE, DELETE and
 *   TRUNCATE for every role but a superuser bypassing triggers: the log can only grow.
 * - credit_requests: PENDING_APPROVAL → APPROVED → CREDITED | FAILED, or → REJECTED. Unique per
 *   company and reference (the credit's idempotency handle, as for direct credits).
 */
export class Migration0005OperatorsAuditCreditRequests extends Migration {
  override name = '0005-operators-audit-credit-requests';

  override up(): void {
    this.addSql(`
      create table if not exists gateway.operators (
        id uuid primary key,
        name text not null,
        email text not null,
        password_hash text,
        totp_secret_enc text,
        totp_last_step bigint,
        enrollment_token_hash text,
        enrollment_expires_at timestamptz,
        enrolled_at timestamptz,
        created_by uuid references gateway.operators (id),
        created_at timestamptz not null default now(),
        disabled_at timestamptz,
        disabled_by uuid,
        constraint operators_email_uq unique (email),
        constraint operators_enrollment_token_uq unique (enrollment_token_hash),
        check ((enrolled_at is null) = (password_hash is null) and (password_hash is null) = (totp_secret_enc is null))
      )`);
    this.addSql(`
      create table if not exists gateway.operator_sessions (
        id uuid primary key,
        token_hash text not null,
        operator_id uuid not null references gateway.operators (id),
        client_ip text,
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        revoked_at timestamptz,
        constraint operator_sessions_token_hash_uq unique (token_hash)
      )`);
    this.addSql(`create index if not exists operator_sessions_operator_idx on gateway.operator_sessions (operator_id)`);

    this.addSql(`
      create table if not exists gateway.admin_audit (
        seq bigint generated always as identity primary key,
        id uuid not null unique,
        at timestamptz not null default clock_timestamp(),
        principal_kind text not null check (principal_kind in ('operator', 'bootstrap-token', 'anonymous')),
        operator_id uuid,
        operator_email text,
        action text not null,
        method text not null,
        route text not null,
        targets jsonb not null default '{}'::jsonb,
        target_ids jsonb not null default '[]'::jsonb,
        request_id text not null,
        client_ip text,
        outcome text not null check (outcome in ('REQUESTED', 'SUCCEEDED', 'FAILED')),
        error_code text,
        request jsonb,
        before jsonb,
        after jsonb
      )`);
    this.addSql(`create index if not exists admin_audit_operator_idx on gateway.admin_audit (operator_id, seq)`);
    this.addSql(`create index if not exists admin_audit_action_idx on gateway.admin_audit (action, seq)`);
    this.addSql(`create index if not exists admin_audit_at_idx on gateway.admin_audit (at)`);
    this.addSql(`create index if not exists admin_audit_targets_idx on gateway.admin_audit using gin (target_ids jsonb_path_ops)`);
    this.addSql(`
      create or replace function gateway.admin_audit_append_only() returns trigger language plpgsql as $$
      begin
        raise exception 'gateway.admin_audit is append-only (% refused)', tg_op using errcode = '42501';
      end $$`);
    this.addSql(`drop trigger if exists admin_audit_no_update_delete on gateway.admin_audit`);
    this.addSql(`
      create trigger admin_audit_no_update_delete before update or delete on gateway.admin_audit
        for each row execute function gateway.admin_audit_append_only()`);
    this.addSql(`drop trigger if exists admin_audit_no_truncate on gateway.admin_audit`);
    this.addSql(`
      create trigger admin_audit_no_truncate before truncate on gateway.admin_audit
        for each statement execute function gateway.admin_audit_append_only()`);

    this.addSql(`
      create table if not exists gateway.credit_requests (
        id text primary key check (id ~ '^crq_[0-9a-f]{32}$'),
        company_id uuid not null,
        rail text not null check (rail in ('BREB', 'ACH')),
        amount_cents bigint not null check (amount_cents > 0),
        reference text not null,
        status text not null check (status in ('PENDING_APPROVAL', 'APPROVED', 'CREDITED', 'REJECTED', 'FAILED')),
        requested_by uuid not null references gateway.operators (id),
        requested_at timestamptz not null default now(),
        decided_by uuid references gateway.operators (id),
        decided_at timestamptz,
        reason text,
        movement_id text,
        error_code text,
        completed_at timestamptz,
        constraint credit_requests_reference_uq unique (company_id, reference),
        check (status = 'PENDING_APPROVAL' or decided_by is not null)
      )`);
    this.addSql(`create index if not exists credit_requests_status_idx on gateway.credit_requests (status, requested_at desc, id desc)`);
  }

  override down(): void {
    this.addSql('drop table if exists gateway.credit_requests');
    this.addSql('drop table if exists gateway.admin_audit');
    this.addSql('drop function if exists gateway.admin_audit_append_only()');
    this.addSql('drop table if exists gateway.operator_sessions');
    this.addSql('drop table if exists gateway.operators');
  }
}
