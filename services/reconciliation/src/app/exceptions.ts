import {
  addSagaLink,
  AppError,
  linkActiveSpanToSaga,
  listExceptionsPage,
  resolveMoneyException,
  type ExceptionView,
  type MoneyException,
  type ExceptionListRequest,
} from '@wallet/platform';
import { BREAK_KINDS, isRefundBreak, isReturnBreak, type OurRecord } from '../domain/matching.js';
import type { ReportRail } from '../domain/report.js';
import type { ReconciliationDeps } from './deps.js';
import type { BreakRecord } from './ports.js';
import type { RunEnded } from './reconcile-day.js';

/** The resolutions of the reconciliation's money exceptions (every kind admits the three). */
export const RECON_ACTIONS = ['accept_provider', 'explain', 'rerun'] as const;
export const EXCEPTION_KINDS = BREAK_KINDS.map((k) => k.toUpperCase());
const view = (e: MoneyException): ExceptionView => ({ ...e, actions: RECON_ACTIONS });

/** ListExceptions: the reconciliation's money exceptions, newest first (the platform's page and cursor, merged by the gateway). */
export class ListReconciliationExceptions {
  constructor(private readonly deps: ReconciliationDeps) {}

  async execute(q: ExceptionListRequest) {
    const { movement, ...rest } = q;
    const resourceIds = movement ? await this.deps.breaks.keysOfMovement(movement) : undefined;
    const page = await listExceptionsPage((x) => this.deps.exceptions.list(x), EXCEPTION_KINDS, view, { ...rest, ...(resourceIds ? { resourceIds } : {}) });
    // Each exception shows its break's movement (a break and the owner's exception about one movement are one case).
    const movements = await this.deps.breaks.movementsOf(page.items.map((e) => e.resourceId));
    return {
      ...page,
      items: page.items.map((e) => {
        const m = movements.get(e.resourceId);
        return m ? { ...e, movement: m } : e;
      }),
    };
  }
}

/** ResolveException (see below); `signal` aborts a rerun's download when the process stops. */
export class ResolveReconciliationException {
  constructor(
    private readonly deps: ReconciliationDeps,
    private readonly signal?: AbortSignal,
  ) {}

