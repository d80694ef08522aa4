import type { Rail } from '../domain/rails.js';
import type { FeeBreakdown } from '../domain/transfer.js';
import type { LedgerPort, ReserveCommand, WalletView } from '../app/ports.js';
/** Idempotency keys derived from the transfer (ARCHITECTURE rule 2): retries never double-post. */
export declare const ledgerKeys: {
    reserve: (id: string) => string;
    commit: (id: string) => string;
    release: (id: string) => string;
};
/** The ledger over gRPC, in the application's terms. The company goes in the call metadata. */
export declare class GrpcLedger implements LedgerPort {
    private readonly client;
    constructor(address: string, deadlineMs?: number);
    private ctx;
    computeFees(companyId: string, rail: Rail, amount: bigint, ivaApplicable: boolean): Promise<FeeBreakdown>;
    balances(companyId: string, ivaApplicable: boolean): Promise<WalletView[]>;
    reserve(cmd: ReserveCommand): Promise<{
        holdId: string;
    }>;
    commit(companyId: string, transferId: string, holdId: string): Promise<{
        completedAt: Date | null;
    }>;
    release(companyId: string, transferId: string, holdId: string, errorMessage: string, finalStatus?: 'FAILED' | 'EXPIRED'): Promise<void>;
    setMovementStatus(companyId: string, transferId: string, status: 'EXECUTING' | 'PENDING', expected: 'AWAITING_APPROVAL' | 'EXECUTING'): Promise<void>;
    movementExists(companyId: string, transferId: string): Promise<boolean>;
    close(): void;
}
