import { AppError } from '@wallet/platform';
import { ACH_ACCOUNT_TYPES } from '../domain/rails.js';
import { DISPATCHABLE_STATES, retryDelayMs } from '../domain/transfer.js';
import { transferEvent } from './events.js';
export const MESSAGES = {
    dispatchTimeout: 'No fue posible entregar la transferencia a la red dentro del tiempo límite; los fondos fueron liberados.',
    abandoned: 'La transferencia no se completó: el servicio se interrumpió antes de confirmarla; los fondos fueron liberados.',
    railFailed: 'La red rechazó la transferencia.',
    rejected: 'La transferencia fue rechazada en la aprobación con múltiples firmas; los fondos fueron liberados.',
    expired: 'La aprobación expiró sin alcanzar las firmas requeridas; los fondos fueron liberados.',
};
/** The message a rejected send carries: the signer's reason when given. */
export function rejectedMessage(reason) {
    return reason ? `${MESSAGES.rejected} Motivo: ${reason}` : MESSAGES.rejected;
}
/** The reserve request of a transfer, always built the same way from its record (so a retry replays it). */
export function reserveCommandOf(t) {
    const d = t.destination;
    return {
        companyId: t.companyId,
        apiKeyId: t.apiKeyId,
        transferId: t.id,
        rail: t.rail,
        amount: t.amount,
        fee: t.fee,
        reference: t.reference,
        awaitingApproval: t.approval !== null,
        details: {
            targetName: t.targetName,
            targetDocument: t.targetDocument,
            bankName: d.bankName ?? null,
            bankAccountType: d.kind === 'ACH' ? (ACH_ACCOUNT_TYPES[d.accountTypeId] ?? null) : d.bankAccountType,
            bankAccountNumber: d.kind === 'ACH' ? d.accountNumber : null,
            description: t.description,
        },
    };
}
const isCode = (err, ...codes) => err instanceof AppError && codes.includes(err.code);
/**
 * The steps of a send after acceptance, shared by the send itself, the rail callbacks and the
 * sweeper. Every step is safe to run twice and concurrently: ledger calls carry keys derived from
 * the transfer id, rail dispatch is idempotent on the transfer id, and each state change is a
 * compare-and-set that writes its event only when it applies.
 */
