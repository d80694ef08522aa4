/**
 * The match rules: which of our records a provider line is about (the key), what the provider
 * should report for each of our statuses, and what a pair, or a line or record without its other
 * half, is (a match or a break of some kind). No I/O here.
 */
import { bogotaDate, type Direction, type ProviderStatus, type ReportLine, type ReportRail } from './report.js';

/**
 * One settlement of ours, as the owning service reports it (transfer for breb/ach, pse-deposit
 * for pse, collect-key for breb-inbound): one record per line we expect in the provider's report.
 * A PSE deposit paid and then reversed is two records, its payment and its reversal, each on the
 * day it happened; each refund of all or part of it to the payer is a record of its own (OUT, our id
 * the refund's return id `ret_…`). An inbound Bre-B payment is its payment (IN) and one record per
 * return of all or part of it to the payer (OUT), each on the day it happened.
 */
export interface OurRecord {
  /**
   * transactionId (breb, ach), depositId (pse, breb-inbound's payment leg); on a pse refund the
   * return's id (`ret_…`), which the provider echoes as the REFUNDED line's our_id. On breb-inbound's return
   * legs (OUT) the return's id (`ret_…`; the deposit id for the one full return of a held payment),
   * which the network echoes as the line's our_id: the settlements contract's `our_id` carries it.
   */
  ourId: string;
  /** The provider's id as we recorded it (required for breb-inbound, the key there). */
  providerId: string | null;
  status: OurStatus;
  amountCents: bigint;
  /** The provider's own fee we expect on the line: none of our providers charges one per line, so 0 when omitted. */
  providerFeeCents?: bigint;
  /**
   * When our books settled the event (ISO-8601): its Bogotá date must be the line's value date.
   * Null only for a PENDING record (which `OurRecords.find` may return, `settled` never).
   */
  settledAt: string | null;
  companyId?: string;
  /** IN or OUT (a pse record's leg); the engine reads the leg from its status. */
  direction?: string;
  /** Not matched on: the owner's money exception still open about it, and a money step it still owes. */
  openExceptionId?: string;
  stepOwed?: boolean;
  /** Not matched on: the trace context stored with the owner's saga (a break's span links to it). */
  traceparent?: string;
}

/**
 * Our statuses that reach a report: a transfer's outcome from the rail (COMPLETED, FAILED); a PSE
 * deposit's payment leg (ASSIGNED when paid, FAILED when the payer's bank refused) and its reversal
 * leg (REVERSED), and a refund of it (REFUNDED, OUT, keyed by the return id); an inbound Bre-B payment (ASSIGNED to a live key, or UNASSIGNED). And PENDING: a
 * transfer or a PSE deposit still waiting for the provider's outcome (a callback we never got), or an
 * inbound payment whose money step is still owed or was refused by the ledger (not final here), which
 * the provider should not report at all: any line for it is a status break.
 */
export type OurStatus = 'COMPLETED' | 'FAILED' | 'ASSIGNED' | 'UNASSIGNED' | 'REVERSED' | 'REFUNDED' | 'RETURNED' | 'PENDING';

/** The line the provider should report for one of our records (status null: none at all). */
interface Expectation {
  status: ProviderStatus | null;
  direction: Direction;
}

/** What the provider reports for each of our statuses, per rail. */
export const EXPECTED: Record<ReportRail, Partial<Record<OurStatus, Expectation>>> = {
  breb: {
    COMPLETED: { status: 'COMPLETED', direction: 'OUT' },
    FAILED: { status: 'FAILED', direction: 'OUT' },
    PENDING: { status: null, direction: 'OUT' },
  },
  ach: {
    COMPLETED: { status: 'COMPLETED', direction: 'OUT' },
    FAILED: { status: 'FAILED', direction: 'OUT' },
    PENDING: { status: null, direction: 'OUT' },
  },
  pse: {
    ASSIGNED: { status: 'PAID', direction: 'IN' },
    FAILED: { status: 'FAILED', direction: 'IN' },
    REVERSED: { status: 'REVERSED', direction: 'OUT' },
    // A refund of the payment (all or part of it) to the payer: a record and a line of its own, our id the return's.
    REFUNDED: { status: 'REFUNDED', direction: 'OUT' },
    PENDING: { status: null, direction: 'IN' },
  },
  // PENDING: a payment the network delivered that is not final on our side (its credit or hold still
  // owed, parked, or refused by the ledger): the network's RECEIVED line for it is a status break until it is.
  // RETURNED: the return leg of a held payment sent back to the payer (OUT, on the day of the return).
  'breb-inbound': {
    ASSIGNED: { status: 'RECEIVED', direction: 'IN' },
    UNASSIGNED: { status: 'RECEIVED', direction: 'IN' },
    PENDING: { status: null, direction: 'IN' },
    RETURNED: { status: 'RETURNED', direction: 'OUT' },
  },
};

