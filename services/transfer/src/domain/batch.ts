import type { Rail } from './rails.js';
import type { ApprovalRecord, Destination, FeeBreakdown } from './transfer.js';

/**
 * Bulk payouts (issue 22; docs/batches.md). A batch is validated when it is created (every check a
 * send gets, no money moved), then executed: its items become ordinary transfers (RECEIVED, owned by
 * the batch until its one ledger ReserveBatch lands), accepted together, then dispatched.
 *
 * The batch's own saga, as ONE table like the send's (`transfer-machine.ts`): every writer (the
 * execute request, the cancel request, the batch sweeper of any replica) moves a batch by a
 * compare-and-set of its state through `BatchStore.transition`, so of two writers exactly one wins.
 *
 * FUNDING is the intermediate state of the money step (the ReserveBatch): the items are recorded
 * RECEIVED before the ledger is called, so a crash anywhere is resumed by the sweeper, which calls
 * ReserveBatch again (idempotent per item key: it replays the holds that landed) and goes on. Users
 * see FUNDING as EXECUTING.
 */
export const BATCH_STATES = [
  'VALIDATED', 'REJECTED', 'FUNDING', 'AWAITING_APPROVAL', 'EXECUTING',
  'COMPLETED', 'PARTIALLY_FAILED', 'FAILED', 'EXPIRED', 'CANCELLED',
] as const;
export type BatchState = (typeof BATCH_STATES)[number];

export const BATCH_FINAL_STATES: readonly BatchState[] = ['REJECTED', 'COMPLETED', 'PARTIALLY_FAILED', 'FAILED', 'EXPIRED', 'CANCELLED'];

/** What users see. */
export type PublicBatchState = Exclude<BatchState, 'FUNDING'>;
export function publicBatchState(s: BatchState): PublicBatchState {
  return s === 'FUNDING' ? 'EXECUTING' : s;
}

/** `approval`: a dashboard signer's decision (the last signature, under the approval's row lock). */
export type BatchActor = 'request' | 'sweeper' | 'approval';

export interface BatchTransitionSpec {
  from: readonly BatchState[];
  /** Where it may go (the writer names one; `finished` picks it from the items' outcomes). */
  to: readonly BatchState[];
  by: readonly BatchActor[];
  /** The event written in the same statement. */
  emits?: 'batch.completed';
  why: string;
}

export const BATCH_EVENTS = ['execute', 'funded', 'awaiting_approval', 'approved', 'funding_refused', 'nothing_to_fund', 'finished', 'cancel', 'expire'] as const;
export type BatchEvent = (typeof BATCH_EVENTS)[number];

/** The batch saga. A batch is born VALIDATED or REJECTED (with its `batch.validated` event). */
export const BATCH_MACHINE: Readonly<Record<BatchEvent, BatchTransitionSpec>> = {
  execute: { from: ['VALIDATED'], to: ['FUNDING'], by: ['request'], why: 'the re-checks passed; its items are recorded RECEIVED before the one ReserveBatch' },
  funded: { from: ['FUNDING'], to: ['EXECUTING'], by: ['request', 'sweeper'], why: 'ReserveBatch landed (all holds): the items are accepted, dispatch starts' },
  awaiting_approval: {
    from: ['FUNDING'], to: ['AWAITING_APPROVAL'], by: ['request', 'sweeper'],
    why: 'ReserveBatch landed for a multi-signature company: its one approval is opened and the items wait AWAITING_APPROVAL with their holds',
  },
  approved: {
    from: ['AWAITING_APPROVAL'], to: ['EXECUTING'], by: ['approval'],
    why: 'the signature that reached the threshold, in the same transaction as the approval APPROVED and every item AWAITING_APPROVAL → EXECUTING',
  },
  funding_refused: { from: ['FUNDING'], to: ['VALIDATED'], by: ['request', 'sweeper'], why: 'the ledger refused ReserveBatch (balance, wallet): nothing held, the items are REJECTED, the batch can be executed again' },
  nothing_to_fund: { from: ['FUNDING'], to: ['FAILED'], by: ['request', 'sweeper'], emits: 'batch.completed', why: 'every item was refused by the re-checks at execution' },
  finished: {
    from: ['EXECUTING', 'AWAITING_APPROVAL'], to: ['COMPLETED', 'PARTIALLY_FAILED', 'FAILED', 'EXPIRED'], by: ['request', 'sweeper', 'approval'], emits: 'batch.completed',
    why: 'every executed item is final: COMPLETED, PARTIALLY_FAILED or FAILED by their outcomes; from AWAITING_APPROVAL once a rejection (FAILED) or the approval deadline (EXPIRED) released every item',
  },
  cancel: { from: ['VALIDATED'], to: ['CANCELLED'], by: ['request'], why: 'the client cancelled it before execution' },
  expire: { from: ['VALIDATED'], to: ['EXPIRED'], by: ['request', 'sweeper'], why: 'not executed within BATCH_TTL' },
};

