import type { Instant } from '@wallet/platform';
import type { Entry, PostingKind, StoredPostingKind } from '../domain/postings.js';
import type { FeeSchedule } from '../domain/fees.js';
import type { FeeOperation, MovementRail, WalletRail } from '../domain/rails.js';
import type { Hold, HoldStatus, Movement, MovementDetails, MovementStatus, MovementType } from '../domain/movements.js';
import type { BalanceAlertKind, BalanceAlertSettings, BalanceAlertState } from '../domain/balance-alerts.js';

/** What the application needs from storage (implemented by persistence/ledger.store.ts). */

export interface WalletBalance {
  companyId: string;
  rail: WalletRail;
  availableCents: bigint;
  pendingOutCents: bigint;
  version: bigint;
}

/** A wallet's balance at an instant, from the journal. */
export interface BalanceAt {
  availableCents: bigint;
  pendingOutCents: bigint;
  /** Postings on the wallet at or before the instant. */
  postings: bigint;
}

/** A keyset position in a statement: a posting's created_at (ISO, microseconds, as stored) and id. */
export interface StatementCursor {
  createdAt: string;
  id: string;
}

export interface StatementLineRow {
  postingId: string;
  postingKind: string;
  postedAt: Instant; // exactly the posting's created_at: with postingId, the next page's cursor
  effectCents: bigint;
  feeCents: bigint;
  ivaCents: bigint;
  movement: Movement | null;
}

/** An event to write to the outbox in the same statement as its change. */
export interface OutboxEvent {
  id: string;
  subject: string;
  payload: unknown;
  traceparent?: string;
  /**
   * The payload's `occurredAt` is the statement's own instant (the journal's, with microseconds), set
   * by the statement that writes the event: the same instant as the rows it writes (a move's legs).
   */
  occurredAtOfStatement?: boolean;
}

export interface NewMovement {
  id: string;
  companyId: string;
  type: MovementType;
  rail: MovementRail;
  walletRail: WalletRail;
  status: MovementStatus;
  amount: bigint;
  totalFee: bigint;
  ivaAmount: bigint;
  netAmount: bigint;
  reference: string | null;
  apiKeyId: string | null;
  details: MovementDetails;
  completed: boolean;
  /** A leg of a move between the company's own wallets: the move (its posting's id). */
  walletMoveId?: string;
}

export interface NewHold {
  id: string;
  companyId: string;
  rail: WalletRail;
  amount: bigint;
  fee: bigint;
  iva: bigint;
  total: bigint;
  /** The fixed part of `fee`. */
  fixedFee: bigint;
  feeOperation: FeeOperation;
  movementId: string;
  /** A return's hold (ReserveReturn): the inflow movement it returns and the settlement account its Commit credits. */
  returnOf?: string;
  returnAccount?: string;
}

/**
 * One posting and everything that moves with it, applied atomically or not at all:
 * the idempotency record, the entries, the wallet change, the hold and movement changes and the
 * outbox event. The write is guarded: by the hold still being OPEN when `closeHold` is set,
 * else by the conditional wallet update (available must cover a debit), else unconditionally.
 */