/** A record of ours the rules cannot place: the owning service broke the OurRecords contract. */
export class OurRecordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OurRecordError';
  }
}

export function expectationOf(rail: ReportRail, r: OurRecord): Expectation {
  const e = EXPECTED[rail][r.status];
  if (!e) throw new OurRecordError(`${rail}: our status ${r.status} (${r.ourId}) never reaches this report`);
  return e;
}

// ---- Keys ------------------------------------------------------------------------------------
//
// A line and a record are about the same settlement when their keys are equal. The key is our id
// for breb, ach and pse (the provider echoes it) and the provider's id for breb-inbound (the
// network has no id of ours). A PSE deposit has up to two lines, its payment (IN) and its
// reversal (OUT): there the direction is part of the key, so each key expects exactly one line.
// So has an inbound Bre-B payment returned to the payer: its RECEIVED line (IN) and its RETURNED
// lines (OUT), keyed by the provider id + SEP + the direction, and on OUT + SEP + the return id (the
// line's our_id, our record's ourId): a payment may be returned several times, in parts, and each
// return is a line of its own. A PSE refund (REFUNDED, OUT) carries the refund's id (our return id
// `ret_…`) as its our_id: keyed like any pse leg, `<return id> + SEP + OUT`, so each refund of a
// deposit meets our record of that refund, beside the deposit's payment and reversal legs; return ids
// and deposit ids never share a prefix, so records ordered by id collate "C" stay in key order.
//
// Keys are compared as JavaScript strings (UTF-16 code units: for the ASCII ids of every rail, the
// byte order of PostgreSQL's `collate "C"`). SEP (U+0000) sorts before every id character, so
// "dep_1" + SEP + "IN" sorts where "dep_1" does among ids: records ordered by (id collate "C",
// direction IN before OUT, then on breb-inbound the return id collate "C") are in key order. A line
// that carries no id of ours gets a key that can never be one of ours (U+0001 + its provider id), so
// it meets no record and stays unidentified; on breb-inbound a RETURNED line without a return id
// keys as the return "" (no record of ours has an empty id), so it meets none either.

const SEP = '\u0000';
const UNIDENTIFIED = '\u0001';
const CONTROL = /[\u0000-\u001f]/;

/** The key of a line, from its provider id, our id ('' or null: none) and direction. */
export function lineKey(rail: ReportRail, providerId: string, ourId: string | null, direction: string): string {
  // An inbound payment's returns are lines of their own (OUT): the direction is part of the key, as
  // for PSE's reversal (on both legs: a key is never a prefix of another followed by a separator,
  // which the line sorter relies on), and on OUT the return's id.
  if (rail === 'breb-inbound') return direction === 'OUT' ? `${providerId}${SEP}OUT${SEP}${ourId ?? ''}` : `${providerId}${SEP}${direction}`;
  if (!ourId) return rail === 'pse' ? `${UNIDENTIFIED}${providerId}${SEP}${direction}` : `${UNIDENTIFIED}${providerId}`;
  return rail === 'pse' ? `${ourId}${SEP}${direction}` : ourId;
}

export function recordKey(rail: ReportRail, r: OurRecord): string {
  const id = rail === 'breb-inbound' ? r.providerId : r.ourId;
  if (!id || CONTROL.test(id)) throw new OurRecordError(`${rail}: record ${r.ourId} has no usable ${rail === 'breb-inbound' ? 'provider id' : 'id'}`);
  const expected = expectationOf(rail, r); // a status the report never carries is the owning service's error, found here
  // A leg still owed on our side (PENDING) says which leg it is: a reversal or a return in flight is the OUT leg (only booked legs are settled).
  const direction = r.status === 'PENDING' && (r.direction === 'IN' || r.direction === 'OUT') ? r.direction : expected.direction;
  if (rail === 'breb-inbound' && direction === 'OUT') {
    // A return leg: keyed by the return's id too (several returns of one payment).
    if (!r.ourId || CONTROL.test(r.ourId)) throw new OurRecordError(`${rail}: the return of ${id} has no usable return id`);
    return `${id}${SEP}OUT${SEP}${r.ourId}`;
  }
  return rail === 'pse' || rail === 'breb-inbound' ? `${id}${SEP}${direction}` : id;
}

