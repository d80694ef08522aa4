import { PeriodicTask } from '@wallet/platform';
import { MESSAGES, reserveCommandOf } from './transfer-saga.js';
import { DISPATCHABLE_STATES } from '../domain/transfer.js';
import { finishExpired, finishRejected } from './approvals.js';
/**
 * Resumes sends stuck between saga steps (a crash, a rail outage, a lost callback). Each tick
 * leases the due live transfers (FOR UPDATE SKIP LOCKED, then moved ahead by a lease), so several
 * replicas never work on the same transfer at once, and then, per state:
 *
 * - RECEIVED past the grace period: its owner died before recording the reserve. The client got an
 *   error, so the transfer must not go out: REJECTED, or, if the reserve did land in the ledger,
 *   the hold is released and it is FAILED.
 * - RESERVED: accepted but not dispatched: dispatch (idempotent at the rail), with back-off; once
 *   RAIL_DISPATCH_TIMEOUT_SECONDS have passed, ask the rail whether it has it, else FAILED + released.
 * - EXECUTING (quorum reached, not dispatched yet): as RESERVED, after showing EXECUTING in the ledger.
 * - AWAITING_APPROVAL at its deadline: EXPIRED with the funds released; after a rejection whose
 *   release did not finish: the release and FAILED.
 * - DISPATCHED past RAIL_CONFIRM_TIMEOUT_SECONDS with no callback: GET the status at the rail and
 *   apply it; still pending → look again later.
 */
export class Sweeper {
    deps;
    saga;
    opts;
    task;
    ticks = 0;
    constructor(deps, saga, opts) {
        this.deps = deps;
        this.saga = saga;
        this.opts = opts;
        this.task = new PeriodicTask('transfer sweeper', opts.intervalMs, () => this.tick(), deps.log);
    }
    start() {
        this.task.start();
    }
    /** Stops leasing; the tick in progress finishes first. */
    stop() {
        return this.task.stop();
    }
    /** One pass; returns how many transfers it looked at. */
    async tick() {
        const { deps } = this;
        const s = deps.settings;
        if (++this.ticks % 60 === 0)
            await deps.store.purgeResolvedKeys(s.resolvedKeyTtlSeconds);
        const leaseMs = this.opts.leaseMs ?? Math.max(30_000, 4 * 5_000);
        const due = await deps.store.leaseDue(this.opts.batch, leaseMs, s.dispatchTimeoutSeconds);
        await Promise.all(due.map((d) => this.resume(d).catch((err) => {
            deps.log.warn({ transferId: d.transfer.id, state: d.transfer.state, err: err.message }, 'sweeper could not resume a transfer; will retry');
            return deps.store.reschedule(d.transfer.id, d.transfer.state, s.dispatchRetryBaseMs).catch(() => undefined);
        })));
        return due.length;
    }
    async resume({ transfer: t, dispatchExpired }) {
        switch (t.state) {
            case 'RECEIVED': return this.settleAbandoned(t);
            case 'RESERVED': return dispatchExpired ? this.dispatchTimedOut(t) : void (await this.saga.dispatch(t));
            case 'EXECUTING': return dispatchExpired ? this.dispatchTimedOut(t) : void (await this.saga.execute(t));
            case 'AWAITING_APPROVAL': return this.settleApproval(t);
            case 'DISPATCHED': return this.checkAtRail(t);
            default: return undefined;
        }
    }
    async settleAbandoned(t) {
        const { deps } = this;
        if (!(await deps.ledger.movementExists(t.companyId, t.id))) {
            await deps.store.transition(t, ['RECEIVED'], 'REJECTED', { rejectCode: 'ABANDONED', reason: 'abandoned before reserve', nextAttemptInMs: null }, null);
            deps.log.warn({ transferId: t.id }, 'abandoned transfer rejected (nothing was reserved)');
            return;
        }
        // The reserve landed but was never recorded: replay it (same key and body) to learn the hold, then release.
        const { holdId } = await deps.ledger.reserve(reserveCommandOf(t));
        await this.saga.fail({ ...t, holdId }, ['RECEIVED'], MESSAGES.abandoned, 'abandoned after reserve');
        deps.log.warn({ transferId: t.id }, 'abandoned transfer failed and its hold released');
    }
    /**
     * A multi-signature send the sweeper is due to look at: rejected (finish the release), expired
     * (mark it, release, EXPIRED) or still waiting (look again at its deadline).
     */
    async settleApproval(t) {
        const { deps } = this;
        if (!t.approval)
            return;
        const status = await deps.approvals.expireIfDue(t.approval.id);
        if (status === 'EXPIRED') {
            await finishExpired(this.saga, t);
            deps.log.info({ transferId: t.id, approvalId: t.approval.id }, 'approval expired; funds released');
            return;
        }
        if (status === 'REJECTED') {
            const a = await deps.approvals.status(t.approval.id);
            await finishRejected(this.saga, t, a?.rejectReason ?? null, null);
            return;
        }
        // Still PENDING: next look at its deadline.
        await deps.store.reschedule(t.id, 'AWAITING_APPROVAL', Math.max(0, t.approval.expiresAt.getTime() - deps.now().getTime()) + 50);
    }
    async dispatchTimedOut(t) {
        const { deps } = this;
        // An earlier attempt may have reached the rail: ask before giving up.
        const st = await deps.rails.status(t.rail, t.id);
        if ('found' in st && st.found)
            return this.applyRailStatus(t, st);
        if ('unavailable' in st && (await deps.store.dispatchWasAmbiguous(t.id))) {
            deps.log.warn({ transferId: t.id }, 'dispatch timed out but an attempt may have landed and the rail cannot say; retrying later');
            await deps.store.reschedule(t.id, t.state, deps.settings.dispatchRetryMaxMs);
            return;
        }
        await this.saga.fail(t, DISPATCHABLE_STATES, MESSAGES.dispatchTimeout, 'dispatch timeout');
    }
    async checkAtRail(t) {
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
    async applyRailStatus(t, st) {
        const { deps } = this;
        if (st.status === 'COMPLETED')
            await this.saga.complete(t, st.providerTransferId || null);
        else if (st.status === 'FAILED')
            await this.saga.railFailed(t, st.providerTransferId || null, st.errorMessage);
        else {
            if (DISPATCHABLE_STATES.includes(t.state))
                await this.saga.markDispatched(t, st.providerTransferId);
            await deps.store.reschedule(t.id, 'DISPATCHED', deps.settings.confirmTimeoutSeconds * 1000);
        }
    }
}
//# sourceMappingURL=sweeper.js.map