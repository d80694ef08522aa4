import { Migration } from '@mikro-orm/migrations';

/** Companies (tenants) and their API keys. Keys are stored only as HMAC-SHA256(pepper, key). */
export class Migration0001CompaniesAndApiKeys extends Migration {
  override name = '0001-companies-and-api-keys';

  override up(): void {
    this.addSql(`
      create table if not exists gateway.companies (
        id uuid primary key,
        name text not null,
        nit text not null,
        tax_regime text not null check (tax_regime in ('COMMON', 'SIMPLE')),
        status text not null default 'ACTIVE' check (status in ('ACTIVE', 'SUSPENDED')),
        multi_sig_threshold integer not null default 0 check (multi_sig_threshold >= 0),
        counterparty_daily_limit_cents bigint not null default 5000000000 check (counterparty_daily_limit_cents >= 0),
        counterparty_monthly_limit_cents bigint not null default 50000000000 check (counterparty_monthly_limit_cents >= 0),
        rate_limit_multiplier numeric(12, 2) not null default 1 check (rate_limit_multiplier > 0),
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`create index if not exists companies_nit_idx on gateway.companies (nit)`);
    this.addSql(`
      create table if not exists gateway.api_keys (
        id uuid primary key,
        company_id uuid not null references gateway.companies (id) on delete cascade,
        key_hash text not null,
        prefix text not null,
        scope text not null check (scope in ('READ', 'WRITE')),
        label text not null,
        created_at timestamptz not null default now(),
        last_used_at timestamptz,
        revoked_at timestamptz,
        constraint api_keys_key_hash_uq unique (key_hash)
      )`);
    this.addSql(`create index if not exists api_keys_company_idx on gateway.api_keys (company_id, created_at, id)`);
  }

  override down(): void {
    this.addSql('drop table if exists gateway.api_keys');
    this.addSql('drop table if exists gateway.companies');
  }
}
