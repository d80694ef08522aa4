/**
 * A provider's daily settlement report as we read it (docs/sandbox.md "Settlement reports"): the
 * header, one record per settled movement, then `TRAILER,<lines>,<sum amount_cents>,<sum fee_cents>`.
 * What a record must hold to be a line, and what makes a report unusable (rejected, never matched).
 * No I/O here: the CSV bytes are turned into records by the adapters (csv-parse, REPORT_CSV_OPTIONS).
 */

/** The URL slugs of the four reports, one per provider. */
export const REPORT_RAILS = ['breb', 'ach', 'pse', 'breb-inbound'] as const;
export type ReportRail = (typeof REPORT_RAILS)[number];

export type Direction = 'IN' | 'OUT';
export type ProviderStatus = 'COMPLETED' | 'FAILED' | 'PAID' | 'REVERSED' | 'REFUNDED' | 'RECEIVED' | 'RETURNED';

/** The statuses each provider reports; any other is a malformed line. */
export const RAIL_STATUSES: Record<ReportRail, readonly ProviderStatus[]> = {
  breb: ['COMPLETED', 'FAILED'],
  ach: ['COMPLETED', 'FAILED'],
  // REFUNDED (OUT): a refund of all or part of a paid payment to the payer (one line per refund, our_id the refund's id).
  pse: ['PAID', 'REVERSED', 'REFUNDED', 'FAILED'],
  // RETURNED (OUT): a payment the participant returned to the payer (its second line).
  'breb-inbound': ['RECEIVED', 'RETURNED', 'FAILED'],
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

/**
 * csv-parse options for a report (RFC 4180, CRLF, quoted fields). The trailer has 4 fields, the
 * lines 10: records of varying length are allowed here and checked by `parseLine`/`parseTrailer`.
 * `max_record_size` bounds what one record may buffer (an unclosed quote cannot swallow the file).
 */
export const REPORT_CSV_OPTIONS = { relax_column_count: true, max_record_size: 64 * 1024 } as const;

/** One line of a report. Amounts are integer centavos. */
export interface ReportLine {
  /** 1-based position among the report's lines (the header is not counted). */
  lineNo: number;
  providerId: string;
  /** Our transactionId / depositId; null where the provider has none of ours (inbound payments, unidentified lines). */
  ourId: string | null;
  direction: Direction;
  amountCents: bigint;
  feeCents: bigint;
  status: ProviderStatus;
  /** YYYY-MM-DD. */
  valueDate: string;
  acceptedAt: string;
  settledAt: string;
  counterparty: string;
}

export interface Trailer {
  lines: number;
  amountCents: bigint;
  feeCents: bigint;
}

/** Why a report is rejected as a whole: it is not matched and opens no break. */
export const REJECT_REASONS = [
  'EMPTY',
  'BAD_HEADER',
  'MALFORMED_CSV',
  'MALFORMED_LINE',
  'MISSING_TRAILER',
  'CONTENT_AFTER_TRAILER',
  'TRAILER_MISMATCH',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export class ReportFormatError extends Error {
  constructor(
    readonly reason: RejectReason,
    message: string,
    readonly lineNo?: number,
  ) {
    super(message);
    this.name = 'ReportFormatError';
  }
}

const DIGITS = /^(0|[1-9][0-9]{0,18})$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
/** Ids are printable: the match keys use U+0000 and U+0001 as separators, the sort a tab. */
const CONTROL = /[\u0000-\u001f\u007f]/;
const DIRECTIONS: ReadonlySet<string> = new Set(['IN', 'OUT']);
const STATUS_SETS: Record<ReportRail, ReadonlySet<string>> = {
  breb: new Set(RAIL_STATUSES.breb),
  ach: new Set(RAIL_STATUSES.ach),
  pse: new Set(RAIL_STATUSES.pse),
  'breb-inbound': new Set(RAIL_STATUSES['breb-inbound']),
};

/** A real calendar date written YYYY-MM-DD (2025-02-30 is not). */
export function isCalendarDate(s: string): boolean {
  if (!DATE.test(s)) return false;
  const t = new Date(`${s}T00:00:00.000Z`);
  return !Number.isNaN(t.getTime()) && t.toISOString().slice(0, 10) === s;
}

export function checkHeader(record: readonly string[] | undefined): void {
  if (record === undefined) throw new ReportFormatError('EMPTY', 'the report is empty (no header)');
  if (record.length !== REPORT_COLUMNS.length || record.some((f, i) => f !== REPORT_COLUMNS[i])) {
    throw new ReportFormatError('BAD_HEADER', `unexpected header: ${record.slice(0, 12).join(',').slice(0, 200)}`);
  }
}

export function isTrailer(record: readonly string[]): boolean {
  return record[0] === 'TRAILER';
}

export function parseTrailer(record: readonly string[], lineNo: number): Trailer {
  const [, lines, amount, fee] = record;
  if (record.length !== 4 || !DIGITS.test(lines ?? '') || !DIGITS.test(amount ?? '') || !DIGITS.test(fee ?? '')) {
    throw new ReportFormatError('MALFORMED_LINE', 'the trailer is not TRAILER,<lines>,<amount_cents>,<fee_cents>', lineNo);
  }
  return { lines: Number(lines), amountCents: BigInt(amount!), feeCents: BigInt(fee!) };
}

/**
 * Checks a record as a line of `rail`'s report, every field: the provider id, direction, integer
 * amounts, a status this provider reports, the value date and the timestamps. Builds nothing (the
 * read phase keeps the record's text only; `lineOf` makes the line when it is matched).
 */
export function checkLine(rail: ReportRail, record: readonly string[], lineNo: number): void {
  const bad = (what: string) => new ReportFormatError('MALFORMED_LINE', `line ${lineNo}: ${what}`, lineNo);
  if (record.length !== REPORT_COLUMNS.length) throw bad(`${record.length} fields, ${REPORT_COLUMNS.length} expected`);
  const [providerId, ourId, direction, amount, fee, status, valueDate, acceptedAt, settledAt] = record as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (providerId === '') throw bad('provider_id is empty');
  if (CONTROL.test(providerId) || CONTROL.test(ourId)) throw bad('an id holds a control character');
  if (!DIRECTIONS.has(direction)) throw bad(`direction ${JSON.stringify(direction)}`);
  if (!DIGITS.test(amount)) throw bad(`amount_cents ${JSON.stringify(amount)}`);
  if (fee !== '0' && !DIGITS.test(fee)) throw bad(`fee_cents ${JSON.stringify(fee)}`);
  if (!STATUS_SETS[rail].has(status)) throw bad(`status ${JSON.stringify(status)} is not one ${rail} reports`);
  if (!validDates.has(valueDate)) {
    if (!isCalendarDate(valueDate)) throw bad(`value_date ${JSON.stringify(valueDate)}`);
    if (validDates.size > 1000) validDates.clear();
    validDates.add(valueDate);
  }
  if (!INSTANT.test(acceptedAt)) throw bad(`accepted_at ${JSON.stringify(acceptedAt)}`);
  if (!INSTANT.test(settledAt)) throw bad(`settled_at ${JSON.stringify(settledAt)}`);
}

/** A report's lines carry a handful of value dates: each is checked once. */
const validDates = new Set<string>();

/** A checked record (`checkLine`) as a line. */
export function lineOf(record: readonly string[], lineNo: number): ReportLine {
  const [providerId, ourId, direction, amount, fee, status, valueDate, acceptedAt, settledAt, counterparty] = record as [
    string,
    string,
    Direction,
    string,
    string,
    ProviderStatus,
    string,
    string,
    string,
    string,
  ];
  return {
    lineNo,
    providerId,
    ourId: ourId === '' ? null : ourId,
    direction,
    amountCents: BigInt(amount),
    feeCents: fee === '0' ? 0n : BigInt(fee),
    status,
    valueDate,
    acceptedAt,
    settledAt,
    counterparty,
  };
}

/** `checkLine` then `lineOf`. */
export function parseLine(rail: ReportRail, record: readonly string[], lineNo: number): ReportLine {
  checkLine(rail, record, lineNo);
  return lineOf(record, lineNo);
}

/** Running control totals of the lines read, to check against the trailer. */
export class TrailerTotals {
  lines = 0;
  amountCents = 0n;
  feeCents = 0n;

  /** A checked record's amount_cents and fee_cents (digit strings). */
  add(amountCents: string, feeCents: string): void {
    this.lines += 1;
    this.amountCents += BigInt(amountCents);
    if (feeCents !== '0') this.feeCents += BigInt(feeCents);
  }

  /** Throws TRAILER_MISMATCH naming each figure that differs. */
  verify(stated: Trailer): void {
    const diffs: string[] = [];
    if (stated.lines !== this.lines) diffs.push(`lines ${stated.lines} stated, ${this.lines} read`);
    if (stated.amountCents !== this.amountCents) diffs.push(`amount_cents ${stated.amountCents} stated, ${this.amountCents} read`);
    if (stated.feeCents !== this.feeCents) diffs.push(`fee_cents ${stated.feeCents} stated, ${this.feeCents} read`);
    if (diffs.length) throw new ReportFormatError('TRAILER_MISMATCH', `the trailer does not add up: ${diffs.join('; ')}`);
  }

  get totals(): Trailer {
    return { lines: this.lines, amountCents: this.amountCents, feeCents: this.feeCents };
  }
}

// ---- Dates (Bogotá is UTC-5 all year: no daylight saving since 1993) -------------------------

const BOGOTA_OFFSET_MS = 5 * 3600_000;

const DAY_MS = 86_400_000;
let lastDay = Number.NaN;
let lastDate = '';

/** The Bogotá calendar date of an instant (ISO-8601). Memoized on the day: a report's instants share a few. */
export function bogotaDate(instant: string | Date): string {
  const t = typeof instant === 'string' ? Date.parse(instant) : instant.getTime();
  if (Number.isNaN(t)) throw new RangeError(`not an instant: ${String(instant)}`);
  const day = Math.floor((t - BOGOTA_OFFSET_MS) / DAY_MS);
  if (day !== lastDay) {
    lastDate = new Date(day * DAY_MS).toISOString().slice(0, 10);
    lastDay = day;
  }
  return lastDate;
}