/** The most items of one batch. */
export const MAX_BATCH_ITEMS = 10_000;
/** A validated batch not executed within this expires. */
export const BATCH_TTL_MS = 24 * 60 * 60 * 1000;

export type BatchMode = 'ALL' | 'VALID_ONLY';
export type BatchSource = 'JSON' | 'CSV';

/**
 * An item as stored. VALID / INVALID at validation; at execution VALID becomes EXECUTED (its status
 * is then its transfer's) or REJECTED (a re-check refused it); NOT_EXECUTED when the batch was
 * cancelled or expired.
 */
export type StoredItemStatus = 'VALID' | 'INVALID' | 'REJECTED' | 'EXECUTED' | 'NOT_EXECUTED';

/** An item's status as users see it (the transfer's public status once executed). */
export type ItemStatus = Exclude<StoredItemStatus, 'EXECUTED'> | 'PENDING' | 'AWAITING_APPROVAL' | 'EXECUTING' | 'COMPLETED' | 'FAILED' | 'EXPIRED';
export const FINISHED_ITEM_STATUSES: readonly ItemStatus[] = ['INVALID', 'REJECTED', 'NOT_EXECUTED', 'COMPLETED', 'FAILED', 'EXPIRED'];

/** A validated item: what its transfer will be. */
export interface BatchItemDraft {
  seq: number;
  line: number | null;
  status: 'VALID' | 'INVALID';
  rail: Rail | null;
  amount: bigint;
  fee: FeeBreakdown | null;
  targetName: string;
  targetDocument: string;
  /** Normalised document of the counterparty (limits, AML). */
  counterparty: string | null;
  reference: string | null;
  description: string | null;
  destination: Destination | null;
  errorCode: string | null;
  errorMessage: string | null;
  /**
   * The destination's keyed fingerprint (limits, AML; issue 36, finding 6), computed from `destination`
   * when the item is checked (not stored with the item: its transfer stores it).
   */
  destinationFingerprint?: string | null;
}

export interface BatchItemRecord extends BatchItemDraft {
  storedStatus: StoredItemStatus;
  transferId: string | null;
  /** The transfer's state when executed. */
  transferState: string | null;
  transferError: string | null;
  completedAt: Date | null;
}

export interface BatchTotals {
  rail: Rail;
  count: number;
  amount: bigint;
  fee: bigint;
  iva: bigint;
  total: bigint;
}

export interface BatchRecord {
  id: string;
  companyId: string;
  apiKeyId: string | null;
  state: BatchState;
  reference: string | null;
  description: string | null;
  mode: BatchMode;
  source: BatchSource;
  itemCount: number;
  validCount: number;
  invalidCount: number;
  ivaApplicable: boolean;
  createdAt: Date;
  expiresAt: Date;
  executedAt: Date | null;
  completedAt: Date | null;
  cancelledAt: Date | null;
  errorMessage: string | null;
}

export interface BatchSummary extends BatchRecord {
  /** The one approval of a multi-signature company's batch. */
  approval: ApprovalRecord | null;
  totals: BatchTotals[];
  byStatus: Array<{ status: ItemStatus; count: number; amount: bigint }>;
  finishedCount: number;
}

/** The outcome of an executed batch once every item is final (EXPIRED: its approval's deadline released every item). */
export function finalBatchState(byStatus: ReadonlyArray<{ status: ItemStatus; count: number }>): 'COMPLETED' | 'PARTIALLY_FAILED' | 'FAILED' | 'EXPIRED' {
  const n = (s: ItemStatus) => byStatus.find((b) => b.status === s)?.count ?? 0;
  const completed = n('COMPLETED');
  const failed = n('FAILED') + n('EXPIRED') + n('REJECTED');
  if (completed === 0) return n('EXPIRED') > 0 && n('FAILED') === 0 ? 'EXPIRED' : 'FAILED';
  return failed === 0 ? 'COMPLETED' : 'PARTIALLY_FAILED';
}

/** The public status of an item from its stored status and, once executed, its transfer's public status. */
export function itemStatus(stored: StoredItemStatus, transferPublic: string | null): ItemStatus {
  if (stored !== 'EXECUTED') return stored;
  return (transferPublic ?? 'PENDING') as ItemStatus;
}
