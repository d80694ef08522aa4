import type { Logger, MoneyExceptionStore } from '@wallet/platform';
import type { ReportRail } from '../domain/report.js';
import type { BreakRecord, OurRecords, RunRecord } from './ports.js';
import type { ReconcileDay } from './reconcile-day.js';

/**
 * The ledger's correcting entry when the provider's side is accepted (LedgerService.PostClearingAdjustment,
 * one live per external movement: MOVEMENT_ALREADY_CORRECTED names the case that made it), and its undoing
 * when a later run no longer finds the break (ReverseCorrection).
 */
export interface ClearingLedger {
  postClearingAdjustment(a: {
    idempotencyKey: string;
    clearing: ReportRail;
    deltaCents: bigint;
    reason: string;
    movement: string;
    caseId: string;
  }): Promise<void>;
  reverseCorrection(a: { idempotencyKey: string; correctionKey: string; reason: string }): Promise<void>;
}

export type Cursor = { at: string; id: string };

/** What the use cases read of the runs (persistence RunStore). */
export interface RunsQuery {
  get(id: string): Promise<RunRecord | undefined>;
  list(f: { rail?: string; date?: string; status?: string; limit: number; cursor?: Cursor }): Promise<{ items: RunRecord[]; nextCursor: string | null }>;
}

/** The breaks as the use cases read and resolve them (persistence BreakStore). */
export interface BreaksPort {
  get(key: string): Promise<BreakRecord | undefined>;
  resolve(key: string, resolution: string): Promise<BreakRecord | undefined>;
  markAdjusted(breakKey: string, adjustmentKey: string, n: number, cents: bigint): Promise<void>;
  reversing(limit: number): Promise<BreakRecord[]>;
  markReversed(breakKey: string, adjustmentKey: string): Promise<void>;
  resolveLinked(key: string, caseId: string): Promise<void>;
  /** The keys of the breaks about an external movement, and the movement of each of these breaks. */
  keysOfMovement(movement: string): Promise<string[]>;
  movementsOf(keys: readonly string[]): Promise<Map<string, string>>;
  list(f: {
    runId?: string;
    rail?: string;
    date?: string;
    status?: string;
    kind?: string;
    limit: number;
    cursor?: Cursor;
  }): Promise<{ items: BreakRecord[]; nextCursor: string | null }>;
}

export interface ReconciliationDeps {
  day: ReconcileDay;
  runs: RunsQuery;
  breaks: BreaksPort;
  exceptions: MoneyExceptionStore;
  ledger: ClearingLedger;
  /** The owners' records (FindSettlements): accept_provider reads the break's record there first. */
  ours: Pick<OurRecords, 'find'>;
  decodeCursor(c: string): Cursor | undefined;
  log: Logger;
  now?: () => Date;
  /** How long a `rerun` waits for a run of the same day already under way (default 10 min). */
  rerunWaitMs?: number;
}
