import type { KeyType } from '../domain/keys.js';
import type { Limits } from '../domain/counterparty-limits.js';
import type { Rail } from '../domain/rails.js';
import type { ApprovalRecord, ApprovalRef, Destination, FeeBreakdown, TransferRecord, TransferState } from '../domain/transfer.js';
import type { BulkMove } from '../domain/transfer-machine.js';
import type { TransferMove } from './batch-ports.js';

/** What the use cases need from the outside world; persistence/ and adapters/ implement it. */

// ───────────────────────────── storage ─────────────────────────────

export interface OutboxEvent {
  id: string;
  subject: string;
  payload: unknown;
  traceparent?: string;
}

export interface ReferenceRow {
  /** The claim was made by a request with the same hash (the store keeps only a keyed fingerprint of it). */
  sameRequest: boolean;
  transferId: string;
  createdAt: Date;
  answeredAt: Date | null;
}

export type ReferenceClaim = { owner: true } | { owner: false; existing: ReferenceRow };

/** A send's `Idempotency-Key` as stored with its transfer (the request hash kept only as a keyed fingerprint). */
export interface IdempotencyBinding {
  key: string;
  requestHash: string;
}

/** The transfer that holds a company's `Idempotency-Key`, compared with a request of some hash. */
export interface KeyedTransfer {
  transfer: TransferRecord;
  /** The transfer was made by a request with the same hash. */
  sameRequest: boolean;
  /** Why a REJECTED transfer was refused (a catalogue code, or ABANDONED). */
  rejectCode: string | null;
}

/** `insertWithinLimits` verdict: another transfer of the company already holds the Idempotency-Key; nothing inserted. */
export const IDEMPOTENCY_KEY_TAKEN = 'IDEMPOTENCY_KEY_TAKEN';
/** `insertWithinLimits` verdict: another request holds the `reference` inside its window; nothing inserted. */
export const REFERENCE_TAKEN = 'REFERENCE_TAKEN';

/** The `reference` claim a send makes in the statement that records it (CONTRACT §2/§9: one answer per reference within its window). */
export interface ReferenceBinding {
  requestHash: string;
  windowSeconds: number;
}

export interface ResolvedKey {
  anchorHandle: string;
  keyType: KeyType;
  keyValue: string;
  recipient: RecipientView;
}

/**
 * An AML list entry: a document (a party, as the payer company's NIT or a destination's document) or
 * a bank account (docs/security.md, "Screening on the destination account": what the money reaches, whatever document a send declares),
 * kept as its fingerprint with the bank code and a masked number — the full number is never stored.
 */
export interface AmlEntry {
  id: string;
  kind: 'DOCUMENT' | 'BANK_ACCOUNT';
  /** DOCUMENT entries. */
  documentNumber: string | null;
  /** BANK_ACCOUNT entries: the bank's ACH code and the number masked (`****1234`). */
  bankAccount: { bankCode: string; accountNumberMasked: string } | null;
  name: string | null;
  reason: string;
  createdAt: Date;
  removedAt: Date | null;
}

/** Fields a state transition may set alongside the new state. */
export interface TransitionPatch {
  holdId?: string;
  providerTransferId?: string;
  errorMessage?: string;
  /** Why a transfer was REJECTED (the catalogue code answered). */
  rejectCode?: string;
  dispatchedAt?: Date;
  completedAt?: Date;
  /** When the sweeper should look at the transfer next, from now (null: never). Final states clear it. */
  nextAttemptInMs?: number | null;
  /** Free text for the state history. */
  reason?: string;
  /** Accepting a multi-signature send: the approval row is created in the same statement. */
  approval?: ApprovalRef;
  /** The quorum was reached. */
  approvedAt?: Date;
  /** Entering RELEASING: which event FAILED writes, and who rejected it (multi-signature). */
  releaseEvent?: 'failed' | 'rejected';
  rejectedBy?: string;
  /** The request dispatches right after this transition: count the attempt before it is made. */
  dispatchIntent?: boolean;
  /** The fee the ledger reserved (a single send records it with its acceptance: the ledger computed it). */
  fee?: FeeBreakdown;
}

import type { MoneyExceptionStore } from '@wallet/platform';