export interface PostingWrite {
  posting: {
    id: string;
    kind: PostingKind;
    idempotencyKey: string;
    requestHash: string;
    companyId: string;
    rail: WalletRail;
    movementId: string | null;
    holdId: string | null;
    /** Why an operator's correcting entry was posted (correction, recon_adjustment); stored as given. */
    reason?: string | null;
  };
  entries: Entry[];
  wallet: { companyId: string; rail: WalletRail; availableDelta: bigint; pendingOutDelta: bigint } | null;
  /**
   * A move between the company's own wallets (kind `move`): the wallet credited, with `wallet` the one
   * debited (only if it covers it), and the credited leg's movement. Both wallets are locked in rail
   * order before the statement, so two opposite moves never deadlock.
   */
  counterWallet?: { companyId: string; rail: WalletRail; availableDelta: bigint };
  counterMovement?: NewMovement;
  /** Events written with the posting's own (same statement, same outbox). */
  alsoEvents?: OutboxEvent[];
  newMovement?: NewMovement;
  newHold?: NewHold;
  closeHold?: {
    id: string;
    companyId: string;
    status: Exclude<HoldStatus, 'OPEN'>;
    /**
     * A close written without reading the hold first (Commit with the caller's expectation): the
     * guard also requires these columns and the movement in one of `movementStatuses`, so the
     * posting (built from them) is the one a read would have built, or nothing is written.
     */
    expect?: { rail: string; amount: bigint; fee: bigint; iva: bigint; feeOperation: string; movementId: string; movementStatuses: readonly string[] };
  };
  /**
   * A reversal: the guard is `update movements set status = 'REVERSED' … where status = 'COMPLETED'
   * and returned_cents = 0` on this TRANSFER_IN movement (so an inflow is reversed at most once, and
   * never while a return of it is claimed: made or under way), and the wallet change is applied
   * unconditionally (available may go below zero).
   */
  reverseMovement?: { id: string; companyId: string; errorMessage: string | null };
  movementUpdate?: { id: string; companyId: string; status: MovementStatus; completed: boolean; errorMessage: string | null };
  /**
   * A correcting entry (one live per external movement): registered live for its external movement in `ledger.corrections`
   * in the same statement (a second live one of the movement is a unique violation: nothing written).
   * With `reverses`: it undoes that live correction instead, whose row is the guard (already undone:
   * nothing written).
   */
  correction?: { movement: string; caseId: string; reverses?: string };
  /**
   * A return's claim on the inflow it returns (`ledger.movements.returned_cents`): `delta` > 0 with a
   * return's Reserve (the claim is part of the guard: applied only while the inflow is COMPLETED and
   * its returns stay within its gross, and the statement runs in a transaction rolled back when the
   * wallet then refuses the debit); < 0 with its Release (applied with the hold's close).
   */
  returnClaim?: { movementId: string; companyId: string; delta: bigint };
  event: OutboxEvent;
}

/** A live correcting entry of an external movement (ledger.corrections), with its entries. */
export interface LiveCorrection {
  postingId: string;
  movement: string;
  caseId: string;
  idempotencyKey: string;
  kind: PostingKind;
  companyId: string;
  rail: WalletRail;
  entries: Entry[];
}

export type PostingOutcome =
  | {
      status: 'applied';
      movement: Movement | null;
      hold: Hold | null;
      /** A move's credited leg (`counterMovement`), as the statement wrote it. */
      counterMovement?: Movement;
    }
  /** The guard did not hold: no wallet, not enough available, or the hold is no longer OPEN. */
  | { status: 'not_applied' }
  /** A unique key was taken: the idempotency key (by a committed posting) or the movement id. */
  | { status: 'duplicate' };

/**
 * Many postings of one company applied in ONE transaction, all or nothing (ReserveBatch). Each
 * posting's own `wallet` is left out: the wallets change once each, by the sum of their postings'
 * changes, in the order given (the lock order), debits guarded by `available_cents >= debit`.
 */
export interface BatchPostingWrite {
  companyId: string;
  wallets: Array<{ rail: WalletRail; availableDelta: bigint; pendingOutDelta: bigint; postings: number }>;
  postings: Array<Omit<PostingWrite, 'wallet'>>;
}

/** A wallet a batch could not debit: missing, or its available short of the batch's debit on it. */
export type RefusedWallet = { rail: WalletRail; missing: true } | { rail: WalletRail; missing: false; requiredCents: bigint; availableCents: bigint };

export type BatchOutcome =
  | { status: 'applied' }
  /** Nothing was written: every wallet listed could not take its debit. */
  | { status: 'not_applied'; refused: RefusedWallet[] }
  /** Nothing was written: a unique key was taken (an idempotency key, or a movement id). */
  | { status: 'duplicate' };

/**
 * Many commits of one company's holds (CommitBatch): `completedAt` names each hold closed (its
 * movement's completion instant); a hold absent from it was not closed and nothing of it written.
 */
export type CommitBatchOutcome =
  | { status: 'applied'; completedAt: Map<string, string> }
  /** Nothing was written: an idempotency key was taken. */
  | { status: 'duplicate' };

export interface StoredPosting {
  id: string;
  kind: StoredPostingKind;
  requestHash: string;
  companyId: string;
  movementId: string | null;
  holdId: string | null;
}

export interface HoldView extends Hold {
  feeOperation: FeeOperation;
  movementStatus: MovementStatus;
}

export interface FeeConfigRecord {
  operation: FeeOperation;
  companyId: string | null;
  fixedFeeCents: bigint;
  variableBps: number;
  updatedAt: Date;
}

export interface MovementFilter {
  type?: MovementType;
  rail?: MovementRail;
  from?: Instant;
  to?: Instant;
}

