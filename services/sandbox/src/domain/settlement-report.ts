/**
 * The providers' daily settlement reports (docs/sandbox.md "Settlement reports"): what a line
 * is, which report a movement belongs to (its value date, Bogotá time) and how injected
 * discrepancies reshape the lines as served. No I/O here.
 */

/** The URL slugs of the four reports, one per simulated provider. */
export const REPORT_RAILS = ['breb', 'ach', 'pse', 'breb-inbound'] as const;
export type ReportRail = (typeof REPORT_RAILS)[number];

export type Direction = 'IN' | 'OUT';
export type LineStatus = 'COMPLETED' | 'FAILED' | 'PAID' | 'REVERSED' | 'REFUNDED' | 'RECEIVED' | 'RETURNED';

/** The statuses each report may carry (a `status` discrepancy picks one of these too). */
export const RAIL_STATUSES: Record<ReportRail, readonly LineStatus[]> = {
  breb: ['COMPLETED', 'FAILED'],
  ach: ['COMPLETED', 'FAILED'],
  // REFUNDED (OUT): the product refunded all or part of a paid payment to the payer (one line per refund, on its own day).
  pse: ['PAID', 'REVERSED', 'REFUNDED', 'FAILED'],
  // A network never reports a failed inbound credit on its own; FAILED exists for a `status` break.
  // RETURNED (OUT): the participant returned all or part of the payment to the payer (one line per return, on its own day).
  'breb-inbound': ['RECEIVED', 'RETURNED', 'FAILED'],
};

/** Defaults of an injected `extra` line: what the provider would normally report. */
export const EXTRA_DEFAULTS: Record<ReportRail, { direction: Direction; status: LineStatus; prefix: string }> = {
  breb: { direction: 'OUT', status: 'COMPLETED', prefix: 'brb_' },
  ach: { direction: 'OUT', status: 'COMPLETED', prefix: 'ach_' },
  pse: { direction: 'IN', status: 'PAID', prefix: 'pse_' },
  'breb-inbound': { direction: 'IN', status: 'RECEIVED', prefix: 'brb_in_' },
};

/** The header row, in order. */
export const REPORT_COLUMNS = [
  'provider_id',
  'our_id',
  'direction',
  'amount_cents',
  'fee_cents',
  'status',
  'value_date',
  'accepted_at',
  'settled_at',
  'counterparty',
] as const;

/** One line of a report. Amounts are integer centavos; timestamps ISO-8601 UTC with milliseconds. */
export interface ReportLine {
  providerId: string;
  /** Our transactionId / depositId, or a return's returnId (breb-inbound RETURNED) or refundId (pse REFUNDED); null where the provider has none of ours (an inbound payment, an injected extra). */
  ourId: string | null;
  direction: Direction;
  amountCents: bigint;
  /** The provider's own fee: the simulators charge none, so 0 unless a discrepancy says otherwise. */
  feeCents: bigint;
  status: LineStatus;
  /** YYYY-MM-DD: the report the line is served in. */
  valueDate: string;
  /** When the provider accepted the movement (transfer or link created, payment received). */
  acceptedAt: string;
  /** The event the line reports (outcome, payment, reversal, reception); its Bogotá date is the value date. */
  settledAt: string;
  counterparty: string;
}

export const DISCREPANCY_KINDS = ['missing', 'extra', 'amount', 'status', 'duplicate', 'late_value_date', 'trailer'] as const;
export type DiscrepancyKind = (typeof DISCREPANCY_KINDS)[number];

/** Kinds that act on existing lines, chosen by `ref` (and `lineStatus` when given). */
export type LineDiscrepancy =
  | { kind: 'missing'; ref: string; lineStatus?: LineStatus }
  | { kind: 'amount'; ref: string; lineStatus?: LineStatus; amountCents?: bigint; feeCents?: bigint }
  | { kind: 'status'; ref: string; lineStatus?: LineStatus; status: LineStatus }
  | { kind: 'duplicate'; ref: string; lineStatus?: LineStatus }
  | { kind: 'late_value_date'; ref: string; lineStatus?: LineStatus };

export interface ExtraDiscrepancy {
  kind: 'extra';
  /** Made when injected, so every rendering serves the same line. */
  providerId: string;
  direction: Direction;
  amountCents: bigint;
  feeCents: bigint;
  status: LineStatus;
  counterparty: string;
}

/** Overrides what the trailer states (each omitted figure stays the computed one). */
export interface TrailerDiscrepancy {
  kind: 'trailer';
  lines?: number;
  amountCents?: bigint;
  feeCents?: bigint;
}

export type DiscrepancySpec = LineDiscrepancy | ExtraDiscrepancy | TrailerDiscrepancy;
export type Discrepancy = DiscrepancySpec & { id: string; rail: ReportRail; date: string; createdAt: string };

// ---- Dates (Bogotá is UTC-5 all year: no daylight saving since 1993) -------------------------

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const BOGOTA_OFFSET_MS = 5 * 3600_000;

