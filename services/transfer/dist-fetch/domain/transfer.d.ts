import type { KeyType } from './keys.js';
import type { Rail } from './rails.js';
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
export declare const TRANSFER_STATES: readonly ["RECEIVED", "RESERVED", "AWAITING_APPROVAL", "EXECUTING", "DISPATCHED", "COMPLETED", "FAILED", "REJECTED", "EXPIRED"];
export type TransferState = (typeof TRANSFER_STATES)[number];
export declare const LIVE_STATES: readonly TransferState[];
export declare const FINAL_STATES: readonly TransferState[];
/** States whose gross amount counts towards the counterparty limits. */
export declare const COUNTED_STATES: readonly TransferState[];
/** Accepted, funds held, to be dispatched to the rail. */
export declare const DISPATCHABLE_STATES: readonly TransferState[];
export type PublicStatus = 'PENDING' | 'COMPLETED' | 'FAILED' | 'AWAITING_APPROVAL' | 'EXECUTING' | 'EXPIRED';
export declare function publicStatus(state: TransferState): PublicStatus;
export declare function isFinal(state: TransferState): boolean;
/** The approval a multi-signature send waits for (its status lives in the approvals table). */
export interface ApprovalRef {
    id: string;
    threshold: number;
    expiresAt: Date;
}
export interface FeeBreakdown {
    fixedFee: bigint;
    variableFee: bigint;
    subtotalFee: bigint;
    ivaApplicable: boolean;
    ivaAmount: bigint;
    totalCharged: bigint;
}
export interface BrebDestination {
    kind: 'BREB';
    keyType: KeyType;
    keyValue: string;
    anchorHandle: string;
    bankName: string | null;
    bankAccountType: string | null;
}
export interface AchDestination {
    kind: 'ACH';
    bankId: number;
    bankName: string;
    bankAchCode: string;
    accountTypeId: number;
    /** Full number: needed to dispatch (also after a crash). Never logged; masked everywhere it is shown. */
    accountNumber: string;
    documentTypeId: number;
    documentNumber: string;
    holderFirstName: string;
    holderLastName: string;
}
export type Destination = BrebDestination | AchDestination;
export interface TransferRecord {
    id: string;
    companyId: string;
    apiKeyId: string | null;
    rail: Rail;
    state: TransferState;
    amount: bigint;
    fee: FeeBreakdown;
    targetName: string;
    targetDocument: string;
    reference: string | null;
    description: string | null;
    destination: Destination;
    holdId: string | null;
    providerTransferId: string | null;
    errorMessage: string | null;
    dispatchAttempts: number;
    /** Set on multi-signature sends. */
    approval: ApprovalRef | null;
    /** When the quorum was reached (the dispatch time-out counts from here for approved sends). */
    approvedAt: Date | null;
    createdAt: Date;
    dispatchedAt: Date | null;
    completedAt: Date | null;
}
/** What the wallet is debited: amount + fee + IVA (CONTRACT §2). */
export declare function totalDebit(t: {
    amount: bigint;
    fee: FeeBreakdown;
}): bigint;
/** Exponential back-off for dispatch retries: base, 2·base, 4·base … capped. attempts ≥ 1. */
export declare function retryDelayMs(attempts: number, baseMs: number, maxMs: number): number;