/** Position after which a page starts, newest first: (created_at, id) of the last item seen. */
export interface MovementCursor {
  createdAt: string; // ISO 8601 with microseconds, exactly as stored
  id: string;
}

export interface MovementPage {
  items: Array<Movement & { cursor: MovementCursor }>;
  hasMore: boolean;
}

export interface InvariantReport {
  violations: string[];
  postings: bigint;
  entries: bigint;
  wallets: bigint;
}

/** The verified cut (docs/ledger-check.md): where the journal last held, as the snapshot that checked it saw it. */
export interface JournalCut {
  /** The journal position checked through (the number of postings sealed up to it). */
  seq: bigint;
  /** The balance checkpointer's progress in that snapshot: every checkpoint up to it was checked. */
  checkpointsThrough: string | null;
  verifiedAt: string;
  mode: 'full' | 'incremental';
}

export interface JournalCheckOptions {
  /**
   * 'full' (the default): every posting, wallet, movement and checkpoint. 'incremental': what was
   * sealed or queued since the verified cut, against the cut's sums (docs/ledger-check.md, what it
   * does not see); the whole journal when there is no cut yet.
   */
  mode?: 'full' | 'incremental';
}

export interface JournalCheckReport extends InvariantReport {
  /** What was checked: an incremental request with no cut yet runs in full. */
  mode: 'full' | 'incremental';
  /** The cut an incremental check started from. */
  since: JournalCut | null;
}

export interface LedgerStore {
  openWallets(companyId: string, rails: WalletRail[], eventFor: (created: WalletRail[]) => OutboxEvent): Promise<{ created: WalletRail[] }>;
  getWallets(companyId: string): Promise<WalletBalance[]>;
  /** The wallets with the fee configuration in effect for each one's outflow operation (null: none, i.e. zero). */
  walletsWithSchedules(
    companyId: string,
    operationOf: Readonly<Record<WalletRail, FeeOperation>>,
  ): Promise<Array<WalletBalance & { schedule: FeeSchedule | null }>>;
  walletExists(companyId: string, rail: WalletRail): Promise<boolean>;
  /**
   * The wallet's accounts summed over the entries of the company's postings created at or before
   * `at` (null: the wallet does not exist).
   */
  balanceAt(companyId: string, rail: WalletRail, at: Instant): Promise<BalanceAt | null>;
  /**
   * One page of a statement: the company's postings that touched the wallet's available balance,
   * created after `after` (exclusive, keyset on created_at then id) and at or before `to`, in that order.
   */
  statementPage(companyId: string, rail: WalletRail, after: StatementCursor, to: Instant, limit: number): Promise<StatementLineRow[]>;

  recordPosting(write: PostingWrite): Promise<PostingOutcome>;
  findPosting(idempotencyKey: string): Promise<StoredPosting | undefined>;
  /** The postings holding any of `idempotencyKeys`, by key (one read). */
  findPostings(idempotencyKeys: string[]): Promise<Map<string, StoredPosting>>;
  recordPostingBatch(write: BatchPostingWrite): Promise<BatchOutcome>;
  /**
   * Commits of many holds of one company in one transaction, each applied only where its hold is
   * as its `closeHold.expect` says (the others are skipped); each wallet changes once by the sum.
   */
  commitHoldBatch(companyId: string, writes: PostingWrite[]): Promise<CommitBatchOutcome>;
  /**
   * Claims `idempotencyKey` with a `void` posting (no entries) unless a posting already holds it;
   * answers the posting that holds the key afterwards (the void, or the earlier one).
   */
  voidKey(v: { id: string; idempotencyKey: string; requestHash: string; companyId: string; rail: WalletRail }): Promise<StoredPosting>;
  /** The live correcting entry of an external movement, if any (at most one). */
  liveCorrection(movement: string): Promise<LiveCorrection | undefined>;
  /** The correcting entry written under `idempotencyKey` (live or undone), with who undid it. */
  correctionByKey(idempotencyKey: string): Promise<(LiveCorrection & { reversedBy: string | null }) | undefined>;

