import type { Database, PreparedTx } from '@wallet/platform';
import { type Direction, type Discrepancy, type DiscrepancySpec, type LineStatus, type ReportLine, type ReportRail } from '../domain/settlement-report.js';
import type { ReportBook, ReportSnapshot } from '../app/ports.js';

/**
 * The settlement reports' SQL: one Bogotá day of settled movements per provider, read through a
 * server-side cursor in batches (a report of a million lines never sits in memory), and the
 * injected discrepancies.
 */

/** One day of movements as the provider's records have them (before discrepancies). */
interface RawLine {
  provider_id: string;
  our_id: string | null;
  direction: Direction;
  amount_cents: string;
  status: LineStatus;
  accepted_at: string;
  settled_at: string;
  counterparty: string;
}

const iso = (expr: string) => `to_char(${expr} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The movements a provider settled in [$1, $2), one row per line, with `settled` (the event's
 * timestamptz) to order by. A PSE link paid then reversed gives two lines, each on its own date; a
 * paid link's refunds one REFUNDED line each, on the day of the refund, the refund id as `our_id`. An
 * inbound Bre-B payment gives its RECEIVED line (no id of ours) and one RETURNED line per return to the
 * payer (all or part of it), each on the day of the return with the participant's return id as `our_id`.
 * No full account number leaves the query: ACH shows the bank code and the last four digits.
 */
const LINES: Record<ReportRail, string> = {
  breb: `
    select provider_transfer_id as provider_id, transaction_id as our_id, 'OUT' as direction, amount_cents, status,
           created_at as accepted, outcome_at as settled, request->>'keyValue' as counterparty
      from sandbox.transfers where rail = 'BREB' and outcome_at >= $1::timestamptz and outcome_at < $2::timestamptz`,
  ach: `
    select provider_transfer_id as provider_id, transaction_id as our_id, 'OUT' as direction, amount_cents, status,
           created_at as accepted, outcome_at as settled,
           (request->>'bankCode') || ' ****' || right(request->>'accountNumber', 4) as counterparty
      from sandbox.transfers where rail = 'ACH' and outcome_at >= $1::timestamptz and outcome_at < $2::timestamptz`,
  pse: `
    select provider_transfer_id as provider_id, deposit_id as our_id, 'IN' as direction, amount_cents, 'PAID' as status,
           created_at as accepted, paid_at as settled, payer_name as counterparty
      from sandbox.pse_links where paid_at >= $1::timestamptz and paid_at < $2::timestamptz
    union all
    select provider_transfer_id, deposit_id, 'OUT', amount_cents, 'REVERSED', created_at, reversed_at, payer_name
      from sandbox.pse_links where reversed_at >= $1::timestamptz and reversed_at < $2::timestamptz
    union all
    select provider_transfer_id, deposit_id, 'IN', amount_cents, 'FAILED', created_at, outcome_at, payer_name
      from sandbox.pse_links where status = 'FAILED' and outcome_at >= $1::timestamptz and outcome_at < $2::timestamptz
    union all
    select l.provider_transfer_id, r.refund_id, 'OUT', r.amount_cents, 'REFUNDED', l.created_at, r.refunded_at, l.payer_name
      from sandbox.pse_refunds r join sandbox.pse_links l on l.deposit_id = r.deposit_id
     where r.refunded_at >= $1::timestamptz and r.refunded_at < $2::timestamptz`,
  'breb-inbound': `
    select provider_transfer_id as provider_id, null::text as our_id, 'IN' as direction, amount_cents, 'RECEIVED' as status,
           received_at as accepted, received_at as settled, payer_name as counterparty
      from sandbox.breb_incoming where received_at >= $1::timestamptz and received_at < $2::timestamptz
    union all
    select r.provider_transfer_id, r.return_id, 'OUT', r.amount_cents, 'RETURNED', i.received_at, r.returned_at, i.payer_name
      from sandbox.breb_returns r join sandbox.breb_incoming i on i.provider_transfer_id = r.provider_transfer_id
     where r.returned_at >= $1::timestamptz and r.returned_at < $2::timestamptz`,
};

function linesSql(rail: ReportRail, where = ''): string {
  return `select provider_id, our_id, direction, amount_cents::text as amount_cents, status,
                 ${iso('accepted')} as accepted_at, ${iso('settled')} as settled_at, counterparty
            from (${LINES[rail]}) l ${where}
           order by l.settled, l.provider_id, l.status, l.our_id`;
}

function toLine(r: RawLine, valueDate: string): ReportLine {
  return {
    providerId: r.provider_id,
    ourId: r.our_id,
    direction: r.direction,
    amountCents: BigInt(r.amount_cents),
    feeCents: 0n,
    status: r.status,
    valueDate,
    acceptedAt: r.accepted_at,
    settledAt: r.settled_at,
    counterparty: r.counterparty ?? '',
  };
}

interface RawDiscrepancy {
  id: string;
  rail: ReportRail;
  report_date: string;
  kind: Discrepancy['kind'];
  ref: string | null;
  spec: Record<string, unknown> | string;
  created_at: string;
}

const DISCREPANCY_COLS = `id, rail, to_char(report_date, 'YYYY-MM-DD') as report_date, kind, ref, spec, ${iso('created_at')} as created_at`;

/** Bigint fields are kept as strings in `spec` (jsonb numbers would lose precision past 2^53). */
const BIGINT_FIELDS = ['amountCents', 'feeCents'] as const;

function toDiscrepancy(r: RawDiscrepancy): Discrepancy {
  const spec = { ...(typeof r.spec === 'string' ? (JSON.parse(r.spec) as Record<string, unknown>) : r.spec) };
  for (const f of BIGINT_FIELDS) if (typeof spec[f] === 'string') spec[f] = BigInt(spec[f]);
  return {
    ...(spec as unknown as DiscrepancySpec),
    ...(r.ref !== null ? { ref: r.ref } : {}),
    kind: r.kind,
    id: r.id,
    rail: r.rail,
    date: r.report_date,
    createdAt: r.created_at,
  } as Discrepancy;
}

function specJson(spec: DiscrepancySpec): string {
  const { kind: _kind, ...rest } = spec as DiscrepancySpec & { ref?: string };
  delete rest.ref;
  return JSON.stringify(rest, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

export class ReportStore implements ReportBook {
  constructor(private readonly db: Database) {}

  /**
   * Runs `fn` in one read-only repeatable-read transaction on its own connection, held until
   * `fn` settles (the whole download of a report).
   */
  async snapshot<T>(fn: (s: ReportSnapshot) => Promise<T>): Promise<T> {
    return this.db.preparedTx(async (tx) => {
      await tx.simple('set transaction isolation level repeatable read, read only');
      return fn(snapshotOf(tx));
    });
  }

  async insertDiscrepancy(id: string, rail: ReportRail, date: string, spec: DiscrepancySpec): Promise<Discrepancy> {
    const ref = 'ref' in spec ? spec.ref : null;
    const [r] = await this.db.prepared<RawDiscrepancy>(
      `insert into sandbox.report_discrepancies (id, rail, report_date, kind, ref, spec)
       values ($1, $2, $3::date, $4, $5, $6::jsonb) returning ${DISCREPANCY_COLS}`,
      [id, rail, date, spec.kind, ref, specJson(spec)],
    );
    if (!r) throw new Error('discrepancy insert returned nothing');
    return toDiscrepancy(r);
  }

  async discrepancies(rail: ReportRail, date: string): Promise<Discrepancy[]> {
    const rows = await this.db.prepared<RawDiscrepancy>(
      `select ${DISCREPANCY_COLS} from sandbox.report_discrepancies where rail = $1 and report_date = $2::date order by seq`,
      [rail, date],
    );
    return rows.map(toDiscrepancy);
  }

  /** Deletes the report's discrepancies (or just `id`); returns how many were deleted. */
  async deleteDiscrepancies(rail: ReportRail, date: string, id?: string): Promise<number> {
    const rows = await this.db.prepared<{ id: string }>(
      `delete from sandbox.report_discrepancies where rail = $1 and report_date = $2::date and ($3::text is null or id = $3) returning id`,
      [rail, date, id ?? null],
    );
    return rows.length;
  }

  /** Whether the day's report (as the provider's records have it) has a line with this provider id or our id (and status). */
  async hasLine(rail: ReportRail, range: { from: string; to: string }, ref: string, status?: LineStatus): Promise<boolean> {
    const rows = await this.db.prepared<{ one: number }>(
      `select 1 as one from (${LINES[rail]}) l where (l.provider_id = $3 or l.our_id = $3) and ($4::text is null or l.status = $4) limit 1`,
      [range.from, range.to, ref, status ?? null],
    );
    return rows.length > 0;
  }
}

function snapshotOf(tx: PreparedTx): ReportSnapshot {
  return {
    async today() {
      const [r] = await tx.query<{ today: string }>(`select to_char(clock_timestamp() at time zone 'America/Bogota', 'YYYY-MM-DD') as today`);
      return r!.today;
    },
    async discrepancies(rail, date) {
      const rows = await tx.query<RawDiscrepancy>(
        `select ${DISCREPANCY_COLS} from sandbox.report_discrepancies where rail = $1 and report_date = $2::date order by seq`,
        [rail, date],
      );
      return rows.map(toDiscrepancy);
    },
    async linesWithRefs(rail, date, range, refs) {
      if (refs.length === 0) return [];
      const rows = await tx.query<RawLine>(linesSql(rail, 'where l.provider_id = any($3::text[]) or l.our_id = any($3::text[])'), [range.from, range.to, refs]);
      return rows.map((r) => toLine(r, date));
    },
    async streamLines(rail, date, range, batchSize, onBatch) {
      // The cursor closes with the transaction; its name is per connection, one rendering at a time.
      await tx.query(`declare report_lines no scroll cursor for ${linesSql(rail)}`, [range.from, range.to]);
      const fetch = `fetch forward ${Math.trunc(batchSize)} from report_lines`;
      for (;;) {
        const rows = await tx.query<RawLine>(fetch);
        if (rows.length > 0) await onBatch(rows.map((r) => toLine(r, date)));
        if (rows.length < batchSize) break;
      }
    },
  };
}