export interface LeasedTransfer {
  transfer: TransferRecord;
  /** RAIL_DISPATCH_TIMEOUT_SECONDS has passed since the transfer was accepted for dispatch: its approval (multi-signature), its bulk acceptance (a batch line) or else its record (database clock). */
  dispatchExpired: boolean;
}

/** An entry to list: a document (with its normalised form) or a bank account (its fingerprint and masked copy). */
export type NewAmlEntry = { id: string; name: string | null; reason: string } & (
  { kind: 'DOCUMENT'; documentNumber: string; normalized: string } | { kind: 'BANK_ACCOUNT'; bankCode: string; fingerprint: string; masked: string }
);

export interface TransferStore {
  // `reference` idempotency (§7.4, CONTRACT §2/§9)
  claimReference(companyId: string, reference: string, requestHash: string, transferId: string, windowSeconds: number): Promise<ReferenceClaim>;
  /** The claim of (company, reference), compared with a request of hash `requestHash`. */
  getReference(companyId: string, reference: string, requestHash: string): Promise<ReferenceRow | undefined>;
  answerReference(companyId: string, reference: string, transferId: string): Promise<void>;
  releaseReference(companyId: string, reference: string, transferId: string): Promise<void>;

  // AML list
  /**
   * Whether any candidate is on the live list: normalised documents, and destination fingerprints
   * (`hm1:…`, never equal to a document, which holds only letters and digits).
   */
  amlHit(candidates: string[]): Promise<boolean>;
  addAmlEntry(e: NewAmlEntry): Promise<AmlEntry>;
  removeAmlEntry(id: string): Promise<AmlEntry | undefined>;

  // Resolve-key results remembered for `target_anchor_handle` sends
  rememberResolvedKey(companyId: string, r: ResolvedKey): Promise<void>;
  findResolvedKey(companyId: string, anchorHandle: string, maxAgeSeconds: number): Promise<ResolvedKey | undefined>;
  purgeResolvedKeys(olderThanSeconds: number): Promise<number>;

  /**
   * Inserts the transfer as RECEIVED if the counterparty limits allow it, and answers the verdict of
   * `checkCounterpartyLimits` ('OK' when inserted). The limits hold both for the counterparty
   * document and for the destination (`t.destinationFingerprint`): the usage of each is summed and
   * the larger one decides. The sums and the insert happen in one statement under the locks of
   * (company, counterparty) and (company, destination), so concurrent sends cannot both pass.
   * With `idempotency` the key is inserted in the same statement, unique per company: when another
   * transfer holds it, nothing is inserted and the verdict is IDEMPOTENCY_KEY_TAKEN.
   */
  insertWithinLimits(
    t: TransferRecord,
    counterparty: string,
    windows: { dayStart: Date; monthStart: Date },
    limits: Limits,
    nextAttemptInMs: number,
    idempotency?: IdempotencyBinding,
    reference?: ReferenceBinding,
  ): Promise<string>;
  /** The transfer holding the company's `Idempotency-Key`, if any (a binding never expires). */
  findByIdempotencyKey(companyId: string, key: string, requestHash: string): Promise<KeyedTransfer | undefined>;

  /**
   * Compare-and-set of the state (from one of `from`) with the patch, in ONE statement together with
   * the history row, the outbox event (built from the transfer as it will be), the `reference`
   * answer/release and the handled callback's id. Undefined when the state was not one of `from`.
   */
  transition(
    current: TransferRecord,
    from: readonly TransferState[],
    to: TransferState,
    patch: TransitionPatch,
    event: ((t: TransferRecord) => OutboxEvent) | null,
    callbackEventId?: string,
  ): Promise<TransferRecord | undefined>;

  /**
   * A rail's outcome applied without reading the transfer first (a callback's common case): the
   * compare-and-set of `transition`, also requiring the transfer to be of `rail` and the callback
   * `callbackEventId` never handled before (it is recorded in the same statement). Only for events
   * that emit nothing (an event is built from the transfer as read). Undefined when any condition
   * fails: the caller then reads the transfer and takes the general path.
   */
  transitionOnCallback?(
    id: string,
    rail: Rail,
    from: readonly TransferState[],
    to: TransferState,
    patch: TransitionPatch,
    callbackEventId: string,
  ): Promise<TransferRecord | undefined>;