/** A real calendar date written YYYY-MM-DD (2025-02-30 is not). */
export function isReportDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(Date.UTC(y, mo - 1, d));
  return y >= 1970 && t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/** The instants [from, to) of a Bogotá calendar day, as ISO-8601 UTC. */
export function bogotaDayRange(date: string): { from: string; to: string } {
  const start = Date.parse(`${date}T00:00:00.000Z`) + BOGOTA_OFFSET_MS;
  return { from: new Date(start).toISOString(), to: new Date(start + 86_400_000).toISOString() };
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00.000Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

// ---- Discrepancies ---------------------------------------------------------------------------

function matches(line: ReportLine, d: LineDiscrepancy): boolean {
  return (line.providerId === d.ref || line.ourId === d.ref) && (d.lineStatus === undefined || line.status === d.lineStatus);
}

/** The refs a report's `late_value_date` discrepancies move out of it (into the next day's report). */
export function lateRefs(discrepancies: readonly Discrepancy[]): string[] {
  return [...new Set(discrepancies.flatMap((d) => (d.kind === 'late_value_date' ? [d.ref] : [])))];
}

/**
 * What one of the provider's own lines becomes in the served reports, after its day's
 * discrepancies, in injection order: `missing` drops it; `amount` and `status` change it;
 * `duplicate` serves it once more; `late_value_date` moves it (and its copies) to the next day's
 * report with that value date. Returns the lines served in the line's own report (`today`) and
 * those served in the next day's (`nextDay`).
 */
export function applyToLine(line: ReportLine, discrepancies: readonly Discrepancy[]): { today: ReportLine[]; nextDay: ReportLine[] } {
  let current = line;
  let copies = 1;
  let late = false;
  for (const d of discrepancies) {
    if (d.kind === 'extra' || d.kind === 'trailer' || !matches(line, d)) continue;
    switch (d.kind) {
      case 'missing':
        return { today: [], nextDay: [] };
      case 'amount':
        current = {
          ...current,
          ...(d.amountCents !== undefined ? { amountCents: d.amountCents } : {}),
          ...(d.feeCents !== undefined ? { feeCents: d.feeCents } : {}),
        };
        break;
      case 'status':
        current = { ...current, status: d.status };
        break;
      case 'duplicate':
        copies += 1;
        break;
      case 'late_value_date':
        late = true;
        break;
    }
  }
  if (late) current = { ...current, valueDate: addDays(line.valueDate, 1) };
  const served = Array.from({ length: copies }, () => current);
  return late ? { today: [], nextDay: served } : { today: served, nextDay: [] };
}

/** The lines the report's `extra` discrepancies add, in injection order (12:00 Bogotá on the report date). */
export function extraLines(date: string, discrepancies: readonly Discrepancy[]): ReportLine[] {
  const noon = new Date(Date.parse(`${date}T12:00:00.000Z`) + BOGOTA_OFFSET_MS).toISOString();
  return discrepancies.flatMap((d) =>
    d.kind !== 'extra'
      ? []
      : [
          {
            providerId: d.providerId,
            ourId: null,
            direction: d.direction,
            amountCents: d.amountCents,
            feeCents: d.feeCents,
            status: d.status,
            valueDate: date,
            acceptedAt: noon,
            settledAt: noon,
            counterparty: d.counterparty,
          },
        ],
  );
}

export interface Trailer {
  lines: number;
  amountCents: bigint;
  feeCents: bigint;
}

/** Running totals of the lines as served; `stated` applies a `trailer` discrepancy (the last one wins per figure). */
export class TrailerTotals implements Trailer {
  lines = 0;
  amountCents = 0n;
  feeCents = 0n;

  add(line: ReportLine): void {
    this.lines += 1;
    this.amountCents += line.amountCents;
    this.feeCents += line.feeCents;
  }

  stated(discrepancies: readonly Discrepancy[]): Trailer {
    const t: Trailer = { lines: this.lines, amountCents: this.amountCents, feeCents: this.feeCents };
    for (const d of discrepancies) {
      if (d.kind !== 'trailer') continue;
      if (d.lines !== undefined) t.lines = d.lines;
      if (d.amountCents !== undefined) t.amountCents = d.amountCents;
      if (d.feeCents !== undefined) t.feeCents = d.feeCents;
    }
    return t;
  }
}

/** A line as CSV fields, in REPORT_COLUMNS order. */
export function lineRecord(l: ReportLine): string[] {
  return [
    l.providerId,
    l.ourId ?? '',
    l.direction,
    l.amountCents.toString(),
    l.feeCents.toString(),
    l.status,
    l.valueDate,
    l.acceptedAt,
    l.settledAt,
    l.counterparty,
  ];
}

/** `TRAILER,<lines>,<total amount_cents>,<total fee_cents>`. */
export function trailerRecord(t: Trailer): string[] {
  return ['TRAILER', String(t.lines), t.amountCents.toString(), t.feeCents.toString()];
}
