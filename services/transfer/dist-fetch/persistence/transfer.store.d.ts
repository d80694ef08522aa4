import { type Database } from '@wallet/platform';
import type { LimitUsage } from '../domain/counterparty-limits.js';
import type { Rail } from '../domain/rails.js';
import { type Destination, type TransferRecord, type TransferState } from '../domain/transfer.js';
import type { AmlEntry, OutboxEvent, ReferenceClaim, ReferenceRow, ResolvedKey, TransferStore, TransitionPatch, LeasedTransfer } from '../app/ports.js';
export interface TransferRow {
    id: string;
    company_id: string;
    api_key_id: string | null;
    rail: Rail;
    state: TransferState;
    amount: string;
    fixed_fee: string;
    variable_fee: string;
    subtotal_fee: string;
    iva_applicable: boolean;
    iva_amount: string;
    total_charged: string;
    target_name: string;
    target_document: string;
    reference: string | null;
    description: string | null;
    destination: Destination;
    hold_id: string | null;
    provider_transfer_id: string | null;
    error_message: string | null;
    dispatch_attempts: number;
    approval_id: string | null;
    approval_threshold: number | null;
    approval_expires_at: Date | string | null;
    approved_at: Date | string | null;
    created_at: Date | string;
    dispatched_at: Date | string | null;
    completed_at: Date | string | null;
}
export declare function toTransfer(r: TransferRow): TransferRecord;
/** The transfer service's storage on Postgres (schema `transfer`), in plain SQL. */
export declare class SqlTransferStore implements TransferStore {
    private readonly db;
    private pool;
    private readonly statementNames;
    constructor(db: Database);
    /**
     * A single statement outside a transaction, as a named prepared statement (planned once per
     * connection; MikroORM's `execute` would inline the values and re-plan every call). `?` placeholders.
     */
    private run;
    claimReference(companyId: string, reference: string, requestHash: string, transferId: string, windowSeconds: number): Promise<ReferenceClaim>;
    getReference(companyId: string, reference: string): Promise<ReferenceRow | undefined>;
    answerReference(companyId: string, reference: string, transferId: string): Promise<void>;
    releaseReference(companyId: string, reference: string, transferId: string): Promise<void>;
    amlHit(documents: string[]): Promise<boolean>;
    addAmlEntry(e: {
        id: string;
        documentNumber: string;
        normalized: string;
        name: string | null;
        reason: string;
    }): Promise<AmlEntry>;
    removeAmlEntry(id: string): Promise<AmlEntry | undefined>;
    rememberResolvedKey(companyId: string, r: ResolvedKey): Promise<void>;
    findResolvedKey(companyId: string, anchorHandle: string, maxAgeSeconds: number): Promise<ResolvedKey | undefined>;
    purgeResolvedKeys(olderThanSeconds: number): Promise<number>;
    insertWithinLimits(t: TransferRecord, counterparty: string, windows: {
        dayStart: Date;
        monthStart: Date;
    }, decide: (usage: LimitUsage) => string, nextAttemptInMs: number): Promise<string>;
    transition(current: TransferRecord, from: readonly TransferState[], to: TransferState, patch: TransitionPatch, event: ((t: TransferRecord) => OutboxEvent) | null, callbackEventId?: string): Promise<TransferRecord | undefined>;
    recordDispatchAttempt(id: string, nextAttemptInMs: number, ambiguous: boolean, error: string): Promise<void>;
    dispatchWasAmbiguous(id: string): Promise<boolean>;
    reschedule(id: string, state: TransferState, inMs: number): Promise<void>;
    get(id: string): Promise<TransferRecord | undefined>;
    leaseDue(limit: number, leaseMs: number, dispatchTimeoutSeconds: number): Promise<LeasedTransfer[]>;
    getForCallback(eventId: string, transferId: string): Promise<{
        seen: boolean;
        transfer: TransferRecord | undefined;
    }>;
    callbackSeen(eventId: string): Promise<boolean>;
    recordCallback(eventId: string, transferId: string, rail: Rail, status: string): Promise<void>;
}
/**
 * The compare-and-set of a transfer's state as ONE statement (history row, outbox event, reference
 * answer/release, handled callback and, for a multi-signature acceptance, the approval row), so it
 * runs alone or inside a transaction alike.
 */
export declare function transitionStatement(current: TransferRecord, from: readonly TransferState[], to: TransferState, patch: TransitionPatch, event: ((t: TransferRecord) => OutboxEvent) | null, callbackEventId?: string): {
    sql: string;
    params: unknown[];
};