  getHold(companyId: string, holdId: string): Promise<HoldView | undefined>;
  getMovement(companyId: string, movementId: string): Promise<Movement | undefined>;
  /** A move's two legs (docs/wallet-moves.md), the debit (TRANSFER_OUT) first; [] for another company's move. */
  getMoveLegs(companyId: string, moveId: string): Promise<Movement[]>;
  /** A TRANSFER_IN movement of the company as its returns see it (undefined for another type or company). */
  inflowReturns(companyId: string, movementId: string): Promise<InflowReturns | undefined>;
  transitionMovement(companyId: string, movementId: string, from: MovementStatus, to: MovementStatus): Promise<Movement | undefined>;
  /** The same compare-and-set for many of the company's transfer movements in one statement: how many changed. */
  transitionMovements(companyId: string, movementIds: string[], from: MovementStatus, to: MovementStatus): Promise<number>;
  listMovements(companyId: string, filter: MovementFilter, page: { limit: number; offset: number; after?: MovementCursor }): Promise<MovementPage>;

  feeSchedules(companyId: string | null, operations: FeeOperation[]): Promise<Map<FeeOperation, FeeSchedule>>;
  upsertFeeConfig(cfg: { operation: FeeOperation; companyId: string | null; fixedFeeCents: bigint; variableBps: number }): Promise<FeeConfigRecord>;

  /** LEDGER.md invariants 1-8 in one snapshot; `record`: a check that held moves the verified cut (docs/ledger-check.md). */
  checkInvariants(o?: JournalCheckOptions & { record?: boolean }): Promise<JournalCheckReport & { cut?: JournalCut }>;

  /**
   * Balance alerts (docs/balance-alerts.md). Sets a wallet's thresholds: its next evaluation is due at
   * once (evaluated_version reset), and a state whose threshold is gone goes back to NORMAL.
   */
  upsertBalanceAlert(companyId: string, rail: WalletRail, s: BalanceAlertSettings): Promise<void>;
  /** Removes a wallet's alert (its history stays). */
  deleteBalanceAlert(companyId: string, rail: WalletRail): Promise<void>;
  /** The company's alerts, with each wallet's available balance (both rails listed, set or not). */
  balanceAlerts(companyId: string): Promise<BalanceAlertRecord[]>;
  /**
   * One evaluation pass in ONE transaction: locks (`for update skip locked`) up to `limit` alerts whose
   * wallet moved since their last evaluation (of one wallet only, when `only` is set), asks `plan` for
   * each, and writes its new state (guarded by the old one), its history rows and its events. Returns
   * how many crossings were written.
   */
  evaluateBalanceAlerts(limit: number, plan: (a: DueBalanceAlert) => BalanceAlertPlan, only?: { companyId: string; rail: WalletRail }): Promise<number>;
  listBalanceAlertEvents(companyId: string, rail: WalletRail | undefined, limit: number, after?: MovementCursor): Promise<BalanceAlertEventRecord[]>;
}

export interface BalanceAlertRecord {
  rail: WalletRail;
  /** null: no alert set on this wallet. */
  settings: BalanceAlertSettings | null;
  state: BalanceAlertState;
  updatedAt: Instant | null;
  walletExists: boolean;
  availableCents: bigint;
}

/** An alert due for evaluation, with its wallet's balance as read in the evaluation's transaction. */
export interface DueBalanceAlert {
  companyId: string;
  rail: WalletRail;
  settings: BalanceAlertSettings;
  state: BalanceAlertState;
  availableCents: bigint;
  version: bigint;
}

export interface BalanceAlertEventRecord {
  id: string;
  companyId: string;
  rail: WalletRail;
  kind: BalanceAlertKind;
  state: BalanceAlertState;
  availableCents: bigint;
  thresholdCents: bigint;
  settings: BalanceAlertSettings;
  walletVersion: bigint;
  occurredAt: Instant;
}

/** What an evaluation decided for one alert: its state now, and one history row and event per crossing. */
export interface BalanceAlertPlan {
  state: BalanceAlertState;
  crossings: Array<{ record: BalanceAlertEventRecord; event: OutboxEvent }>;
}

/** Publishes outbox rows after commit (the relay); nudged after every commit that wrote events. */
export interface EventPublisher {
  nudge(): void;
}

/** An inflow's movement and how much of it returns claim (ReserveReturn). */
export interface InflowReturns {
  movementId: string;
  status: MovementStatus;
  /** The gross. */
  amount: bigint;
  /** The amounts of its returns' open and committed holds. */
  returnedCents: bigint;
  /** The movement's rail (BREB, PSE) and the wallet it credited (BREB, ACH). */
  rail: 'BREB' | 'PSE';
  walletRail: WalletRail;
}
