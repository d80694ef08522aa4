import { Migration } from '@mikro-orm/migrations';
import { outboxInboxDdl } from '@wallet/platform';

/**
 * The reconciliation as a service (docs/reconciliation.md "The reconciliation service"): runs gain who and what started them, a status that is
 * RUNNING while under way (one RUNNING run per (rail, date), across replicas: a unique partial
 * index) and the report's and our records' effect on the rail's clearing account; breaks gain their
 * resolution, their money exception and their difference in centavos; the outbox of the
 * reconciliation's events. The money exceptions' rail becomes the contract's BREB | ACH | PSE.
 */
export class Migration0002ReconciliationService extends Migration {
  override name = '0002-reconciliation-service';

  override up(): void {
    this.addSql(`alter table reconciliation.runs
      add column trigger text not null default 'ON_DEMAND' check (trigger in ('SCHEDULE', 'ON_DEMAND', 'RERUN')),
      add column requested_by text not null default 'admin',
      add column status text,
      add column heartbeat_at timestamptz not null default now(),
      add column report_net_cents bigint,
      add column ours_net_cents bigint`);
    // A run without an outcome was left by a process that died (0001 had no RUNNING state).
    this.addSql(`update reconciliation.runs set status = coalesce(outcome, 'FAILED'),
      outcome = coalesce(outcome, 'FAILED'), finished_at = coalesce(finished_at, now()),
      detail = case when outcome is null then 'interrupted' else detail end`);
    this.addSql(`alter table reconciliation.runs alter column status set not null, alter column status set default 'RUNNING',
      add constraint runs_status_ck check (status in ('RUNNING', 'RECONCILED', 'REJECTED', 'FAILED'))`);
    this.addSql(`create unique index runs_one_running_uq on reconciliation.runs (rail, date) where status = 'RUNNING'`);
    this.addSql('create index runs_listing_idx on reconciliation.runs (started_at desc, id desc)');

    this.addSql(`alter table reconciliation.breaks
      add column resolved_at timestamptz,
      add column resolution text check (resolution in ('accept_provider', 'explain', 'rerun', 'superseded')),
      add column exception_id text,
      add column difference_cents bigint not null default 0`);
    this.addSql(`update reconciliation.breaks b set exception_id = e.id from reconciliation.money_exceptions e
      where e.resource_id = b.break_key and e.kind = upper(b.kind)`);
    this.addSql('create index breaks_listing_idx on reconciliation.breaks (opened_at desc, break_key desc)');
    this.addSql('create index breaks_last_seen_idx on reconciliation.breaks (last_seen_run_id)');
    this.addSql(`create index breaks_open_our_id_idx on reconciliation.breaks (rail, our_id) where status = 'OPEN' and kind = 'missing_at_provider'`);

    // The contract's rails of a money exception: BREB | ACH | PSE (breb-inbound is Bre-B).
    this.addSql(`update reconciliation.money_exceptions set rail = case rail when 'breb' then 'BREB' when 'ach' then 'ACH'
      when 'pse' then 'PSE' when 'breb-inbound' then 'BREB' else rail end`);

    // The scheduled day of a rail is claimed by one replica (its retries included); a claim whose
    // holder stopped beating for the stale time can be taken over.
    this.addSql(`
      create table reconciliation.schedule_claims (
        rail text not null,
        date date not null,
        claimed_by text not null,
        claimed_at timestamptz not null default now(),
        heartbeat_at timestamptz not null default now(),
        done_at timestamptz,
        primary key (rail, date)
      )`);
    for (const sql of outboxInboxDdl('reconciliation')) this.addSql(sql);
  }
}
