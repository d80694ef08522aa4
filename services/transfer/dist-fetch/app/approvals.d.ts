import type { TransferRecord } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import type { ApprovalView } from './ports.js';
import { type TransferSaga } from './transfer-saga.js';
/** GET /dashboard/approvals: the company's approvals in one status, newest first. */
export declare class ListApprovals {
    private readonly deps;
    constructor(deps: TransferDeps);
    execute(caller: string | undefined, q: {
        status?: string | undefined;
        limit?: number;
        cursor?: string | undefined;
    }): Promise<{
        items: ApprovalView[];
        nextCursor: string | null;
    }>;
}
/**
 * POST /dashboard/approvals/{id}/sign (CONTRACT §5). The gateway has checked the session and the
 * TOTP code; here the role, the approval's state and the signer's uniqueness are decided under the
 * approval's lock. The signature that reaches the threshold moves the transfer to EXECUTING and
 * then dispatches it (the sweeper resumes it should this process stop in between).
 */
export declare class SignApproval {
    private readonly deps;
    private readonly saga;
    constructor(deps: TransferDeps, saga: TransferSaga);
    execute(caller: string | undefined, input: {
        approvalId: string;
        signer?: {
            userId?: string;
            email?: string;
            role?: string;
        };
    }): Promise<ApprovalView>;
}
/** POST /dashboard/approvals/{id}/reject: approval REJECTED, funds released, transfer FAILED with the reason. */
export declare class RejectApproval {
    private readonly deps;
    private readonly saga;
    constructor(deps: TransferDeps, saga: TransferSaga);
    execute(caller: string | undefined, input: {
        approvalId: string;
        signer?: {
            userId?: string;
            email?: string;
            role?: string;
        };
        reason?: string | undefined;
    }): Promise<ApprovalView>;
}
/** Release the hold and record FAILED (event `transfer.rejected`). Safe to repeat. */
export declare function finishRejected(saga: TransferSaga, t: TransferRecord, reason: string | null, rejectedBy: string | null): Promise<void>;
/** Release the hold and record EXPIRED (event `transfer.expired`). Safe to repeat. */
export declare function finishExpired(saga: TransferSaga, t: TransferRecord): Promise<void>;
