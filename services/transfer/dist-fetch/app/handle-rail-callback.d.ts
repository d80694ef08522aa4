import type { TransferDeps } from './deps.js';
import type { TransferSaga } from './transfer-saga.js';
export interface RailCallbackCommand {
    rail: string;
    rawBody: Buffer;
    signature: string;
}
export interface RailCallbackResult {
    accepted: boolean;
    duplicate: boolean;
}
/**
 * A provider's outcome callback, passed through by the gateway untouched (POST /webhooks/rails/{rail}).
 * Authenticated by the HMAC over the raw bytes and a 300 s clock tolerance; idempotent by the
 * provider's event id and by the transfer's state (a second outcome for a finished transfer changes
 * nothing). COMPLETED commits the hold, FAILED releases it with the rail's message.
 */
export declare class HandleRailCallback {
    private readonly deps;
    private readonly saga;
    constructor(deps: TransferDeps, saga: TransferSaga);
    execute(cmd: RailCallbackCommand): Promise<RailCallbackResult>;
}