  /**
   * A page of the rail's outcomes applied without reading the transfers first (a bulk callback): the
   * bulk move for every transfer of its rail in one of `move.from` whose callback was never handled,
   * in ONE statement (compare-and-set per row, history, the callbacks recorded, the sweeper's look
   * after `nextAttemptInMs`). Answers the transfers it moved, as they are now. The move emits nothing.
   */
  transitionOnCallbacks?(
    move: BulkMove,
    outcomes: ReadonlyArray<{ id: string; rail: Rail; callbackEventId: string; providerTransferId: string | null }>,
    nextAttemptInMs: number,
  ): Promise<TransferRecord[]>;

  /**
   * Many transfers into a final state at once (the bulk `committed`): compare-and-set per row, its
   * completion instant, history and the row's event (built from the transfer as it will be), in ONE
   * statement. Answers the ids it moved.
   */
  finishMany?(move: BulkMove, rows: TransferMove[]): Promise<Set<string>>;

  /** Counts a dispatch attempt BEFORE the rail is called (false: the transfer is no longer dispatchable). */
  recordDispatchIntent(id: string): Promise<boolean>;
  /**
   * A failed dispatch attempt: schedule the next one; a definite "not received" (`ambiguous` false)
   * is counted as a miss, so the attempt can no longer be in doubt.
   */
  recordDispatchAttempt(id: string, nextAttemptInMs: number, ambiguous: boolean, error: string): Promise<void>;
  /** Whether some dispatch attempt may have reached the rail (attempts counted > definite misses). */
  dispatchInDoubt(id: string): Promise<boolean>;
  /** Moves the sweeper's next look at a transfer still in `state` (null: parked, an operator decides). */
  reschedule(id: string, state: TransferState, inMs: number | null): Promise<void>;

  /** Money exceptions (CONTRACT §10), one per kind and transfer. */
  readonly exceptions: MoneyExceptionStore;

  get(id: string): Promise<TransferRecord | undefined>;
  /**
   * Leases up to `limit` live transfers whose `next_attempt_at` has passed (FOR UPDATE SKIP LOCKED,
   * then moved `leaseMs` ahead), so several sweepers never work on the same transfer at once.
   */
  leaseDue(limit: number, leaseMs: number, dispatchTimeoutSeconds: number): Promise<LeasedTransfer[]>;
  /** Callbacks already handled (dedupe by provider event id). */
  callbackSeen(eventId: string): Promise<boolean>;
  /** `callbackSeen` and `get` in one round trip (optional: used when the store has it). */
  getForCallback?(eventId: string, transferId: string): Promise<{ seen: boolean; transfer: TransferRecord | undefined }>;
  recordCallback(eventId: string, transferId: string, rail: Rail, status: string): Promise<void>;
}

// ───────────────────────────── approvals ─────────────────────────────

export type ApprovalStatus = ApprovalRecord['status'];
export type SignerRole = 'ADMIN' | 'OPERATOR' | 'VIEWER';

export interface Signer {
  userId: string;
  email: string;
  role: SignerRole;
}

export interface ApprovalView extends ApprovalRecord {
  transfer: TransferRecord;
}

/** The outcome of a signature, decided under the approval's row lock. */
export type SignOutcome =
  | { kind: 'not_found' }
  | { kind: 'expired' }
  | { kind: 'already_signed' }
  | { kind: 'not_pending' }
  | { kind: 'role_not_allowed' }
  | { kind: 'may_sign' }
  | { kind: 'signed'; quorum: boolean; transfer: TransferRecord };

export type RejectOutcome = { kind: 'not_found' } | { kind: 'expired' } | { kind: 'not_pending' } | { kind: 'rejected'; transfer: TransferRecord };