  /**
   * The operator's decision on a break's money exception, won first (OPEN → RESOLVING; the same
   * action again resumes an interrupted one), then:
   * - accept_provider (docs/reconciliation.md "One case per external movement"): refused (CASE_NOT_FINAL, the exception OPEN again) while the
   *   owner's record of the movement is PENDING, has an open money exception or owes a money step;
   *   then, when the difference is not 0, PostClearingAdjustment(clearing of the rail, delta = the
   *   break's difference as the latest run saw it, the break's movement and this case, key
   *   `recon:<break key>:accept_provider[:n]`, idempotent) and the break RESOLVED. When another case
   *   already corrected the movement (MOVEMENT_ALREADY_CORRECTED), its entry stands for this break:
   *   RESOLVED 'linked' to that case, nothing posted;
   * - explain: the break RESOLVED with the note;
   * - rerun: the (rail, date) reconciled again now; the break gone → the run's completion resolved
   *   both; still there → the exception back to OPEN and BREAK_STILL_PRESENT.
   * Then the exception RESOLVED.
   */
  async execute(input: { id: string; action: string; note: string; resolvedBy: string }): Promise<ExceptionView> {
    const { deps } = this;
    const done = await resolveMoneyException(
      deps.exceptions,
      input,
      () => RECON_ACTIONS,
      async (won, note) => {
        const b = await deps.breaks.get(won.resourceId);
        if (!b) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'exception without its break' });
        // The operator's resolution names the break, and (accept_provider, which reads the owner's record) links to its payment's trace.
        linkActiveSpanToSaga(undefined, { 'wallet.reconciliation_break': b.key, 'wallet.exception_id': won.id, 'wallet.movement_id': b.ourId ?? '' });
        if (won.action === 'accept_provider') {
          await this.acceptProvider(b, won.id, note);
        } else if (won.action === 'explain') {
          await deps.breaks.resolve(b.key, 'explain');
        } else {
          const ended = await this.rerun(b.rail, b.date, input.resolvedBy);
          const after = await deps.breaks.get(b.key);
          if (after?.status === 'RESOLVED') return;
          await deps.exceptions.reopen(won.id, 'rerun');
          if (ended.run.status !== 'RECONCILED') {
            if (ended.error?.name === 'ReportNotAvailableError') throw new AppError('REPORT_NOT_AVAILABLE');
            throw new AppError('SERVICE_UNAVAILABLE', undefined, { reason: `the re-run ended ${ended.run.status}`, runId: ended.run.id });
          }
          throw new AppError('BREAK_STILL_PRESENT', undefined, { runId: ended.run.id });
        }
      },
    );
    deps.log.warn(
      { exceptionId: done.id, kind: done.kind, action: input.action, resolvedBy: input.resolvedBy, breakKey: done.resourceId },
      'reconciliation exception resolved',
    );
    return done;
  }

  private async acceptProvider(b: BreakRecord, caseId: string, note: string): Promise<void> {
    const { deps } = this;
    if (b.status === 'RESOLVED') return; // an interrupted resolution already got this far
    const owner = await ownerRecord(deps, b);
    addSagaLink(owner?.traceparent, { 'wallet.reconciliation_break': b.key });
    if (owner) {
      const why = owner.status === 'PENDING' ? 'pending' : owner.openExceptionId ? 'open_exception' : owner.stepOwed ? 'step_owed' : null;
      if (why) {
        throw new AppError('CASE_NOT_FINAL', undefined, {
          reason: why,
          ourId: owner.ourId,
          ...(owner.openExceptionId ? { ownerExceptionId: owner.openExceptionId } : {}),
        });
      }
    }
    // A reopened break whose first adjustment is still being undone: undo it first (one live per movement).
    if (b.adjustmentState === 'REVERSING') await undoAdjustment(deps, b);
    if (b.differenceCents !== 0n) {
      // A reopened break (its first adjustment undone) posts anew under a key of its own.
      const n = b.adjustmentState === 'POSTED' ? b.adjustments : b.adjustments + 1;
      const key = n <= 1 ? `recon:${b.key}:accept_provider` : `recon:${b.key}:accept_provider:${n}`;
      try {
        await deps.ledger.postClearingAdjustment({
          idempotencyKey: key,
          clearing: b.rail,
          deltaCents: b.differenceCents,
          movement: b.movement,
          caseId,
          reason: `${b.key} ${caseId}: ${note}`.slice(0, 500),
        });
      } catch (err) {
        const other = err instanceof AppError && err.code === 'MOVEMENT_ALREADY_CORRECTED' ? String(err.details?.caseId ?? '') : '';
        if (!other || other === caseId) throw err;
        await deps.breaks.resolveLinked(b.key, other);
        deps.log.warn(
          { breakKey: b.key, movement: b.movement, linkedCase: other },
          'break resolved by the correction another case already posted for its movement',
        );
        return;
      }
      // The amount booked: a run that refreshed the difference meanwhile reopens the break and undoes it.
      await deps.breaks.markAdjusted(b.key, key, n, b.differenceCents);
    }
    await deps.breaks.resolve(b.key, 'accept_provider');
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

/**
 * The owner's record of a break's movement (FindSettlements): by our id on breb, ach and pse, by the
 * provider's id on breb-inbound; on pse and breb-inbound the leg of the break's key, and on a
 * breb-inbound return leg the return the break names (its `ourId`, the return's id: a payment may
 * have several); a pse refund is looked up by its return id (the break's `ourId`) and is the record of
 * that id. Undefined when the owner has none.
 */
async function ownerRecord(deps: ReconciliationDeps, b: BreakRecord): Promise<OurRecord | undefined> {
  const id = b.rail === 'breb-inbound' ? b.providerId : b.ourId;
  if (!id) return undefined;
  const records = await deps.ours.find(b.rail, [id]);
  if (b.rail !== 'pse' && b.rail !== 'breb-inbound') return records[0];
  if (isRefundBreak(b)) return records.find((r) => r.ourId === b.ourId);
  // Two legs: the payment (IN), and its reversal (pse) or a return to the payer (breb-inbound) (OUT).
  const out = b.rail === 'pse' ? b.key.endsWith(':reversal') : isReturnBreak(b);
  const isOut = (r: OurRecord) => (r.direction ? r.direction === 'OUT' : r.status === 'REVERSED' || r.status === 'REFUNDED' || r.status === 'RETURNED');
  if (!out) return records.find((r) => !isOut(r));
  // A RETURNED line without a return id names no return of ours: the payment's first return leg stands for it.
  return records.find((r) => isOut(r) && (b.rail !== 'breb-inbound' || !b.ourId || r.ourId === b.ourId));
}

/**
 * Undoes the adjustments of accepted breaks a later run no longer finds, or finds with another
 * difference (REVERSING, set in the run's transaction): ReverseCorrection under `<adjustment key>:reversed`
 * (idempotent; an adjustment its owner's booking already undid answers that), then REVERSED. Run after
 * each run and by the sweeper, so a crash in between is finished. Returns how many it undid.
 */
export async function reverseAdjustments(deps: Pick<ReconciliationDeps, 'breaks' | 'ledger' | 'log'>, limit = 100): Promise<number> {
  let n = 0;
  for (const b of await deps.breaks.reversing(limit)) {
    if (await undoAdjustment(deps, b)) n++;
  }
  return n;
}

async function undoAdjustment(deps: Pick<ReconciliationDeps, 'breaks' | 'ledger' | 'log'>, b: BreakRecord): Promise<boolean> {
  if (!b.adjustmentKey) return false;
  await deps.ledger.reverseCorrection({
    idempotencyKey: `${b.adjustmentKey}:reversed`,
    correctionKey: b.adjustmentKey,
    reason: `${b.key}: the provider's report no longer shows the difference accepted (${b.status === 'OPEN' ? 'another difference' : 'matched'})`,
  });
  await deps.breaks.markReversed(b.key, b.adjustmentKey);
  deps.log.warn(
    { breakKey: b.key, adjustmentKey: b.adjustmentKey, movement: b.movement },
    'accepted adjustment undone: a later run no longer finds its difference',
  );
  return true;
}
