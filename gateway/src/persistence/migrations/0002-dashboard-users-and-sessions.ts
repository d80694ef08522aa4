import { Migration } from '@mikro-orm/migrations';

/**
 * Dashboard users (CONTRACT §4/§5) and their sessions. Passwords are argon2id hashes; the TOTP
 * secret is kept encrypted (AES-256-GCM) because the gateway must compute codes from it;
 * `totp_last_step` makes every accepted code single-use. Session tokens are stored only as
 * HMAC-SHA256(pepper, token).
 */
export class Migration0002DashboardUsersAndSessions extends Migration {
  override name = '0002-dashboard-users-and-sessions';

  override up(): void {
    this.addSql(`
      create table if not exists gateway.dashboard_users (
        id uuid primary key,
        company_id uuid not null references gateway.companies (id) on delete cascade,
        email text not null,
        password_hash text not null,
        role text not null check (role in ('ADMIN', 'OPERATOR', 'VIEWER')),
        totp_secret_enc text not null,
        totp_last_step bigint,
        created_at timestamptz not null default now(),
        disabled_at timestamptz,
        constraint dashboard_users_email_uq unique (email)
      )`);
    this.addSql(`create index if not exists dashboard_users_company_idx on gateway.dashboard_users (company_id, created_at, id)`);
    this.addSql(`
      create table if not exists gateway.dashboard_sessions (
        id uuid primary key,
        token_hash text not null,
        user_id uuid not null references gateway.dashboard_users (id) on delete cascade,
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        revoked_at timestamptz,
        constraint dashboard_sessions_token_hash_uq unique (token_hash)
      )`);
    this.addSql(`create index if not exists dashboard_sessions_user_idx on gateway.dashboard_sessions (user_id)`);
    this.addSql(`create index if not exists dashboard_sessions_expiry_idx on gateway.dashboard_sessions (expires_at)`);
  }

  override down(): void {
    this.addSql('drop table if exists gateway.dashboard_sessions');
    this.addSql('drop table if exists gateway.dashboard_users');
  }
}
