import type { SqlTx } from '@wallet/platform';
import type { AmountTolerance, CobroRecord, Disposition, MatchedBy, UnmatchedReason } from '../domain/cobro.js';
import type { CobroActor, CobroEvent } from '../domain/cobro-machine.js';
import type { OutboxEvent } from './ports.js';

/** The rest a new cobro is stored with (never shown): the company's profile for its key, the request's fingerprint. */
/** What opening a cobro fills in: its dynamic key and QR, its PSE link. */
export interface CobroPatch {
  breb?: { keyId: string; keyValue: string; qrPayload: string };
  pse?: { depositId: string; paygatewayUrl: string };
}

export interface NewCobro extends Omit<
  CobroRecord,
  'payments' | 'breb' | 'pse' | 'paidAmount' | 'returnedAmount' | 'paidAt' | 'closedAt' | 'updatedAt' | 'state'
> {
  ivaApplicable: boolean;
  merchantName: string;
}

/** What the app needs to ask collect-key for the key again (sweeper, retried creation). */
export interface CobroIssueFacts {
  cobro: CobroRecord;
  ivaApplicable: boolean;
  merchantName: string;
  issueAttempts: number;
}

export interface CobroListFilter {
  status?: string | undefined;
  reference?: string | undefined;
  createdFrom?: Date | undefined;
  createdTo?: Date | undefined;
}
export interface CobroCursor {
  createdAt: string;
  id: string;
}

/** An inbound payment as the matcher sees it (a listed deposit that was just credited). */
export interface InboundPayment {
  depositId: string;
  companyId: string;
  source: 'BREB' | 'PSE';
  amount: bigint;
  netAmount: bigint;
  payerName: string | null;
  payerDocument: string | null;
  receivedAt: Date;
  transactionId: string | null;
  cobroId: string | null;
  reference: string | null;
  /** The trace context of the event that brought it (the cobro event it causes continues that trace). */
  traceparent?: string | undefined;
  /** Already returned to its payer when it is matched (a payment attached by hand after a return). */
  returned?: bigint | undefined;
}

/** A return of a credited payment to its payer, as its owner announced it (`deposit.returned`). */
export interface PaymentReturned {
  returnId: string;
  depositId: string;
  companyId: string;
  amount: bigint;
}

/**
 * A credited payment its provider reversed (debited back from the company's wallet), as its owner
 * announced it (`deposit.reversed`, status REVERSED): a payment is reversed once, whole.
 */
export interface PaymentReversed {
  depositId: string;
  companyId: string;
  amount: bigint;
  reversedAt: Date;
}

/**
 * What a reversal did to the cobros: `applied` (taken off the payment's cobro; `event` the move of the
 * table, null when the cobro's state stays), `kept` (the payment is matched to no cobro: recorded, so
 * that it is never matched later, and taken off the unmatched list), `repeat` (already applied).
 */
export type ReversalOutcome =
  { kind: 'applied'; cobroId: string; counted: bigint; event: CobroEvent | null } | { kind: 'kept'; unlisted: boolean } | { kind: 'repeat' };

/** A company's cobro settings: its amount tolerance (docs/cobros.md "Amount tolerance"); `updatedAt` null: never set. */
export interface CobroSettings {
  tolerance: AmountTolerance;
  updatedAt: Date | null;
}

/** An automatic return the cobro sweeper still has to ask the payment's owner for (policy `return`). */
export interface OwedAutoReturn {
  depositId: string;
  cobroId: string;
  companyId: string;
  source: 'BREB' | 'PSE';
  amount: bigint;
  returnId: string;
}

export type MatchOutcome =
  | { kind: 'matched'; cobroId: string; matchedBy: MatchedBy; disposition: Disposition; event: CobroEvent | null }
  | { kind: 'unmatched'; cobroId: string | null; reason: UnmatchedReason }
  | { kind: 'repeat' }
  | { kind: 'ignored' };

export type AttachOutcome =
  | { kind: 'attached'; cobro: CobroRecord; repeat: boolean }
  | { kind: 'refused'; code: 'DEPOSIT_NOT_FOUND' | 'COBRO_NOT_FOUND' | 'INVALID_STATE_TRANSITION'; message?: string };

