import type { TransferDeps } from './deps.js';
import { type TransferSaga } from './transfer-saga.js';
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
export declare class Sweeper {
    private readonly deps;
    private readonly saga;
    private readonly opts;
    private readonly task;
    private ticks;
    constructor(deps: TransferDeps, saga: TransferSaga, opts: {
        intervalMs: number;
        batch: number;
        leaseMs?: number;
    });
    start(): void;
    /** Stops leasing; the tick in progress finishes first. */
    stop(): Promise<void>;
    /** One pass; returns how many transfers it looked at. */
    tick(): Promise<number>;
    private resume;
    private settleAbandoned;
    /**
     * A multi-signature send the sweeper is due to look at: rejected (finish the release), expired
     * (mark it, release, EXPIRED) or still waiting (look again at its deadline).
     */
    private settleApproval;
    private dispatchTimedOut;
    private checkAtRail;
    private applyRailStatus;
}