export class TransferSaga {
    deps;
    constructor(deps) {
        this.deps = deps;
    }
    callbackUrl(t) {
        return `${this.deps.settings.callbackBaseUrl.replace(/\/$/, '')}/${t.rail === 'BREB' ? 'breb' : 'ach'}`;
    }
    /**
     * EXECUTING (quorum reached) → the ledger's movement shows EXECUTING, then the transfer is
     * dispatched like any send. The ledger step comes first: the rail's commit is accepted from
     * EXECUTING or PENDING, never from AWAITING_APPROVAL. Safe to repeat (the sweeper resumes here).
     */
    async execute(t) {
        if (t.state !== 'EXECUTING')
            return t;
        try {
            await this.deps.ledger.setMovementStatus(t.companyId, t.id, 'EXECUTING', 'AWAITING_APPROVAL');
        }
        catch (err) {
            // Already further (an earlier attempt dispatched it and the rail answered): go on.
            if (!isCode(err, 'INVALID_STATE_TRANSITION'))
                throw err;
        }
        return this.dispatch(t);
    }
    /** RESERVED/EXECUTING → DISPATCHED (rail took it), FAILED (rail refused it), or unchanged with a retry scheduled. */
    async dispatch(t) {
        const { deps } = this;
        const res = await deps.rails.dispatch(t, this.callbackUrl(t));
        if (res.outcome === 'accepted')
            return this.markDispatched(t, res.providerTransferId);
        if (res.outcome === 'rejected')
            return (await this.fail(t, DISPATCHABLE_STATES, res.message, 'rail rejected at dispatch')).transfer;
        const attempts = t.dispatchAttempts + 1;
        const delay = retryDelayMs(attempts, deps.settings.dispatchRetryBaseMs, deps.settings.dispatchRetryMaxMs);
        await deps.store.recordDispatchAttempt(t.id, delay, res.ambiguous, res.error);
        return { ...t, dispatchAttempts: attempts };
    }
    async markDispatched(t, providerTransferId) {
        const { deps } = this;
        const next = await deps.store.transition(t, DISPATCHABLE_STATES, 'DISPATCHED', {
            ...(providerTransferId ? { providerTransferId } : {}), dispatchedAt: deps.now(), nextAttemptInMs: deps.settings.confirmTimeoutSeconds * 1000,
        }, transferEvent(deps, 'dispatched'));
        if (next)
            deps.eventsWritten();
        if (next && t.state === 'EXECUTING') {
            // The listing shows PENDING from here; a commit that outran this leaves COMPLETED as it is.
            await deps.ledger.setMovementStatus(t.companyId, t.id, 'PENDING', 'EXECUTING').catch((err) => {
                if (!isCode(err, 'INVALID_STATE_TRANSITION'))
                    deps.log.warn({ transferId: t.id, err: err.message }, 'could not show the approved transfer as PENDING in the ledger');
            });
        }
        return next ?? (await this.reload(t));
    }
    /** The rail confirmed: commit the hold (amount to rail clearing, fee, IVA), then COMPLETED. */
    async complete(t, providerTransferId, callbackEventId) {
        const { deps } = this;
        if (DISPATCHABLE_STATES.includes(t.state))
            t = await this.markDispatched(t, providerTransferId ?? '');
        if (t.state !== 'DISPATCHED' || !t.holdId)
            return { transfer: t, applied: false };
        let completedAt;
        try {
            completedAt = (await deps.ledger.commit(t.companyId, t.id, t.holdId)).completedAt;
        }
        catch (err) {
            // The hold was closed the other way (a concurrent FAILED outcome won): nothing to apply.
            if (isCode(err, 'INVALID_STATE_TRANSITION'))
                return { transfer: await this.reload(t), applied: false };
            throw err;
        }
        const next = await deps.store.transition(t, ['DISPATCHED'], 'COMPLETED', {
            completedAt: completedAt ?? deps.now(), ...(providerTransferId ? { providerTransferId } : {}), nextAttemptInMs: null,
        }, transferEvent(deps, 'completed'), callbackEventId);
        if (next)
            deps.eventsWritten();
        return next ? { transfer: next, applied: true } : { transfer: await this.reload(t), applied: false };
    }
    /** The rail failed it after dispatch: release the whole hold, then FAILED with the rail's message. */
    async railFailed(t, providerTransferId, errorMessage, callbackEventId) {
        if (DISPATCHABLE_STATES.includes(t.state))
            t = await this.markDispatched(t, providerTransferId ?? '');
        if (t.state !== 'DISPATCHED')
            return { transfer: t, applied: false };
        return this.fail(t, ['DISPATCHED'], errorMessage || MESSAGES.railFailed, 'rail failed', callbackEventId);
    }
    /**
     * Release the hold (if any) and record FAILED. The release comes first: a crash in between leaves
     * a live transfer whose hold is closed, which the next attempt finishes (the release replays).
     */
    async fail(t, from, message, reason, callbackEventId, opts = {}) {
        const { deps } = this;
        const to = opts.to ?? 'FAILED';
        if (t.holdId) {
            try {
                await deps.ledger.release(t.companyId, t.id, t.holdId, message, to);
            }
            catch (err) {
                // Already released under this key with another message: the hold is closed, go on.
                if (!isCode(err, 'REFERENCE_CONFLICT')) {
                    // Committed meanwhile (a COMPLETED outcome won): nothing to fail.
                    if (isCode(err, 'INVALID_STATE_TRANSITION'))
                        return { transfer: await this.reload(t), applied: false };
                    throw err;
                }
            }
        }
        const next = await deps.store.transition(t, from, to, { errorMessage: message, reason, nextAttemptInMs: null, ...(t.holdId ? { holdId: t.holdId } : {}) }, transferEvent(deps, opts.event ?? (to === 'EXPIRED' ? 'expired' : 'failed'), opts.rejectedBy ? { rejectedBy: opts.rejectedBy } : {}), callbackEventId);
        if (next)
            deps.eventsWritten();
        return next ? { transfer: next, applied: true } : { transfer: await this.reload(t), applied: false };
    }
    async reload(t) {
        return (await this.deps.store.get(t.id)) ?? t;
    }
}
//# sourceMappingURL=transfer-saga.js.map