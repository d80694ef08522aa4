import { addSagaLink } from '@wallet/platform';
import {
  BREAK_KINDS,
  KeyGroup,
  effectOfLine,
  effectOfRecord,
  OurRecordError,
  lineKey,
  lookupIdOf,
  recordKey,
  type Break,
  type BreakKind,
  type OurRecord,
} from '../domain/matching.js';
import {
  ReportFormatError,
  TrailerTotals,
  checkHeader,
  checkLine,
  isTrailer,
  parseTrailer,
  type RejectReason,
  type ReportRail,
  type Trailer,
} from '../domain/report.js';
import type { BreakSink, KeyedLine, LineSorter, OurRecords, ReportRecords } from './ports.js';

export interface ReconcileDeps {
  ours: OurRecords;
  sink: BreakSink;
  /** A fresh sorter for this run (adapters/spill-sorter.ts). */
  sorter: () => LineSorter;
  /** Lines without a record of the day are looked up (OurRecords.find) this many keys at a time. */
  lookupBatch?: number;
  /** Breaks are handed to the sink this many at a time. */
  sinkBatch?: number;
}

export interface Totals {
  count: number;
  amountCents: bigint;
}
/** Our records' totals, with their effect on the rail's clearing account (LEDGER.md's sign convention). */
export interface OurTotals extends Totals {
  netCents: bigint;
}

export type ReconcileResult =
  | {
      outcome: 'RECONCILED';
      rail: ReportRail;
      date: string;
      /** The report's lines (their control totals: the trailer, verified). */
      report: Trailer & { /** The sum of every line's effect on the clearing account (duplicates included). */ netCents: bigint };
      /** Our records of the day (the settled stream; records of other days found by look-up are not counted) and their effect. */
      ours: OurTotals;
      /** Pairs of a line and a record of ours with nothing different. */
      matched: Totals;
      /** Breaks found, by kind; `opened` of them were new to the sink (0 on a re-run of the same report). */
      breaks: { total: number; opened: number; byKind: Record<BreakKind, number> };
    }
  | {
      outcome: 'REJECTED';
      rail: ReportRail;
      date: string;
      reason: RejectReason;
      detail: string;
      lineNo?: number;
    };

/**
 * Reconciles one provider report, (rail, date), against our books, streamed end to end:
 *
 * 1. Read: every record is checked and added to the control totals and to an external sort by key
 *    (sorted runs of bounded size spilled to disk). The trailer must be last and add up; a report
 *    that does not (bad header, malformed line or CSV, no trailer, a trailer that does not add up)
 *    is REJECTED: nothing is matched, no break is opened.
 * 2. Match: a merge of the sorted lines with our records of the day (streamed in the same key
 *    order), one key at a time (domain KeyGroup). Lines with no record of the day are looked up in
 *    batches among our other days' records (a settlement reported on another day than ours is a
 *    value-date break, not a line missing in our books).
 *
 * Memory: the sort's run, one batch of each stream, one look-up batch and one sink batch; never
 * the report or the day's records as a whole. Errors of the transport (the report's download, our
 * records' stream) are thrown, for the caller to retry; breaks opened before are idempotent.
 */
export async function reconcile(rail: ReportRail, date: string, records: ReportRecords, deps: ReconcileDeps): Promise<ReconcileResult> {
  const sorter = deps.sorter();
  try {
    let report: Trailer & { netCents: bigint };
    try {
      report = await readReport(rail, records, sorter);
    } catch (err) {
      if (!(err instanceof ReportFormatError)) throw err;
      return { outcome: 'REJECTED', rail, date, reason: err.reason, detail: err.message, ...(err.lineNo !== undefined ? { lineNo: err.lineNo } : {}) };
    }
    return await matchSorted(rail, date, report, sorter, deps);
  } finally {
    await sorter.dispose();
  }
}

async function readReport(rail: ReportRail, records: ReportRecords, sorter: LineSorter): Promise<Trailer & { netCents: bigint }> {
  const totals = new TrailerTotals();
  let netCents = 0n; // summed while streaming: the report is never held
  let header = true;
  let trailer: Trailer | undefined;
  let n = 0;
  // Leaving the loop early (a throw) ends the iteration, which ends the download.
  for await (const batch of records) {
    for (const record of batch) {
      if (header) {
        checkHeader(record);
        header = false;
        continue;
      }
      if (trailer) throw new ReportFormatError('CONTENT_AFTER_TRAILER', `a record after the trailer (line ${n + 2})`, n + 2);
      if (isTrailer(record)) {
        trailer = parseTrailer(record, n + 1);
        continue;
      }
      n += 1;
      checkLine(rail, record, n);
      totals.add(record[3]!, record[4]!);
      netCents += effectOfLine(rail, record[5]!, record[2]!, BigInt(record[3]!));
      const spilled = sorter.add(lineKey(rail, record[0]!, record[1]!, record[2]!), n, record);
      if (spilled) await spilled;
    }
  }
  if (header) checkHeader(undefined);
  if (!trailer) throw new ReportFormatError('MISSING_TRAILER', `the report ends after ${n} lines without a trailer`);
  totals.verify(trailer);
  return { ...totals.totals, netCents };
}

/** A synchronous view of the head of a stream of batches: `head()` awaits only at a batch boundary. */
class Cursor<T> {
  private batch: readonly T[] = [];
  private i = 0;
  done = false;
  private readonly it: AsyncIterator<readonly T[]>;

