import type { TransferRecord } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import { type SendInput } from './send-input.js';
import { type TransferSaga } from './transfer-saga.js';
export interface SendResult {
    transfer: TransferRecord;
    replayed: boolean;
}
export declare const SEND_MESSAGES: {
    anchorUnknown: string;
    anchorChanged: string;
    documentMismatch: string;
    bankNotRoutable: string;
    placeholderAccount: string;
    duplicateInFlight: string;
    ledgerUnknown: string;
};
/**
 * POST /transfers/send (§4.5, CONTRACT §9). Checks in the contract's order — schema → caps →
 * TARGET_DOCUMENT_REQUIRED → AML → directory / key state / NAME_MISMATCH (BREB) or bank account
 * (ACH) → counterparty limits → balance — the first failing check answers. Then the saga: the
 * transfer is recorded RECEIVED, funds reserved in the ledger (RESERVED: accepted), dispatched to
 * the rail (DISPATCHED), and the answer is 201 PENDING. With a `reference`, the request is
 * idempotent inside the window (see `withReference`).
 */
export declare class SendTransfer {
    private readonly deps;
    private readonly saga;
    constructor(deps: TransferDeps, saga: TransferSaga);
    execute(ctx: {
        companyId?: string | undefined;
        apiKeyId?: string | undefined;
    }, input: SendInput): Promise<SendResult>;
    /**
     * `reference` idempotency (§7.4, CONTRACT §2/§9). The first request claims (company, reference)
     * for the window; an identical request finds the claim and gets the original transfer in its
     * current state (`replayed`), waiting while the first is still being decided; a different body
     * is REFERENCE_CONFLICT. The claim is answered when the transfer is accepted (RESERVED) and
     * released when the request is refused before that (any 4xx/5xx), so a retry runs normally.
     * After the window the reference is free again.
     */
    private withReference;
    private process;
    /**
     * Multi-signature (threshold ≥ 2): the funds are reserved and the transfer waits for the
     * signatures; nothing is dispatched. The sweeper looks at it again when the approval expires.
     */
    private awaitApproval;
    private checkBrebKey;
    private checkBankAccount;
}
