import { Migration } from '@mikro-orm/migrations';

/**
 * The discrepancies injected into the providers' daily settlement reports (applied when a
 * report is rendered), and the indexes that let a report read one Bogotá day of settled
 * movements in order.
 */
export class Migration0004SandboxSettlementReports extends Migration {
  override name = '0004-sandbox-settlement-reports';

  override up(): void {
    // `spec` holds the kind's fields (amounts as strings: bigint centavos); `seq` is the order
    // of injection, which is the order they are applied in.
    this.addSql(`
      create table sandbox.report_discrepancies (
        id text primary key,
        seq bigserial not null,
        rail text not null check (rail in ('breb', 'ach', 'pse', 'breb-inbound')),
        report_date date not null,
        kind text not null check (kind in ('missing', 'extra', 'amount', 'status', 'duplicate', 'late_value_date', 'trailer')),
        ref text,
        spec jsonb not null,
        created_at timestamptz not null default clock_timestamp(),
        constraint report_discrepancies_ref_ck check ((ref is null) = (kind in ('extra', 'trailer')))
      )`);
    this.addSql(`create index report_discrepancies_report_idx on sandbox.report_discrepancies (rail, report_date, seq)`);

    this.addSql(`create index transfers_settled_idx on sandbox.transfers (rail, outcome_at, provider_transfer_id) where outcome_at is not null`);
    this.addSql(`create index pse_links_paid_idx on sandbox.pse_links (paid_at) where paid_at is not null`);
    this.addSql(`create index pse_links_failed_idx on sandbox.pse_links (outcome_at) where status = 'FAILED'`);
    this.addSql(`create index pse_links_reversed_idx on sandbox.pse_links (reversed_at) where reversed_at is not null`);
    this.addSql(`create index breb_incoming_received_idx on sandbox.breb_incoming (received_at, provider_transfer_id)`);
  }
}
