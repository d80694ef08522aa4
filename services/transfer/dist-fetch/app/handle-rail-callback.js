import { AppError, invalidRequest } from '@wallet/platform';
import { verifySignature } from '@wallet/platform';
import { isFinal } from '../domain/transfer.js';
import { isUuid } from './validation.js';
/**
 * A provider's outcome callback, passed through by the gateway untouched (POST /webhooks/rails/{rail}).
 * Authenticated by the HMAC over the raw bytes and a 300 s clock tolerance; idempotent by the
 * provider's event id and by the transfer's state (a second outcome for a finished transfer changes
 * nothing). COMPLETED commits the hold, FAILED releases it with the rail's message.
 */
export class HandleRailCallback {
    deps;
    saga;
    constructor(deps, saga) {
        this.deps = deps;
        this.saga = saga;
    }
    async execute(cmd) {
        const { deps } = this;
        if (!cmd.signature)
            throw new AppError('INVALID_SIGNATURE', 'Falta la firma del proveedor (X-Provider-Signature).');
        const verdict = verifySignature(deps.settings.callbackSecret, cmd.rawBody, cmd.signature, Math.floor(deps.now().getTime() / 1000));
        if (verdict !== 'OK') {
            deps.log.warn({ verdict, rail: cmd.rail }, 'rail callback refused');
            throw new AppError('INVALID_SIGNATURE', verdict === 'STALE'
                ? 'La firma del proveedor expiró (marca de tiempo fuera de tolerancia).'
                : 'La firma del proveedor no es válida.');
        }
        const body = parseBody(cmd.rawBody);
        if (cmd.rail !== body.rail)
            throw invalidRequest([{ path: 'rail', message: 'does not match the callback body' }]);
        let t;
        if (deps.store.getForCallback) {
            const r = await deps.store.getForCallback(body.eventId, body.transactionId);
            if (r.seen)
                return { accepted: true, duplicate: true };
            t = r.transfer;
        }
        else {
            if (await deps.store.callbackSeen(body.eventId))
                return { accepted: true, duplicate: true };
            t = await deps.store.get(body.transactionId);
        }
        if (!t) {
            // Not one of ours (we dispatch only what we recorded): acknowledge so the provider stops retrying.
            deps.log.warn({ rail: body.rail, transactionId: body.transactionId }, 'rail callback for an unknown transaction ignored');
            return { accepted: false, duplicate: false };
        }
        if (t.rail !== body.rail)
            throw invalidRequest([{ path: 'rail', message: 'is not the rail of this transaction' }]);
        if (isFinal(t.state)) {
            await deps.store.recordCallback(body.eventId, t.id, t.rail, body.status);
            return { accepted: true, duplicate: true };
        }
        // A transfer is dispatched only after RESERVED is recorded, so RECEIVED here means a provider
        // ahead of our own record: ask it to retry (it does, with back-off).
        if (t.state === 'RECEIVED')
            throw new AppError('SERVICE_UNAVAILABLE');
        const outcome = body.status === 'COMPLETED'
            ? await this.saga.complete(t, body.providerTransferId, body.eventId)
            : await this.saga.railFailed(t, body.providerTransferId, body.errorMessage, body.eventId);
        if (!outcome.applied)
            await deps.store.recordCallback(body.eventId, t.id, t.rail, body.status);
        deps.log.info({ transferId: t.id, rail: t.rail, status: body.status, applied: outcome.applied }, 'rail callback handled');
        return { accepted: true, duplicate: !outcome.applied };
    }
}
function parseBody(raw) {
    let b;
    try {
        const parsed = JSON.parse(raw.toString('utf8'));
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
            throw new Error('not an object');
        b = parsed;
    }
    catch {
        throw invalidRequest([{ path: 'rawBody', message: 'is not a JSON object' }]);
    }
    const problems = [];
    const s = (k) => (typeof b[k] === 'string' && b[k].length > 0 ? b[k] : null);
    const eventId = s('eventId');
    const transactionId = s('transactionId');
    const rail = s('rail');
    const status = s('status');
    if (!eventId || eventId.length > 200)
        problems.push({ path: 'eventId', message: 'is required' });
    if (!transactionId || !isUuid(transactionId))
        problems.push({ path: 'transactionId', message: 'must be a transaction id' });
    if (rail !== 'BREB' && rail !== 'ACH')
        problems.push({ path: 'rail', message: 'must be BREB or ACH' });
    if (status !== 'COMPLETED' && status !== 'FAILED')
        problems.push({ path: 'status', message: 'must be COMPLETED or FAILED' });
    if (problems.length > 0)
        throw invalidRequest(problems);
    return {
        eventId: eventId, transactionId: transactionId.toLowerCase(), rail: rail, status: status,
        providerTransferId: s('providerTransferId'), errorMessage: s('errorMessage')?.slice(0, 1000) ?? null,
    };
}
//# sourceMappingURL=handle-rail-callback.js.map