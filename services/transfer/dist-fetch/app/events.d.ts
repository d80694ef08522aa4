import { ledgerV1 } from '@wallet/proto';
import { type TransferRecord } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import type { OutboxEvent } from './ports.js';
/** Subjects of the transfer's events (stream TRANSFERS; docs/events.md). */
export declare const TRANSFER_SUBJECTS: {
    readonly created: "transfer.created";
    readonly dispatched: "transfer.dispatched";
    readonly completed: "transfer.completed";
    readonly failed: "transfer.failed";
    readonly awaiting_approval: "transfer.awaiting_approval";
    readonly approved: "transfer.approved";
    readonly rejected: "transfer.rejected";
    readonly expired: "transfer.expired";
};
export type TransferEventKind = keyof typeof TRANSFER_SUBJECTS;
export declare const protoRail: (r: "BREB" | "ACH") => ledgerV1.Rail;
/**
 * The event for a state change, built from the transfer as the transition left it (so it is
 * written in the same statement as the change; outbox id = event id).
 */
export declare function transferEvent(deps: TransferDeps, kind: TransferEventKind, extra?: {
    approvedBy?: string[];
    rejectedBy?: string;
}): (t: TransferRecord) => OutboxEvent;
