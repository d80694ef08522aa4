import type { Database } from '@wallet/platform';
import type { ApprovalStatus, ApprovalStore, ApprovalView, OutboxEvent, RejectOutcome, SignOutcome, Signer } from '../app/ports.js';
import type { TransferRecord } from '../domain/transfer.js';
/**
 * Approvals and their signatures (schema `transfer`). Every decision about an approval is taken
 * under `SELECT … FOR UPDATE` of its row, so signatures, a rejection and the expiry are serialised:
 * the quorum is reached once, and nothing is signed after a rejection or past the deadline.
 */
export declare class SqlApprovalStore implements ApprovalStore {
    private readonly db;
    constructor(db: Database);
    sign(companyId: string, approvalId: string, signer: Signer, approvedEvent: (t: TransferRecord, signerEmails: string[]) => OutboxEvent, graceMs: number): Promise<SignOutcome>;
    reject(companyId: string, approvalId: string, signer: Signer, reason: string | null, graceMs: number): Promise<RejectOutcome>;
    expireIfDue(approvalId: string): Promise<ApprovalStatus | undefined>;
    status(approvalId: string): Promise<{
        status: ApprovalStatus;
        expiresAt: Date;
        rejectReason: string | null;
    } | undefined>;
    get(companyId: string, approvalId: string): Promise<ApprovalView | undefined>;
    list(companyId: string, status: ApprovalStatus, limit: number, cursor: {
        createdAt: Date;
        id: string;
    } | null): Promise<ApprovalView[]>;
}
