/** What the bulk payout use cases need from storage (docs/batches.md); persistence/batch.store.ts implements it. */

import type { BatchItemDraft, BatchItemRecord, BatchMove, BatchRecord, BatchState, BatchSummary, ItemStatus } from '../domain/batch.js';
import type { LimitUsage as Usage } from '../domain/counterparty-limits.js';
import type { BulkMove } from '../domain/transfer-machine.js';
import type { ApprovalRecord, ApprovalRef, TransferRecord } from '../domain/transfer.js';
import type { OutboxEvent, Signer } from './ports.js';

export interface KeyedBatch {
  batch: BatchRecord;
  sameRequest: boolean;
}
/** An item picked for execution: its transfer, inserted RECEIVED. */
export interface ExecutionPick {
  seq: number;
  transferId: string;
}
/** An item a re-check refused at execution. */
export interface ExecutionRefusal {
  seq: number;
  code: string;
  message: string;
}

/** One transfer moved by one bulk event of the send saga (its hold, its refusal code, its completion, its event). */
export interface TransferMove {
  id: string;
  holdId: string | null;
  rejectCode: string | null;
  /** When the move completes it (the ledger's commit instant). */
  completedAt?: Date;
  event: OutboxEvent | null;
}

export type BatchSignOutcome =
  | { kind: 'not_found' }
  | { kind: 'no_approval' }
  | { kind: 'expired' }
  | { kind: 'already_signed' }
  | { kind: 'not_pending' }
  | { kind: 'role_not_allowed' }
  | { kind: 'may_sign' }
  | { kind: 'signed'; quorum: boolean };

export type BatchRejectOutcome = { kind: 'not_found' } | { kind: 'no_approval' } | { kind: 'expired' } | { kind: 'not_pending' } | { kind: 'rejected' };

/** Fields a batch move may set alongside the new state. */
export interface BatchPatch {
  errorMessage?: string | null;
  /** The batch sweeper's next look, from now (null: never). */
  nextAttemptInMs?: number | null;
  completed?: boolean;
  cancelled?: boolean;
  /** Only while the batch's items are still these transfers (a stale writer of an earlier execution moves nothing). */
  executionOf?: string;
  /** The move into a final state keeps the batch's summary (it never changes again): the listing reads it. */
  finalSummary?: Pick<BatchSummary, 'totals' | 'byStatus'>;
}

/**
 * Every statement that changes a batch's state takes a `BatchMove` (made only by `BatchSaga.apply`),
 * and every one that changes its transfers' states a `BulkMove` (made only by `TransferSaga.applyBulk`).
 */
