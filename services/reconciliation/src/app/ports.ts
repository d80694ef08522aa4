import type { Break, OurRecord } from '../domain/matching.js';
import type { ReportLine, ReportRail } from '../domain/report.js';

/**
 * What the reconciliation needs from the world. Memory stays bounded because every port is a
 * stream or a bounded batch: the report comes in as records, our books as a key-ordered stream of
 * batches, look-ups are at most `lookupBatch` ids, breaks go out `sinkBatch` at a time.
 */

/**
 * A report as CSV records (string fields), header and trailer included, in batches (one await per
 * batch, not per record). adapters/csv-records.ts makes them from bytes.
 */
export type ReportRecords = AsyncIterable<ReadonlyArray<readonly string[]>>;

/** A provider's report of (rail, date). */
export interface ReportSource {
  open(rail: ReportRail, date: string, signal?: AbortSignal): Promise<ReportRecords>;
}

/**
 * Our settled records, read from the owning services (transfer: breb, ach; pse-deposit: pse;
 * collect-key: breb-inbound) through their gRPC, never their tables.
 */
export interface OurRecords {
  /**
   * Every record of ours whose settlement falls on `date` (Bogotá) for `rail`, in strictly
   * ascending key order (domain/matching.ts "Keys": the id `collate "C"`, then for pse the
   * payment before the reversal, for breb-inbound the payment before its returns, these by return
   * id `collate "C"`), in batches. A server-streamed RPC over an ordered query.
   */
  settled(rail: ReportRail, date: string): AsyncIterable<readonly OurRecord[]>;
  /**
   * The records, of any day, with these ids (our id for breb, ach and pse; the provider's id for
   * breb-inbound): how a line of the report that is not one of the day's records is told apart
   * from one we settled on another day, or one still PENDING on our side (a callback we never
   * got: a status break, not a line missing in our books). At most `lookupBatch` ids per call.
   */
  find(rail: ReportRail, ids: readonly string[]): Promise<OurRecord[]>;
}

/**
 * Where breaks go. Idempotent on `Break.key`: a break already open is not opened again (the
 * break store, persistence/reconciliation.store.ts `SqlBreakSink`: `insert … on conflict (break_key)
 * do update set last_seen_run_id`, a new row only for a new key).
 */
export interface BreakSink {
  open(breaks: readonly Break[]): Promise<{ opened: number }>;
}

/** A report line with its match key. */
export interface KeyedLine {
  key: string;
  line: ReportLine;
}

/**
 * Sorts a report's lines by key (ties in report order) with bounded memory: a provider lists its
 * lines in settlement order, our books are read in key order.
 */
export interface LineSorter {
  /**
   * Takes one checked record (domain `checkLine`) with its key and line number; returns a promise
   * when it had to write a sorted run out (await it before the next).
   */
  add(key: string, lineNo: number, record: readonly string[]): Promise<void> | void;
  /** Every line added, in (key, line number) order, in batches. Called once, after the last `add`. */
  sorted(): AsyncIterable<readonly KeyedLine[]>;
  /** Deletes whatever the sort wrote (runs on disk); safe to call more than once. */
  dispose(): Promise<void>;
}

/** A reconciliation run of one (rail, date), as stored (persistence/reconciliation.store.ts RunStore). */
export type RunOutcome = 'RECONCILED' | 'REJECTED' | 'FAILED';
/** RUNNING while under way (at most one per (rail, date)), then its outcome. */
export type RunStatus = 'RUNNING' | RunOutcome;
/** Who started it: the daily schedule, an operator (or the gateway) on demand, or an operator's `rerun` of a break. */
export type RunTrigger = 'SCHEDULE' | 'ON_DEMAND' | 'RERUN';
export const RUN_TRIGGERS: readonly RunTrigger[] = ['SCHEDULE', 'ON_DEMAND', 'RERUN'];
export const RUN_STATUSES: readonly RunStatus[] = ['RUNNING', 'RECONCILED', 'REJECTED', 'FAILED'];

export interface RunRecord {
  id: string;
  rail: ReportRail;
  date: string;
  startedAt: Date;
  finishedAt: Date | null;
  trigger: RunTrigger;
  /** "scheduler", "operator:<id>", "admin". */
  requestedBy: string;
  status: RunStatus;
  /** null while the run is under way (or when its process died before recording an outcome). */
  outcome: RunOutcome | null;
  rejectReason: string | null;
  detail: string | null;
  /** The report's control totals and `netCents`, its lines' effect on the rail's clearing account. */
  report: { lines: number; amountCents: bigint; feeCents: bigint; netCents: bigint } | null;
  /** Our records of the day and `netCents`, their effect on the clearing account. */
  ours: { count: number; amountCents: bigint; netCents: bigint } | null;
  matched: { count: number; amountCents: bigint } | null;
  breaks: { total: number; opened: number; byKind: Record<string, number> } | null;
  /** FAILED: the breaks the run had opened before it failed (they stay open; a re-run does not open them again). */
  openedBeforeFailure: number | null;
  /** The instant the report covers the day up to (a same-day run: its start; later: the day's end). */
  coversUntil: Date | null;
}

/** A break as stored, with its life cycle (persistence/reconciliation.store.ts BreakStore). */
export interface BreakRecord {
  key: string;
  kind: string;
  rail: ReportRail;
  date: string;
  ourId: string | null;
  providerId: string | null;
  ours: Record<string, unknown> | null;
  theirs: Record<string, unknown> | null;
  status: 'OPEN' | 'RESOLVED';
  runId: string;
  lastSeenRunId: string;
  openedAt: Date;
  resolvedAt: Date | null;
  /** accept_provider | explain | rerun | superseded */
  resolution: string | null;
  exceptionId: string;
  /** The provider's effect on the clearing account minus ours (0 for value_date_mismatch). */
  differenceCents: bigint;
  /** The external movement it is about ("<rail>:<provider id>"): the ledger's corrections register name. */
  movement: string;
  /** The ledger key of its accept_provider adjustment, and that adjustment's state (null: none posted). */
  adjustmentKey: string | null;
  adjustmentState: 'POSTED' | 'REVERSING' | 'REVERSED' | null;
  /** How many adjustments it has posted (each under its own key). */
  adjustments: number;
  /** resolution 'linked': the case whose correcting entry of the same movement stands for this break. */
  linkedCase: string | null;
}