export interface ApprovalStore {
  /**
   * Adds the signature under a row lock on the approval; the signature that reaches the threshold
   * also moves the approval to APPROVED and the transfer AWAITING_APPROVAL → EXECUTING (with its
   * event) in the same transaction, so two last signatures at once reach the quorum exactly once.
   */
  sign(
    companyId: string,
    approvalId: string,
    signer: Signer,
    approvedEvent: (t: TransferRecord, signerEmails: string[]) => OutboxEvent,
    graceMs: number,
    precheck?: boolean,
  ): Promise<SignOutcome>;
  /** Marks the approval REJECTED (no signature can reach the quorum after this) and the transfer due for the sweeper. */
  reject(companyId: string, approvalId: string, signer: Signer, reason: string | null, graceMs: number): Promise<RejectOutcome>;
  /** PENDING past its deadline → EXPIRED; returns the approval's status after the call. */
  expireIfDue(approvalId: string): Promise<ApprovalStatus | undefined>;
  status(approvalId: string): Promise<{ status: ApprovalStatus; expiresAt: Date; rejectReason: string | null; rejectedBy: string | null } | undefined>;
  get(companyId: string, approvalId: string): Promise<ApprovalView | undefined>;
  list(companyId: string, status: ApprovalStatus, limit: number, cursor: { createdAt: Date; id: string } | null): Promise<ApprovalView[]>;
}

// ───────────────────────────── ledger ─────────────────────────────

export interface WalletView {
  rail: Rail;
  availableCents: bigint;
  pendingOutCents: bigint;
}

export interface ReserveCommand {
  companyId: string;
  apiKeyId: string | null;
  transferId: string;
  rail: Rail;
  amount: bigint;
  /**
   * The fee to reserve, or null: the ledger computes it from the company's schedule (a single send,
   * with no ComputeFees call first) and the hold it answers carries it.
   */
  fee: FeeBreakdown | null;
  /** Whether IVA applies to the fee (the company's regime); what the ledger computes with when `fee` is null. */
  ivaApplicable: boolean;
  reference: string | null;
  /** A multi-signature send: the movement starts AWAITING_APPROVAL. */
  awaitingApproval: boolean;
  /** An item of a bulk payout: shown on its movement. */
  batchId?: string | null;
  details: {
    targetName: string;
    targetDocument: string;
    bankName: string | null;
    bankAccountType: string | null;
    bankAccountNumber: string | null;
    description: string | null;
  };
}

/** A send's hold as it was reserved (the movement is the transfer's id). */
export interface CommitExpectation {
  transferId: string;
  holdId: string;
  rail: Rail;
  amount: bigint;
  fee: bigint;
  iva: bigint;
}

export interface LedgerPort {
  computeFees(companyId: string, rail: Rail, amount: bigint, ivaApplicable: boolean): Promise<FeeBreakdown>;
  /** The company's wallets; an empty list when none is provisioned. */
  balances(companyId: string, ivaApplicable: boolean): Promise<WalletView[]>;
  /** Idempotent on `transfer:<id>:reserve`; returns the hold id. Throws AppError (INSUFFICIENT_BALANCE, …). */
  /** The hold, with the fee it reserved (the one sent, or the one the ledger computed). */
  reserve(cmd: ReserveCommand): Promise<{ holdId: string; fee: FeeBreakdown }>;
  /**
   * A bulk payout's holds in one ledger command, all or nothing (each item idempotent on its own
   * `transfer:<id>:reserve`): the hold ids in the order given. INSUFFICIENT_BALANCE carries
   * details.wallets with the shortfall per wallet.
   */
  reserveBatch(companyId: string, cmds: ReserveCommand[]): Promise<{ holdIds: string[]; replayed: boolean }>;
  /** The fees of many amounts of one rail (one schedule read), in the order given. */
  computeFeesBatch(companyId: string, rail: Rail, amounts: bigint[], ivaApplicable: boolean): Promise<FeeBreakdown[]>;
  /**
   * Commits the transfer's hold. `expected` (the hold as reserved: rail, amount, fee, IVA) lets the
   * ledger commit in one statement without reading the hold; a hold that differs is read and
   * answered as without it.
   */
  commit(
    companyId: string,
    transferId: string,
    holdId: string,
    expected?: { rail: Rail; amount: bigint; fee: bigint; iva: bigint },
  ): Promise<{ completedAt: Date | null }>;
  /**
   * Commits many holds of the company in one ledger call (a page of the rail's confirmations), each
   * as `commit` with its expectation. Answers the transfers whose hold it committed (with the
   * completion instant); a transfer absent was not committed (its hold not as expected, closed, or a
   * twin's key): the caller commits it alone, which answers it exactly.
   */
  commitMany?(companyId: string, holds: CommitExpectation[]): Promise<Map<string, Date | null>>;
  /** Idempotent on `transfer:<id>:release`; the movement ends FAILED (default) or EXPIRED. */
  release(companyId: string, transferId: string, holdId: string, errorMessage: string, finalStatus?: 'FAILED' | 'EXPIRED'): Promise<void>;
  /** Status changes that move no money (multi-signature): AWAITING_APPROVAL → EXECUTING → PENDING. */
  setMovementStatus(companyId: string, transferId: string, status: 'EXECUTING' | 'PENDING', expected: 'AWAITING_APPROVAL' | 'EXECUTING'): Promise<void>;
  /** The same for many transfers of the company in one call (a bulk payout's items); how many changed. */
  setMovementStatuses(companyId: string, transferIds: string[], status: 'EXECUTING' | 'PENDING', expected: 'AWAITING_APPROVAL' | 'EXECUTING'): Promise<number>;
  /**
   * An operator's correcting entry (write-off of a payout the rail made after the release). Idempotent on
   * `key`; one live correction per external movement (MOVEMENT_ALREADY_CORRECTED when another case made it).
   */
  writeOffPayout(companyId: string, key: string, rail: Rail, amount: bigint, reason: string, target: { movement: string; caseId: string }): Promise<void>;
  /**
   * The fence before giving a send up: voids `transfer:<id>:reserve` so the Reserve can never land
   * (a late one is refused with RESERVE_VOIDED); if it already landed, answers its hold instead.
   */
  voidReserve(
    companyId: string,
    transferId: string,
    rail: Rail,
    ivaApplicable: boolean,
  ): Promise<
    | { voided: true }
    | {
        voided: false;
        holdId: string;
        holdStatus: 'OPEN' | 'COMMITTED' | 'RELEASED';
        /** The fee the hold reserved, when its split is known. */ fee?: FeeBreakdown;
      }
  >;
}

