import { Migration } from '@mikro-orm/migrations';

/**
 * Balance alerts (docs/balance-alerts.md): per wallet, its thresholds and its alert state, and the
 * append-only history of crossings. The evaluator (app/balance-alert-evaluator.ts) reads a wallet's
 * `version` against `evaluated_version`, so the posting statement is untouched: no trigger, no
 * column on ledger.wallets. No foreign key to ledger.wallets (an alert may be set before a wallet
 * is opened; it is evaluated once the wallet exists).
 */
export class Migration0012BalanceAlerts extends Migration {
  override name = '0012-balance-alerts';

  override up(): void {
    this.addSql(`
      create table if not exists ledger.balance_alerts (
        company_id text not null,
        rail text not null check (rail in ('BREB', 'ACH')),
        low_cents bigint not null check (low_cents >= 0),
        high_cents bigint check (high_cents > low_cents + hysteresis_cents),
        hysteresis_cents bigint not null default 0 check (hysteresis_cents >= 0),
        state text not null default 'NORMAL' check (state in ('NORMAL', 'LOW', 'HIGH')),
        -- the wallet version last evaluated (-1: not yet, or the settings changed since)
        evaluated_version bigint not null default -1,
        updated_at timestamptz not null default now(),
        primary key (company_id, rail),
        check (low_cents > 0 or high_cents is not null)
      )`);
    this.addSql(`
      create table if not exists ledger.balance_alert_events (
        id uuid primary key,
        company_id text not null,
        rail text not null check (rail in ('BREB', 'ACH')),
        kind text not null check (kind in ('LOW', 'RECOVERED', 'HIGH', 'NORMAL')),
        state text not null check (state in ('NORMAL', 'LOW', 'HIGH')),
        available_cents bigint not null,
        threshold_cents bigint not null,
        low_cents bigint not null,
        high_cents bigint,
        hysteresis_cents bigint not null,
        wallet_version bigint not null,
        occurred_at timestamptz not null default clock_timestamp()
      )`);
    this.addSql('create index if not exists balance_alert_events_company_idx on ledger.balance_alert_events (company_id, occurred_at desc, id desc)');
  }

  override down(): void {
    this.addSql('drop table if exists ledger.balance_alert_events');
    this.addSql('drop table if exists ledger.balance_alerts');
  }
}