export interface BatchStore {
  findByIdempotencyKey(companyId: string, key: string, requestHash: string): Promise<KeyedBatch | undefined>;
  findByReference(companyId: string, reference: string, requestHash: string): Promise<KeyedBatch | undefined>;
  insert(
    b: BatchRecord,
    requestHash: string,
    idempotencyKey: string | null,
    items: BatchItemDraft[],
    event: OutboxEvent,
  ): Promise<'OK' | 'REFERENCE_TAKEN' | 'KEY_TAKEN'>;
  get(companyId: string, id: string): Promise<BatchRecord | undefined>;
  summaries(batches: BatchRecord[]): Promise<BatchSummary[]>;
  list(companyId: string, state: BatchState | null, limit: number, cursor: { createdAt: Date; id: string } | null): Promise<BatchRecord[]>;
  items(batchId: string, status: ItemStatus | null, afterSeq: number, limit: number): Promise<BatchItemRecord[]>;
  executableItems(batchId: string): Promise<BatchItemDraft[]>;
  /** Which candidates (normalised documents, destination fingerprints) are on the live AML list (one query). */
  amlHits(candidates: string[]): Promise<Set<string>>;
  /** Day and month usage by counterparty document and by destination fingerprint (`keys` mixes both; one query). */
  limitUsage(companyId: string, keys: string[], windows: { dayStart: Date; monthStart: Date }): Promise<Map<string, Usage>>;
  /** `execute` (VALIDATED → FUNDING) with the items recorded; `limitKeys`: the items' counterparty documents and destination fingerprints (their limit locks are taken, their usage read). */
  startExecution(
    b: BatchRecord,
    execute: BatchMove,
    limitKeys: string[],
    windows: { dayStart: Date; monthStart: Date },
    decide: (usage: Map<string, Usage>) => { picks: Array<ExecutionPick & { transfer: TransferRecord; counterparty: string }>; refusals: ExecutionRefusal[] },
    fundingLeaseMs: number,
    approval: ApprovalRef | null,
  ): Promise<{ picks: ExecutionPick[]; refusals: ExecutionRefusal[] } | undefined>;
  executedTransfers(batchId: string): Promise<TransferRecord[]>;
  /** Many transfers of the batch through one bulk move of the send saga's table (`TransferSaga.applyBulk`). */
  transitionTransfers(batchId: string, move: BulkMove, rows: TransferMove[], nextAttemptNow: boolean, reason: string): Promise<number>;
  /** FUNDING → AWAITING_APPROVAL with the approval opened and the items moved, in one transaction (multi-signature). */
  awaitApproval(
    b: BatchRecord,
    awaiting: BatchMove,
    approval: ApprovalRef,
    executionOf: string,
    move: BulkMove,
    rows: TransferMove[],
    itemsLookAfterMs: number,
  ): Promise<BatchRecord | undefined>;
  /**
   * A signature on the batch's approval, under its row lock (as `ApprovalStore.sign`); the one that
   * reaches the threshold moves, in the same transaction, the approval APPROVED, the batch
   * AWAITING_APPROVAL → EXECUTING (the batch sweeper's next look in `batchLookInMs`, as a funded
   * batch's) and every item AWAITING_APPROVAL → EXECUTING with its event.
   */
  signApproval(
    companyId: string,
    batchId: string,
    signer: Signer,
    approved: BatchMove,
    quorum: BulkMove,
    approvedEvent: (t: TransferRecord, signerEmails: string[]) => OutboxEvent,
    batchLookInMs: number,
    precheck: boolean,
  ): Promise<BatchSignOutcome>;
  /** The batch's approval REJECTED under its row lock; the batch and its items made due for the sweepers (the release follows). */
  rejectApproval(companyId: string, batchId: string, signer: Signer, reason: string | null, graceMs: number): Promise<BatchRejectOutcome>;
  /** The batch's approval: PENDING past its deadline → EXPIRED; its status after the call (undefined: the batch has none). */
  expireApprovalIfDue(batchId: string): Promise<ApprovalRecord | undefined>;
  /** The batch's compare-and-set from `move.from` to `move.to` with the patch, the items' status and the event, in one transaction. */
  transition(
    b: { id: string; companyId: string },
    move: BatchMove,
    patch: BatchPatch,
    evt: ((b: BatchRecord) => OutboxEvent) | null,
    items?: 'not_executed' | 'back_to_valid',
  ): Promise<BatchRecord | undefined>;
  /** Leases due batches: a FUNDING one for `fundingLeaseMs`, any other for `leaseMs`. */
  leaseDue(limit: number, leaseMs: number, fundingLeaseMs?: number): Promise<BatchRecord[]>;
  reschedule(id: string, state: BatchState, inMs: number | null): Promise<void>;
  leaseDispatchable(batchId: string, limit: number, leaseMs: number): Promise<TransferRecord[]>;
  /** Counts a dispatch attempt of many transfers before the rail is called (one statement); the ids still RESERVED / EXECUTING. */
  recordDispatchIntents(ids: string[]): Promise<Set<string>>;
  /** The send saga's `dispatched` for many items of a batch in one statement: provider id, dispatched_at, the confirm time-out, the event. */
  markDispatched(
    batchId: string,
    move: BulkMove,
    rows: Array<{ id: string; providerTransferId: string; event: OutboxEvent }>,
    confirmTimeoutMs: number,
  ): Promise<number>;
  liveItems(batchId: string): Promise<number>;
}
