import { Migration } from '@mikro-orm/migrations';
import { moneyExceptionsDdl } from '@wallet/platform';

/**
 * The reconciliation's own storage: one row per run of (rail, date), one row per break (its
 * deterministic key is the primary key, so a re-run never opens it twice) and the platform's
 * money-exceptions table, where each new break opens one exception for an operator.
 */
export class Migration0001ReconciliationInitial extends Migration {
  override name = '0001-reconciliation-initial';

  override up(): void {
    this.addSql(`
      create table reconciliation.runs (
        id text primary key,
        rail text not null,
        date date not null,
        started_at timestamptz not null default now(),
        finished_at timestamptz,
        outcome text check (outcome in ('RECONCILED', 'REJECTED', 'FAILED')),
        reject_reason text,
        detail text,
        report_lines bigint,
        report_amount_cents bigint,
        report_fee_cents bigint,
        ours_count bigint,
        ours_amount_cents bigint,
        matched_count bigint,
        matched_amount_cents bigint,
        breaks_total integer,
        breaks_opened integer,
        breaks_by_kind jsonb
      )`);
    this.addSql('create index runs_rail_date_idx on reconciliation.runs (rail, date, started_at desc)');
    this.addSql(`
      create table reconciliation.breaks (
        break_key text primary key,
        run_id text not null,
        last_seen_run_id text not null,
        kind text not null,
        rail text not null,
        date date not null,
        our_id text,
        provider_id text,
        ours jsonb,
        theirs jsonb,
        opened_at timestamptz not null default now(),
        status text not null default 'OPEN' check (status in ('OPEN', 'RESOLVED'))
      )`);
    this.addSql("create index breaks_open_idx on reconciliation.breaks (rail, date) where status = 'OPEN'");
    for (const sql of moneyExceptionsDdl('reconciliation')) this.addSql(sql);
  }
}
