import type { Logger, MoneyExceptionStore } from '@wallet/platform';
import type { ReportRail } from '../domain/report.js';
import type { BreakRecord, RunRecord } from './ports.js';
import type { ReconcileDay } from './reconcile-day.js';

/** The ledger's correcting entry when the provider's side is accepted (LedgerService.PostClearingAdjustment). */
export interface ClearingLedger {
  postClearingAdjustment(a: { idempotencyKey: string; clearing: ReportRail; deltaCents: bigint; reason: string }): Promise<void>;
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
  list(f: { runId?: string; rail?: string; date?: string; status?: string; kind?: string; limit: number; cursor?: Cursor }): Promise<{ items: BreakRecord[]; nextCursor: string | null }>;
}

export interface ReconciliationDeps {
  day: ReconcileDay;
  runs: RunsQuery;
  breaks: BreaksPort;
  exceptions: MoneyExceptionStore;
  /** Puts an exception won for `action` back to OPEN (a rerun that still finds its break). */
  reopenException(id: string, action: string): Promise<void>;
  ledger: ClearingLedger;
  decodeCursor(c: string): Cursor | undefined;
  log: Logger;
  now?: () => Date;
  /** How long a `rerun` waits for a run of the same day already under way (default 10 min). */
  rerunWaitMs?: number;
}