// ───────────────────────────── providers ─────────────────────────────

export interface RecipientView {
  firstName: string;
  lastName: string;
  fullName: string;
  bankName: string;
  bankAccountType: string;
  status: string;
  idType: string;
  idValue: string;
}

export type DirectoryResult =
  | { status: 'active' | 'inactive'; anchorHandle: string; keyType: KeyType; keyValue: string; recipient: RecipientView }
  | { status: 'not_found' }
  | { status: 'invalid' };

export interface BrebDirectoryPort {
  /** Throws AppError BREB_DIRECTORY_LOOKUP_FAILED when the directory is down or slow. */
  lookup(keyValue: string, keyType: KeyType): Promise<DirectoryResult>;
}

/**
 * A dispatch attempt's outcome. `unavailable` says whether the request may have reached the rail
 * (`ambiguous`: a time-out or a dropped connection after sending) or certainly did not (refused,
 * 503): only then is it safe to give up on the transfer without asking the rail first.
 */
export type DispatchResult =
  | { outcome: 'accepted'; providerTransferId: string }
  | { outcome: 'rejected'; message: string }
  | { outcome: 'unavailable'; ambiguous: boolean; error: string };

export type RailStatus =
  | { found: true; status: 'PENDING' | 'COMPLETED' | 'FAILED'; providerTransferId: string; errorMessage: string | null }
  | { found: false }
  | { unavailable: true; error: string };

export interface RailPort {
  dispatch(t: TransferRecord, callbackUrl: string): Promise<DispatchResult>;
  /**
   * Many dispatches at once (a batch's page), where the rail takes a bulk submission: each transfer's
   * result in the given order, as `dispatch` would have answered it. Optional: without it, each is
   * dispatched on its own.
   */
  dispatchMany?(items: ReadonlyArray<{ t: TransferRecord; callbackUrl: string }>): Promise<DispatchResult[]>;
  status(rail: Rail, transferId: string): Promise<RailStatus>;
  /** ACH account validation: valid, invalid (422) or the rail is down. */
  validateAchAccount(
    d: Extract<Destination, { kind: 'ACH' }>,
  ): Promise<{ result: 'valid' } | { result: 'invalid'; message: string } | { result: 'unavailable' }>;
}

// ───────────────────────────── bulk payouts ─────────────────────────────

export type * from './batch-ports.js';
export type * from './counterparty-ports.js';
