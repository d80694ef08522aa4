import { type TransferRecord, type TransferState } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import { type TransferEventKind } from './events.js';
import type { ReserveCommand } from './ports.js';
export declare const MESSAGES: {
    dispatchTimeout: string;
    abandoned: string;
    railFailed: string;
    rejected: string;
    expired: string;
};
/** The message a rejected send carries: the signer's reason when given. */
export declare function rejectedMessage(reason: string | null): string;
/** The reserve request of a transfer, always built the same way from its record (so a retry replays it). */
export declare function reserveCommandOf(t: TransferRecord): ReserveCommand;
/**
 * The steps of a send after acceptance, shared by the send itself, the rail callbacks and the
 * sweeper. Every step is safe to run twice and concurrently: ledger calls carry keys derived from
 * the transfer id, rail dispatch is idempotent on the transfer id, and each state change is a
 * compare-and-set that writes its event only when it applies.
 */
export declare class TransferSaga {
    private readonly deps;
    constructor(deps: TransferDeps);
    callbackUrl(t: TransferRecord): string;
    /**
     * EXECUTING (quorum reached) → the ledger's movement shows EXECUTING, then the transfer is
     * dispatched like any send. The ledger step comes first: the rail's commit is accepted from
     * EXECUTING or PENDING, never from AWAITING_APPROVAL. Safe to repeat (the sweeper resumes here).
     */
    execute(t: TransferRecord): Promise<TransferRecord>;
    /** RESERVED/EXECUTING → DISPATCHED (rail took it), FAILED (rail refused it), or unchanged with a retry scheduled. */
    dispatch(t: TransferRecord): Promise<TransferRecord>;
    markDispatched(t: TransferRecord, providerTransferId: string): Promise<TransferRecord>;
    /** The rail confirmed: commit the hold (amount to rail clearing, fee, IVA), then COMPLETED. */
    complete(t: TransferRecord, providerTransferId: string | null, callbackEventId?: string): Promise<{
        transfer: TransferRecord;
        applied: boolean;
    }>;
    /** The rail failed it after dispatch: release the whole hold, then FAILED with the rail's message. */
    railFailed(t: TransferRecord, providerTransferId: string | null, errorMessage: string | null, callbackEventId?: string): Promise<{
        transfer: TransferRecord;
        applied: boolean;
    }>;
    /**
     * Release the hold (if any) and record FAILED. The release comes first: a crash in between leaves
     * a live transfer whose hold is closed, which the next attempt finishes (the release replays).
     */
    fail(t: TransferRecord, from: readonly TransferState[], message: string, reason: string, callbackEventId?: string, opts?: {
        to?: 'FAILED' | 'EXPIRED';
        event?: TransferEventKind;
        rejectedBy?: string;
    }): Promise<{
        transfer: TransferRecord;
        applied: boolean;
    }>;
    reload(t: TransferRecord): Promise<TransferRecord>;
}
