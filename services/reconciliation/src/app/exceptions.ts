import { AppError, listExceptionsPage, resolveMoneyException, type ExceptionView, type MoneyException } from '@wallet/platform';
import { BREAK_KINDS } from '../domain/matching.js';
import type { ReportRail } from '../domain/report.js';
import type { ReconciliationDeps } from './deps.js';
import type { RunEnded } from './reconcile-day.js';

/** The resolutions of the reconciliation's money exceptions (every kind admits the three). */
export const RECON_ACTIONS = ['accept_provider', 'explain', 'rerun'] as const;
export const EXCEPTION_KINDS = BREAK_KINDS.map((k) => k.toUpperCase());
const view = (e: MoneyException): ExceptionView => ({ ...e, actions: RECON_ACTIONS });

/** ListExceptions: the reconciliation's money exceptions, newest first (the platform's page and cursor, merged by the gateway). */
export class ListReconciliationExceptions {
  constructor(private readonly deps: ReconciliationDeps) {}

  execute(q: { status?: string | undefined; kind?: string | undefined; limit?: number; cursor?: string | undefined }) {
    return listExceptionsPage((x) => this.deps.exceptions.list(x), EXCEPTION_KINDS, view, q);
  }
}

/** ResolveException (see below); `signal` aborts a rerun's download when the process stops. */
export class ResolveReconciliationException {
  constructor(private readonly deps: ReconciliationDeps, private readonly signal?: AbortSignal) {}

  /**
   * The operator's decision on a break's money exception, won first (OPEN → RESOLVING; the same
   * action again resumes an interrupted one), then:
   * - accept_provider: PostClearingAdjustment(clearing of the rail, delta = the break's difference,
   *   key `recon:<break key>:accept_provider`, idempotent) when the difference is not 0; the break RESOLVED;
   * - explain: the break RESOLVED with the note;
   * - rerun: the (rail, date) reconciled again now; the break gone → the run's completion resolved
   *   both; still there → the exception back to OPEN and BREAK_STILL_PRESENT.
   * Then the exception RESOLVED.
   */
  async execute(input: { id: string; action: string; note: string; resolvedBy: string }): Promise<ExceptionView> {
    const { deps } = this;
    const done = await resolveMoneyException(deps.exceptions, input, () => RECON_ACTIONS, async (won, note) => {
      const b = await deps.breaks.get(won.resourceId);
      if (!b) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'exception without its break' });
      if (won.action === 'accept_provider') {
        if (b.differenceCents !== 0n) {
          await deps.ledger.postClearingAdjustment({
            idempotencyKey: `recon:${b.key}:accept_provider`, clearing: b.rail, deltaCents: b.differenceCents,
            reason: `${b.key} ${won.id}: ${note}`.slice(0, 500),
          });
        }
        await deps.breaks.resolve(b.key, 'accept_provider');
      } else if (won.action === 'explain') {
        await deps.breaks.resolve(b.key, 'explain');
      } else {
        const ended = await this.rerun(b.rail, b.date, input.resolvedBy);
        const after = await deps.breaks.get(b.key);
        if (after?.status === 'RESOLVED') return;
        await deps.reopenException(won.id, 'rerun');
        if (ended.run.status !== 'RECONCILED') {
          if (ended.error?.name === 'ReportNotAvailableError') throw new AppError('REPORT_NOT_AVAILABLE');
          throw new AppError('SERVICE_UNAVAILABLE', undefined, { reason: `the re-run ended ${ended.run.status}`, runId: ended.run.id });
        }
        throw new AppError('BREAK_STILL_PRESENT', undefined, { runId: ended.run.id });
      }
    });
    deps.log.warn({ exceptionId: done.id, kind: done.kind, action: input.action, resolvedBy: input.resolvedBy, breakKey: done.resourceId }, 'reconciliation exception resolved');
    return done;
  }

  /** Reconciles (rail, date) now and waits for the end (a run of that day under way is waited for first). */
  async rerun(rail: ReportRail, date: string, requestedBy: string): Promise<RunEnded> {
    const deadline = Date.now() + (this.deps.rerunWaitMs ?? 10 * 60_000);
    for (;;) {
      const started = await this.deps.day.begin(rail, date, 'RERUN', requestedBy);
      if (!started.alreadyRunning) return this.deps.day.execute(started.run, this.signal);
      if (Date.now() > deadline) throw new AppError('SERVICE_UNAVAILABLE', undefined, { reason: 'a run of this day is still under way' });
      await new Promise((r) => setTimeout(r, 250));
    }
  }

}
