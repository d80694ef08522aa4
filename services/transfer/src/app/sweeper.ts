import { inSagaSpan, PeriodicTask } from '@wallet/platform';
import type { TransferDeps } from './deps.js';
import type { LeasedTransfer } from './ports.js';
import { MESSAGES, type TransferSaga } from './transfer-saga.js';
import { DISPATCHABLE_STATES, type TransferRecord } from '../domain/transfer.js';
import { finishExpired, finishRejected } from './approvals.js';

/**
 * Resumes sends stuck between saga steps (a crash, a rail outage, a lost callback). Each tick
 * leases the due live transfers (FOR UPDATE SKIP LOCKED, then moved ahead by a lease), so several
 * replicas never work on the same transfer at once, and then, per state:
 *
 * - RECEIVED past the grace period: its owner did not record the reserve's outcome. The sweeper
 *   wins RECEIVED → ABANDONING (or loses to the request's RESERVED and does nothing), then voids the
 *   reserve in the ledger: REJECTED; if the reserve had landed, its hold is released: FAILED.
 * - ABANDONING, RELEASING, EXPIRING, COMPLETING: the money step their winner owes (it died): run it.
 * - RESERVED: accepted but not dispatched: dispatch (idempotent at the rail), with back-off; once
 *   RAIL_DISPATCH_TIMEOUT_SECONDS have passed, ask the rail whether it has it, else FAILED + released.
 * - EXECUTING (quorum reached, not dispatched yet): as RESERVED, after showing EXECUTING in the ledger.
 * - AWAITING_APPROVAL at its deadline: EXPIRED with the funds released; after a rejection whose
 *   release did not finish: the release and FAILED.
 * - DISPATCHED past RAIL_CONFIRM_TIMEOUT_SECONDS with no callback: GET the status at the rail and
 *   apply it; still pending → look again later.
 */
export class Sweeper {
  private readonly task: PeriodicTask;
  private ticks = 0;

  constructor(
    private readonly deps: TransferDeps,
    private readonly saga: TransferSaga,
    private readonly opts: { intervalMs: number; batch: number; leaseMs?: number },
  ) {
    this.task = new PeriodicTask('transfer sweeper', opts.intervalMs, () => this.tick(), deps.log);
  }

  start(): void {
    this.task.start();
  }

  /** Stops leasing; the tick in progress finishes first. */
  stop(): Promise<void> {
    return this.task.stop();
  }

  /** One pass; returns how many transfers it looked at. */
  async tick(): Promise<number> {
    const { deps } = this;
    const s = deps.settings;
    if (++this.ticks % 60 === 0) await deps.store.purgeResolvedKeys(s.resolvedKeyTtlSeconds);
    const leaseMs = this.opts.leaseMs ?? Math.max(30_000, 4 * 5_000);
    const due = await deps.store.leaseDue(this.opts.batch, leaseMs, s.dispatchTimeoutSeconds);
    await Promise.all(
      due.map((d) =>
        // One trace per resumption (the poll that found it records none), linked to the send's.
        inSagaSpan(
          `transfer.sweep ${d.transfer.state}`,
          { traceparent: d.transfer.traceparent, attributes: { 'wallet.transfer_id': d.transfer.id, 'wallet.transfer_state': d.transfer.state } },
          () => this.resume(d),
        ).catch((err: unknown) => {
          deps.log.warn({ transferId: d.transfer.id, state: d.transfer.state, err: (err as Error).message }, 'sweeper could not resume a transfer; will retry');
          return deps.store.reschedule(d.transfer.id, d.transfer.state, s.dispatchRetryBaseMs).catch(() => undefined);
        }),
      ),
    );
    return due.length;
  }

  private async resume({ transfer: t, dispatchExpired }: LeasedTransfer): Promise<void> {
    switch (t.state) {
      case 'RECEIVED':
        return this.abandon(t);
      case 'RESERVED':
        return dispatchExpired ? this.dispatchTimedOut(t) : void (await this.saga.dispatch(t, 'sweeper'));
      case 'EXECUTING':
        return dispatchExpired ? this.dispatchTimedOut(t) : void (await this.saga.execute(t, 'sweeper'));
      case 'AWAITING_APPROVAL':
        return this.settleApproval(t);
      case 'DISPATCHED':
        return this.checkAtRail(t);
      case 'ABANDONING':
      case 'RELEASING':
      case 'EXPIRING':
      case 'COMPLETING':
        return void (await this.saga.settle(t, 'sweeper'));
      default:
        return undefined;
    }
  }