/** The return id in a breb-inbound return leg's key ('' for a line without one), or undefined for any other key. */
export function returnIdOfKey(rail: ReportRail, key: string): string | undefined {
  if (rail !== 'breb-inbound') return undefined;
  const parts = key.split(SEP);
  return parts.length === 3 && parts[1] === 'OUT' ? parts[2] : undefined;
}

/** Our return ids (`ret_…`): a pse leg whose id is one is a refund, never a deposit's payment or reversal. */
const RETURN_ID_PREFIX = 'ret_';

/** The refund's return id in a pse key (its our id is a return id, whichever the direction), or undefined. */
export function refundIdOfKey(rail: ReportRail, key: string): string | undefined {
  if (rail !== 'pse' || !key.startsWith(RETURN_ID_PREFIX)) return undefined;
  const sep = key.indexOf(SEP);
  return sep < 0 ? undefined : key.slice(0, sep);
}

/** The id to look our records up by (OurRecords.find), or null for a line that carries none. */
export function lookupIdOf(key: string): string | null {
  if (key.startsWith(UNIDENTIFIED)) return null;
  const sep = key.indexOf(SEP);
  return sep < 0 ? key : key.slice(0, sep);
}

// ---- Breaks ----------------------------------------------------------------------------------

export const BREAK_KINDS = ['missing_at_provider', 'missing_in_our_books', 'amount_mismatch', 'status_mismatch', 'duplicate', 'value_date_mismatch'] as const;
export type BreakKind = (typeof BREAK_KINDS)[number];

export interface OursView {
  ourId: string;
  providerId: string | null;
  status: OurStatus;
  amountCents: bigint;
  providerFeeCents: bigint;
  settledAt: string | null;
  settledDate: string | null;
  companyId?: string;
}
/** The provider's line as read. */
export type TheirsView = ReportLine;

/**
 * A difference between the provider's report of (rail, date) and our books. `key` is deterministic
 * (`<rail>:<date>:<kind>:<providerId, or ourId when no line is involved>`, plus `:payment` or
 * `:reversal` on pse, whose two legs share both ids, and `:refund:<return id>` on a pse refund (named
 * by the link's provider id, which the deposit's refunds share); on breb-inbound a return leg is
 * `<rail>:<date>:<kind>:<providerId>:return:<return id>`, the return id omitted for a RETURNED line
 * that carries none), so reconciling the same report again finds the same keys and a sink that keeps
 * them opens nothing new. On a breb-inbound return leg `ourId` is the return's id.
 */
export interface Break {
  key: string;
  kind: BreakKind;
  rail: ReportRail;
  /** The report's date. */
  date: string;
  ourId?: string;
  providerId?: string;
  ours?: OursView;
  theirs?: TheirsView;
  /** duplicate: how many more lines the report has for this settlement, and the first few of them. */
  copies?: number;
  others?: TheirsView[];
  /**
   * The provider's effect on the rail's clearing account (every line of the key, copies included)
   * minus ours (`effectOfLine`, `effectOfRecord`); 0 for a value_date_mismatch. Accepting the
   * provider's side posts this as the clearing adjustment.
   */
  differenceCents: bigint;
}

// ---- Effects on the clearing account (LEDGER.md, the reconciliation's sign convention) ----------

/**
 * A provider line's effect on the balance of the rail's clearing account, in centavos (signed):
 * breb/ach COMPLETED OUT +amount; pse PAID IN -amount, REVERSED OUT +amount; breb-inbound RECEIVED
 * IN -amount; pse REFUNDED OUT +amount (the money back to the payer, like a reversal); FAILED (and
 * anything else) 0.
 */
export function effectOfLine(rail: ReportRail, status: string, direction: string, amountCents: bigint): bigint {
  switch (rail) {
    case 'breb':
    case 'ach':
      return status === 'COMPLETED' ? (direction === 'OUT' ? amountCents : -amountCents) : 0n;
    case 'pse':
      if (status === 'PAID') return direction === 'IN' ? -amountCents : amountCents;
      if (status === 'REVERSED' || status === 'REFUNDED') return direction === 'OUT' ? amountCents : -amountCents;
      return 0n;
    case 'breb-inbound':
      if (status === 'RECEIVED') return direction === 'IN' ? -amountCents : amountCents;
      if (status === 'RETURNED') return direction === 'OUT' ? amountCents : -amountCents;
      return 0n;
  }
}