/** A payment that matched no cobro, as GET /cobros/unmatched-payments lists it. */
export interface UnmatchedPayment {
  depositId: string;
  cobroId: string | null;
  reason: UnmatchedReason;
  source: 'BREB' | 'PSE';
  amount: bigint;
  payerName: string | null;
  payerDocument: string | null;
  receivedAt: Date;
  createdAt: Date;
}

/** The cobros' storage (persistence/cobro.store.ts): every state change through COBRO_MACHINE. */
export interface CobroStore {
  insertCreating(c: NewCobro): Promise<{ created: true; cobro: CobroRecord } | { created: false; existing: CobroIssueFacts }>;
  get(companyId: string, id: string): Promise<CobroRecord | undefined>;
  list(companyId: string, f: CobroListFilter, limit: number, after: CobroCursor | null): Promise<Array<CobroRecord & { cursor: CobroCursor }>>;
  transition(
    id: string,
    event: CobroEvent,
    actor: CobroActor,
    patch: CobroPatch,
    mkEvent: (c: CobroRecord) => OutboxEvent | null,
  ): Promise<CobroRecord | undefined>;
  countIssueAttempt(id: string): Promise<void>;
  stuckCreating(before: Date, limit: number): Promise<CobroIssueFacts[]>;
  dueForExpiry(before: Date, limit: number): Promise<string[]>;
  keysToClose(now: Date, limit: number): Promise<Array<{ id: string; companyId: string }>>;
  markKeyClosed(id: string): Promise<void>;
  attach(
    companyId: string,
    cobroId: string,
    depositId: string,
    now: Date,
    mkEvent: (c: CobroRecord, depositId: string, event: CobroEvent) => OutboxEvent,
  ): Promise<AttachOutcome>;
  listUnmatched(companyId: string, limit: number, after: CobroCursor | null): Promise<Array<UnmatchedPayment & { cursor: CobroCursor }>>;
  match(tx: SqlTx, p: InboundPayment, now: Date, mkEvent: (c: CobroRecord, depositId: string, event: CobroEvent) => OutboxEvent): Promise<MatchOutcome>;
  /** A page of payments in order, with the same outcomes as `match` one by one, in a constant number of statements. */
  matchMany(
    tx: SqlTx,
    ps: readonly InboundPayment[],
    now: Date,
    mkEvent: (c: CobroRecord, depositId: string, event: CobroEvent) => OutboxEvent,
  ): Promise<MatchOutcome[]>;
  /**
   * Takes a return off the payment's cobro (its payment's `returned`, and the cobro's `returnedAmount` when it
   * COUNTED), once per return id, in the caller's (inbox) transaction; a return of a payment not matched (yet)
   * is kept for an attach by hand. The payment's automatic return is not one (it never counted).
   */
  applyReturn(tx: SqlTx, r: PaymentReturned): Promise<'applied' | 'kept' | 'repeat' | 'automatic'>;
  /**
   * Takes a provider's reversal of a payment off its cobro, once per payment, in the caller's (inbox)
   * transaction, under the payment's and the cobro's row locks: the payment shows it (`reversed`) and no
   * longer counts (the cobro's paid total and returned amount lose what it counted), and the cobro's state
   * follows the new total through COBRO_MACHINE (decideReversal), with its history row and event.
   */
  applyReversal(
    tx: SqlTx,
    r: PaymentReversed,
    now: Date,
    mkEvent: (c: CobroRecord, depositId: string, event: CobroEvent) => OutboxEvent,
  ): Promise<ReversalOutcome>;
  /** Automatic returns still OWED, oldest first. */
  autoReturnsOwed(limit: number): Promise<OwedAutoReturn[]>;
  /** OWED → REQUESTED (the owner has the return) or FAILED (refused for good, `error`); false when it was not OWED. */
  settleAutoReturn(depositId: string, status: 'REQUESTED' | 'FAILED', error: string | null): Promise<boolean>;
  /** The company's cobro settings (defaults when it never set them). */
  settings(companyId: string): Promise<CobroSettings>;
  setSettings(companyId: string, t: AmountTolerance, now: Date): Promise<CobroSettings>;
}
