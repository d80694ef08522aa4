/**
 * The send saga's states. Each is recorded before the next step starts, so a crash anywhere is
 * resumed by the sweeper from the last recorded state (docs: services/transfer/README.md).
 *
 * ```
 * RECEIVED ──reserve ok──▶ RESERVED ──rail 202──▶ DISPATCHED ──callback / status COMPLETED──▶ COMPLETED
 *    │                        │                       └──────callback / status FAILED──────▶ FAILED
 *    │                        ├──rail 4xx at dispatch / dispatch timeout──────────────────▶ FAILED
 *    │                        └──(a callback may arrive first: it implies DISPATCHED)
 *    ├──reserve ok, threshold ≥ 2──▶ AWAITING_APPROVAL ──quorum──▶ EXECUTING ──rail 202──▶ DISPATCHED …
 *    │                                   ├──rejected by a signer (hold released)──▶ FAILED
 *    │                                   └──APPROVAL_TTL_SECONDS (hold released)──▶ EXPIRED
 *    ├──reserve refused (balance…)───────────────────────────────────────────────────────▶ REJECTED
 *    └──abandoned (owner crashed before recording the reserve) ──▶ REJECTED, or FAILED if the hold landed
 * ```
 *
 * EXECUTING behaves as RESERVED (accepted, funds held, to be dispatched) once the quorum is reached.
 * REJECTED transfers were never accepted: nothing stays reserved, no event, no reference held.
 * Users see PENDING for RECEIVED/RESERVED/DISPATCHED, then COMPLETED or FAILED; the multi-signature
 * states are shown as they are (CONTRACT §2).
 */
export const TRANSFER_STATES = [
    'RECEIVED', 'RESERVED', 'AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED', 'COMPLETED', 'FAILED', 'REJECTED', 'EXPIRED',
];
export const LIVE_STATES = ['RECEIVED', 'RESERVED', 'AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED'];
export const FINAL_STATES = ['COMPLETED', 'FAILED', 'REJECTED', 'EXPIRED'];
/** States whose gross amount counts towards the counterparty limits. */
export const COUNTED_STATES = ['RECEIVED', 'RESERVED', 'AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED', 'COMPLETED'];
/** Accepted, funds held, to be dispatched to the rail. */
export const DISPATCHABLE_STATES = ['RESERVED', 'EXECUTING'];
export function publicStatus(state) {
    switch (state) {
        case 'COMPLETED': return 'COMPLETED';
        case 'FAILED':
        case 'REJECTED': return 'FAILED';
        case 'AWAITING_APPROVAL': return 'AWAITING_APPROVAL';
        case 'EXECUTING': return 'EXECUTING';
        case 'EXPIRED': return 'EXPIRED';
        default: return 'PENDING';
    }
}
export function isFinal(state) {
    return FINAL_STATES.includes(state);
}
/** What the wallet is debited: amount + fee + IVA (CONTRACT §2). */
export function totalDebit(t) {
    return t.amount + t.fee.subtotalFee + t.fee.ivaAmount;
}
/** Exponential back-off for dispatch retries: base, 2·base, 4·base … capped. attempts ≥ 1. */
export function retryDelayMs(attempts, baseMs, maxMs) {
    const exp = Math.min(Math.max(attempts - 1, 0), 30);
    return Math.min(baseMs * 2 ** exp, maxMs);
}
//# sourceMappingURL=transfer.js.map