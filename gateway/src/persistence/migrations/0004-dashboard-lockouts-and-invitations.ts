import { Migration } from '@mikro-orm/migrations';

/**
 * Dashboard lockouts and self-enrolment (invitations).
 *
 * - `dashboard_lockouts`: failed sign-in factors per login e-mail, keyed by
 *   HMAC-SHA256(pepper, e-mail) so neither the e-mails tried (which may hold a mistyped password)
 *   nor unknown users are stored in clear, and an unknown e-mail locks exactly like a real one
 *   (no user enumeration). Each factor keeps the times of its recent failures (a true rolling
 *   window); `locked_until` is set by the failure that reaches the limit.
 * - `dashboard_users.activated_at`: null while an invited user has not proved possession of the
 *   TOTP secret; password and secret are then null (not yet chosen) or pending. Users created
 *   directly (development) and every existing user are active from creation.
 * - `dashboard_invitations`: single-use enrolment tokens, stored only as
 *   HMAC-SHA256(pepper, token); PENDING → ACCEPTED (password set, secret shown) → USED (TOTP
 *   confirmed, user active), or revoked / expired.
 */
export class Migration0004DashboardLockoutsAndInvitations extends Migration {
  override name = '0004-dashboard-lockouts-and-invitations';

  override up(): void {
    this.addSql(`
      create table if not exists gateway.dashboard_lockouts (
        subject text primary key,
        password_failures timestamptz[] not null default '{}',
        totp_failures timestamptz[] not null default '{}',
        locked_until timestamptz,
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`create index if not exists dashboard_lockouts_updated_idx on gateway.dashboard_lockouts (updated_at)`);

    this.addSql(`alter table gateway.dashboard_users add column if not exists activated_at timestamptz`);
    this.addSql(`update gateway.dashboard_users set activated_at = created_at where activated_at is null`);
    this.addSql(`alter table gateway.dashboard_users alter column password_hash drop not null`);
    this.addSql(`alter table gateway.dashboard_users alter column totp_secret_enc drop not null`);
    this.addSql(`
      alter table gateway.dashboard_users add constraint dashboard_users_active_has_credentials
        check (activated_at is null or (password_hash is not null and totp_secret_enc is not null))`);

    this.addSql(`
      create table if not exists gateway.dashboard_invitations (
        id uuid primary key,
        user_id uuid not null references gateway.dashboard_users (id) on delete cascade,
        token_hash text not null,
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        accepted_at timestamptz,
        used_at timestamptz,
        revoked_at timestamptz,
        constraint dashboard_invitations_token_hash_uq unique (token_hash),
        check (used_at is null or accepted_at is not null)
      )`);
    this.addSql(`create index if not exists dashboard_invitations_user_idx on gateway.dashboard_invitations (user_id)`);
  }

  override down(): void {
    this.addSql('drop table if exists gateway.dashboard_invitations');
    this.addSql('delete from gateway.dashboard_users where activated_at is null');
    this.addSql('alter table gateway.dashboard_users drop constraint if exists dashboard_users_active_has_credentials');
    this.addSql('alter table gateway.dashboard_users alter column totp_secret_enc set not null');
    this.addSql('alter table gateway.dashboard_users alter column password_hash set not null');
    this.addSql('alter table gateway.dashboard_users drop column if exists activated_at');
    this.addSql('drop table if exists gateway.dashboard_lockouts');
  }
}