  /**
   * RECEIVED past the grace: the request did not record the reserve's outcome (it died, or is
   * stalled). The sweeper first wins RECEIVED → ABANDONING; if the request wins RESERVED first,
   * this does nothing. Only the winner fences the reserve (VoidReserve) and releases a hold that
   * had landed, so a reserve in flight can never be left open or released under a live transfer.
   */
  private async abandon(t: TransferRecord): Promise<void> {
    const won = await this.saga.apply(t, 'abandon', 'sweeper', { reason: 'not recorded within the grace' });
    if (won) await this.saga.settle(won, 'sweeper');
  }

  /**
   * A multi-signature send the sweeper is due to look at: rejected (win RELEASING, release),
   * expired (mark it, win EXPIRING, release) or still waiting (look again at its deadline).
   */
  private async settleApproval(t: TransferRecord): Promise<void> {
    const { deps } = this;
    if (!t.approval) return;
    const status = await deps.approvals.expireIfDue(t.approval.id);
    if (status === 'EXPIRED') {
      await finishExpired(this.saga, t, 'sweeper');
      deps.log.info({ transferId: t.id, approvalId: t.approval.id }, 'approval expired; funds released');
      return;
    }
    if (status === 'REJECTED') {
      const a = await deps.approvals.status(t.approval.id);
      await finishRejected(this.saga, t, a?.rejectReason ?? null, a?.rejectedBy ?? null, 'sweeper');
      return;
    }
    // Still PENDING: next look at its deadline.
    await deps.store.reschedule(t.id, 'AWAITING_APPROVAL', Math.max(0, t.approval.expiresAt.getTime() - deps.now().getTime()) + 50);
  }

  /**
   * RAIL_DISPATCH_TIMEOUT_SECONDS passed without the rail taking the transfer. An attempt may have
   * reached it (counted before it was made), so the rail is asked first; the hold is released only
   * on its definite "never received", or when no attempt can have reached it. If the rail cannot
   * answer while an attempt is in doubt, the funds stay held and an operator is told.
   */
  private async dispatchTimedOut(t: TransferRecord): Promise<void> {
    const { deps } = this;
    const st = await deps.rails.status(t.rail, t.id);
    if ('found' in st && st.found) return this.applyRailStatus(t, st);
    if ('unavailable' in st && (await deps.store.dispatchInDoubt(t.id))) {
      // Funds stay held; the exception (and its error log) tells an operator.
      await this.saga.contradiction(t, 'DISPATCH_OUTCOME_UNKNOWN', { dispatchAttempts: t.dispatchAttempts }, { source: 'status' });
      await deps.store.reschedule(t.id, t.state, deps.settings.dispatchRetryMaxMs);
      return;
    }
    const won = await this.saga.apply(t, 'dispatch_timed_out', 'sweeper', { errorMessage: MESSAGES.dispatchTimeout, reason: 'dispatch timeout' });
    if (won) await this.saga.settle(won, 'sweeper');
  }

  private async checkAtRail(t: TransferRecord): Promise<void> {
    const { deps } = this;
    const st = await deps.rails.status(t.rail, t.id);
    if ('unavailable' in st) {
      await deps.store.reschedule(t.id, 'DISPATCHED', deps.settings.dispatchRetryBaseMs * 4);
      return;
    }
    if (!st.found) {
      // The rail lost it (or never kept it): send it again; dispatch is idempotent on the id.
      const again = await deps.rails.dispatch(t, this.saga.callbackUrl(t));
      deps.log.warn({ transferId: t.id, outcome: again.outcome }, 'dispatched transfer unknown at the rail; dispatched again');
      await deps.store.reschedule(t.id, 'DISPATCHED', deps.settings.confirmTimeoutSeconds * 1000);
      return;
    }
    await this.applyRailStatus(t, st);
  }

  private async applyRailStatus(
    t: TransferRecord,
    st: { status: 'PENDING' | 'COMPLETED' | 'FAILED'; providerTransferId: string; errorMessage: string | null },
  ): Promise<void> {
    const { deps } = this;
    const outcome = { source: 'status' as const, providerTransferId: st.providerTransferId || null, errorMessage: st.errorMessage };
    if (st.status === 'COMPLETED') await this.saga.complete(t, { ...outcome, status: 'COMPLETED' });
    else if (st.status === 'FAILED') await this.saga.railFailed(t, { ...outcome, status: 'FAILED' });
    else {
      if (DISPATCHABLE_STATES.includes(t.state)) await this.saga.markDispatched(t, 'sweeper', st.providerTransferId);
      await deps.store.reschedule(t.id, 'DISPATCHED', deps.settings.confirmTimeoutSeconds * 1000);
    }
  }
}
