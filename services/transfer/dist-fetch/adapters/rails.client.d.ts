import { type Logger } from '@wallet/platform';
import type { Rail } from '../domain/rails.js';
import type { AchDestination, TransferRecord } from '../domain/transfer.js';
import type { DispatchResult, RailPort, RailStatus } from '../app/ports.js';
/**
 * The Bre-B rail and the ACH rail over HTTP (docs/sandbox.md). Dispatch is idempotent on
 * `transactionId` (= the transfer id) at the rail, so retrying after any failure is safe.
 */
export declare class HttpRails implements RailPort {
    private readonly urls;
    private readonly timeoutMs;
    private readonly log;
    constructor(urls: {
        breb: string;
        ach: string;
    }, timeoutMs: number, log: Logger);
    private base;
    dispatch(t: TransferRecord, callbackUrl: string): Promise<DispatchResult>;
    private dispatchResult;
    status(rail: Rail, transferId: string): Promise<RailStatus>;
    validateAchAccount(d: AchDestination): Promise<{
        result: 'valid';
    } | {
        result: 'invalid';
        message: string;
    } | {
        result: 'unavailable';
    }>;
}