/** Our record's effect on the clearing account: the same convention as the provider's line it should have. */
export function effectOfRecord(rail: ReportRail, r: Pick<OurRecord, 'status' | 'amountCents'>): bigint {
  switch (r.status) {
    case 'COMPLETED':
      return rail === 'breb' || rail === 'ach' ? r.amountCents : 0n;
    case 'ASSIGNED':
    case 'UNASSIGNED':
      return rail === 'pse' || rail === 'breb-inbound' ? -r.amountCents : 0n;
    case 'REVERSED':
    case 'REFUNDED':
      return rail === 'pse' ? r.amountCents : 0n;
    case 'RETURNED':
      return rail === 'breb-inbound' ? r.amountCents : 0n;
    default:
      return 0n; // FAILED, PENDING: nothing moved
  }
}

/** At most this many extra lines are kept (shown) on a duplicate break; the rest are only counted. */
export const SHOWN_DUPLICATES = 5;

function oursView(r: OurRecord): OursView {
  return {
    ourId: r.ourId,
    providerId: r.providerId,
    status: r.status,
    amountCents: r.amountCents,
    providerFeeCents: r.providerFeeCents ?? 0n,
    settledAt: r.settledAt,
    settledDate: r.settledAt === null ? null : bogotaDate(r.settledAt),
    ...(r.companyId !== undefined ? { companyId: r.companyId } : {}),
  };
}

function legSuffix(rail: ReportRail, direction: Direction, returnId: string | undefined): string {
  // A refund, one per return of the deposit (which share its provider id): named by the return id.
  if (rail === 'pse') return returnId ? `:refund:${returnId}` : direction === 'IN' ? ':payment' : ':reversal';
  // An inbound payment's return leg, one per return; its payment leg keeps the plain key it always had.
  if (rail === 'breb-inbound' && direction === 'OUT') return returnId ? `:return:${returnId}` : ':return';
  return '';
}

/** `returnId`: on a breb-inbound return leg (OUT) or a pse refund, the return's id (the ref is then the provider id). */
export function breakKey(rail: ReportRail, date: string, kind: BreakKind, ref: string, direction: Direction, returnId?: string): string {
  return `${rail}:${date}:${kind}:${ref}${legSuffix(rail, direction, returnId)}`;
}

/**
 * Whether a breb-inbound break is about a return leg (OUT), from its key and its `ourId` (the return's
 * id: `…:return:<ourId>`; a RETURNED line without a return id, or a break kept from before returns
 * had ids, ends in `:return`).
 */
export function isReturnBreak(b: { rail: ReportRail; key: string; ourId?: string | null | undefined }): boolean {
  return b.rail === 'breb-inbound' && (b.key.endsWith(':return') || (!!b.ourId && b.key.endsWith(`:return:${b.ourId}`)));
}

/**
 * Whether a pse break is about a refund (`…:refund:<return id>`, its `ourId` the return's id): a
 * movement of its own, never the deposit's payment or reversal.
 */
export function isRefundBreak(b: { rail: ReportRail; key: string; ourId?: string | null | undefined }): boolean {
  return b.rail === 'pse' && !!b.ourId && b.key.endsWith(`:refund:${b.ourId}`);
}

/** What differs between one of our records and the line paired with it (none: they match). */
export function pairFaults(rail: ReportRail, ours: OurRecord, line: ReportLine): BreakKind[] {
  const e = expectationOf(rail, ours);
  const faults: BreakKind[] = [];
  // A line in the other direction reports another movement than ours: a status break too.
  if (line.status !== e.status || line.direction !== e.direction) faults.push('status_mismatch');
  if (line.amountCents !== ours.amountCents || line.feeCents !== (ours.providerFeeCents ?? 0n)) faults.push('amount_mismatch');
  // A record not settled on our side has no date to compare: its status break says it all.
  if (ours.settledAt !== null && line.valueDate !== bogotaDate(ours.settledAt)) faults.push('value_date_mismatch');
  return faults;
}