  constructor(source: AsyncIterable<readonly T[]>) {
    this.it = source[Symbol.asyncIterator]();
  }

  peek(): T | undefined {
    return this.i < this.batch.length ? this.batch[this.i] : undefined;
  }

  advance(): void {
    this.i += 1;
  }

  /** The head, loading the next non-empty batch when this one is used up; undefined at the end. */
  async head(): Promise<T | undefined> {
    while (this.i >= this.batch.length && !this.done) {
      const r = await this.it.next();
      if (r.done) {
        this.done = true;
        break;
      }
      this.batch = r.value;
      this.i = 0;
    }
    return this.peek();
  }

  async close(): Promise<void> {
    if (!this.done) await this.it.return?.();
  }
}

interface KeyedRecord {
  key: string;
  record: OurRecord;
}

/** Span links per run (OpenTelemetry keeps 128 by default): enough to go from a run to the payments of its first breaks. */
const MAX_BREAK_LINKS = 100;

async function matchSorted(
  rail: ReportRail,
  date: string,
  report: Trailer & { netCents: bigint },
  sorter: LineSorter,
  deps: ReconcileDeps,
): Promise<ReconcileResult> {
  const lookupBatch = deps.lookupBatch ?? 500;
  const sinkBatch = deps.sinkBatch ?? 500;
  const ours: OurTotals = { count: 0, amountCents: 0n, netCents: 0n };
  const matched: Totals = { count: 0, amountCents: 0n };
  const byKind = Object.fromEntries(BREAK_KINDS.map((k) => [k, 0])) as Record<BreakKind, number>;
  let total = 0;
  let opened = 0;
  let out: Break[] = [];

  const flush = async () => {
    if (out.length === 0) return;
    const batch = out;
    out = [];
    opened += (await deps.sink.open(batch)).opened;
  };
  let linked = 0;
  const settle = async (g: KeyGroup) => {
    const r = g.settle();
    if (r.matched) {
      matched.count += 1;
      matched.amountCents += r.matched.amountCents;
    }
    for (const b of r.breaks) {
      byKind[b.kind] += 1;
      total += 1;
      out.push(b);
      // The run's span links to the payment a break is about (the first MAX_BREAK_LINKS of a run).
      if (linked < MAX_BREAK_LINKS && g.oursTraceparent) {
        linked += 1;
        addSagaLink(g.oursTraceparent, { 'wallet.reconciliation_break': b.key, 'wallet.movement_id': b.ourId ?? '' });
      }
    }
    if (out.length >= sinkBatch) await flush();
  };

  // Groups whose lines have no record of the day, waiting for one look-up of their ids.
  let pending: KeyGroup[] = [];
  const resolvePending = async () => {
    if (pending.length === 0) return;
    const groups = pending;
    pending = [];
    const ids = [...new Set(groups.map((g) => lookupIdOf(g.key)!))];
    const found = new Map<string, OurRecord>();
    for (const r of await deps.ours.find(rail, ids)) found.set(recordKey(rail, r), r);
    for (const g of groups) {
      const r = found.get(g.key);
      if (r) g.withOurs(r);
      await settle(g);
    }
  };

  let lastKey: string | undefined;
  const ordered = (batch: readonly OurRecord[]): readonly KeyedRecord[] =>
    batch.map((record) => {
      const key = recordKey(rail, record);
      if (record.settledAt === null || record.status === 'PENDING') {
        throw new OurRecordError(`${rail} ${date}: ${record.ourId} is in the day's settled records but not settled (${record.status})`);
      }
      if (lastKey !== undefined && key <= lastKey) {
        throw new OurRecordError(
          `${rail} ${date}: our records are not in strictly ascending key order (${record.ourId} after ${lastKey.replace(/\u0000/g, '/')})`,
        );
      }
      lastKey = key;
      ours.count += 1;
      ours.amountCents += record.amountCents;
      ours.netCents += effectOfRecord(rail, record);
      return { key, record };
    });
  const theirs = new Cursor<KeyedLine>(sorter.sorted());
  const mine = new Cursor<KeyedRecord>(mapBatches(deps.ours.settled(rail, date), ordered));
  try {
    for (;;) {
      const t = theirs.peek() ?? (await theirs.head());
      const o = mine.peek() ?? (await mine.head());
      if (t === undefined && o === undefined) break;
      const key = o === undefined || (t !== undefined && t.key < o.key) ? t!.key : o.key;
      const own = o !== undefined && o.key === key ? o.record : undefined;
      if (own) mine.advance();
      const group = new KeyGroup(rail, date, key, own);
      for (;;) {
        const x = theirs.peek() ?? (await theirs.head());
        if (x === undefined || x.key !== key) break;
        group.add(x.line);
        theirs.advance();
      }
      if (!own && lookupIdOf(key) !== null) {
        pending.push(group);
        if (pending.length >= lookupBatch) await resolvePending();
      } else {
        await settle(group);
      }
    }
    await resolvePending();
    await flush();
  } finally {
    await Promise.all([theirs.close(), mine.close()]);
  }
  return { outcome: 'RECONCILED', rail, date, report, ours, matched, breaks: { total, opened, byKind } };
}

async function* mapBatches<A, B>(source: AsyncIterable<readonly A[]>, f: (batch: readonly A[]) => readonly B[]): AsyncGenerator<readonly B[]> {
  for await (const batch of source) yield f(batch);
}