/** How one key ended: a clean pair, a pair with faults, or a half without its other half; and the breaks. */
export interface GroupOutcome {
  matched: { amountCents: bigint } | null;
  breaks: Break[];
}

/**
 * Every line and record of one key. A key expects one line: when the report has several, the one
 * that fits our record best (fewest faults, then the first in the report) is paired and the others
 * are a duplicate break. Memory is O(1) whatever the number of lines (the extras are counted).
 */
export class KeyGroup {
  private best: ReportLine | undefined;
  private bestFaults: number = Number.POSITIVE_INFINITY;
  private copies = 0;
  private readonly shown: ReportLine[] = [];
  /** The effect of every line of the key on the clearing account (copies included). */
  private theirsEffect = 0n;

  constructor(
    readonly rail: ReportRail,
    readonly date: string,
    readonly key: string,
    private ours: OurRecord | undefined,
  ) {}

  get hasOurs(): boolean {
    return this.ours !== undefined;
  }

  /** The trace context of our record's saga, if it has one (for the run's span links). */
  get oursTraceparent(): string | undefined {
    return this.ours?.traceparent;
  }

  get hasLines(): boolean {
    return this.best !== undefined;
  }

  add(line: ReportLine): void {
    this.theirsEffect += effectOfLine(this.rail, line.status, line.direction, line.amountCents);
    const faults = this.ours ? pairFaults(this.rail, this.ours, line).length : 0;
    if (this.best === undefined || faults < this.bestFaults) {
      if (this.best !== undefined) this.extra(this.best);
      this.best = line;
      this.bestFaults = faults;
    } else {
      this.extra(line);
    }
  }

  /** Pairs the lines with a record found later (another day's, by OurRecords.find). */
  withOurs(ours: OurRecord): void {
    if (this.ours) throw new Error('the group already has its record');
    this.ours = ours;
  }

  private extra(line: ReportLine): void {
    this.copies += 1;
    if (this.shown.length < SHOWN_DUPLICATES) {
      this.shown.push(line);
      this.shown.sort((a, b) => a.lineNo - b.lineNo);
    }
  }

  settle(): GroupOutcome {
    const { rail, date, ours, best } = this;
    const returnId = returnIdOfKey(rail, this.key) ?? refundIdOfKey(rail, this.key);
    const breaks: Break[] = [];
    const difference = this.theirsEffect - (ours ? effectOfRecord(rail, ours) : 0n);
    if (best === undefined) {
      if (!ours) return { matched: null, breaks };
      const dir = expectationOf(rail, ours).direction;
      // A return leg (a pse refund) is named by its payment's provider id and its own id; every other by our id.
      const ref = returnId !== undefined && ours.providerId ? ours.providerId : ours.ourId;
      breaks.push({
        key: breakKey(rail, date, 'missing_at_provider', ref, dir, returnId),
        kind: 'missing_at_provider',
        rail,
        date,
        ourId: ours.ourId,
        ...(ours.providerId ? { providerId: ours.providerId } : {}),
        ours: oursView(ours),
        differenceCents: difference,
      });
      return { matched: null, breaks };
    }
    const ids = { ...(ours ? { ourId: ours.ourId } : best.ourId ? { ourId: best.ourId } : {}), providerId: best.providerId };
    let matched: GroupOutcome['matched'] = null;
    if (!ours) {
      breaks.push({
        key: breakKey(rail, date, 'missing_in_our_books', best.providerId, best.direction, returnId),
        kind: 'missing_in_our_books',
        rail,
        date,
        ...ids,
        theirs: best,
        differenceCents: difference,
      });
    } else {
      const faults = pairFaults(rail, ours, best);
      for (const kind of faults) {
        breaks.push({
          key: breakKey(rail, date, kind, best.providerId, best.direction, returnId),
          kind,
          rail,
          date,
          ...ids,
          ours: oursView(ours),
          theirs: best,
          differenceCents: kind === 'value_date_mismatch' ? 0n : difference,
        });
      }
      if (faults.length === 0) matched = { amountCents: best.amountCents };
    }
    if (this.copies > 0) {
      breaks.push({
        key: breakKey(rail, date, 'duplicate', best.providerId, best.direction, returnId),
        kind: 'duplicate',
        rail,
        date,
        ...ids,
        ...(ours ? { ours: oursView(ours) } : {}),
        theirs: best,
        copies: this.copies,
        others: [...this.shown],
        differenceCents: difference,
      });
    }
    return { matched, breaks };
  }
}
