import type { MoneyExceptionStore, ReturnLedger } from '@wallet/platform';
import type { CollectKeyRecord, KeyState, PublicKeyState, QrRecord } from '../domain/collect-key.js';
import type { PaymentState } from '../domain/payment-machine.js';

export interface OutboxEvent {
  id: string;
  subject: string;
  payload: unknown;
}

export interface FeeBreakdown {
  fixedFee: bigint;
  variableFee: bigint;
  subtotalFee: bigint;
  ivaApplicable: boolean;
  ivaAmount: bigint;
  totalCharged: bigint;
}
export const ZERO_FEE: FeeBreakdown = { fixedFee: 0n, variableFee: 0n, subtotalFee: 0n, ivaApplicable: false, ivaAmount: 0n, totalCharged: 0n };

export type PaymentStep = 'CREDIT' | 'HOLD' | 'ASSIGN' | 'RETURN';

/** An inbound payment = the deposit this service creates; its state is the saga's (domain/payment-machine.ts). */
export interface PaymentRecord {
  depositId: string;
  providerTransferId: string;
  companyId: string;
  key: { id: string; externalId: string; name: string; value: string; state: KeyState };
  status: PaymentState;
  amount: bigint;
  fee: FeeBreakdown;
  netAmount: bigint;
  payerName: string | null;
  payerDocument: string | null;
  payerBank: string | null;
  receivedAt: Date;
  movementId: string;
  pendingStep: PaymentStep | null;
  createdAt: Date;
  /** The network's time of the return to the payer (RETURNED; also once the network answered, while RETURNING). */
  returnedAt?: Date | null;
  /** The W3C trace context of the call that recorded it (null when tracing was off); later steps in other traces link to it. */
  traceparent?: string | null;
  /** The transaction id the network's notification carried (the payer's app read it from a dynamic QR); null when none. */
  transactionId?: string | null;
  /** The cobro whose dynamic key it was paid to; null for a customer's key. */
  cobroId?: string | null;
}

export interface KeyListFilter {
  state?: PublicKeyState;
  externalId?: string;
}
export interface KeyCursor {
  createdAt: string;
  id: string;
}

export interface CollectKeyStore {
  /**
   * Inserts a REGISTERING key (no event: it is not a key to clients until the directory confirms it);
   * 'EXTERNAL_TAKEN' (a customer's externalId, or a cobro, already claimed) / 'VALUE_TAKEN' when a unique index refuses it.
   */
  insertKey(k: CollectKeyRecord): Promise<CollectKeyRecord | 'EXTERNAL_TAKEN' | 'VALUE_TAKEN'>;
  /** The cobro's key (any state but FAILED: one at most), whatever its externalId. */
  byCobroId(companyId: string, cobroId: string): Promise<CollectKeyRecord | undefined>;
  /** The key of that customer in a claiming state (REGISTERING, ACTIVE, SUSPENDED). Customer keys only (never a cobro's), as byExternalId and list. */
  liveByExternalId(companyId: string, externalId: string): Promise<CollectKeyRecord | undefined>;
  /** The live key of that customer, else its most recently deleted one (public states only). */
  byExternalId(companyId: string, externalId: string): Promise<CollectKeyRecord | undefined>;
  byId(id: string): Promise<CollectKeyRecord | undefined>;
  /** The holder of a value in a claiming state, else its most recently created DELETED holder (any company); never FAILED. */
  byValue(value: string): Promise<CollectKeyRecord | undefined>;
  /** Public states only (REGISTERING and FAILED keys are never listed). */
  list(
    companyId: string,
    f: KeyListFilter,
    limit: number,
    after?: KeyCursor,
  ): Promise<{ items: Array<CollectKeyRecord & { cursor: KeyCursor }>; hasMore: boolean }>;
  /**
   * Compare-and-set of the state (from one of `from`) + event when given (and not null), one transaction; DELETED also revokes the live QR.
   * `anchorHandle` (activation): the directory registration the key went live with.
   */
  setState(
    id: string,
    from: KeyState[],
    to: KeyState,
    event?: (k: CollectKeyRecord) => OutboxEvent | null,
    anchorHandle?: string | null,
  ): Promise<CollectKeyRecord | undefined>;
  /** The key that went live with this directory registration (any state). */
  byAnchorHandle(anchorHandle: string): Promise<CollectKeyRecord | undefined>;
  /**
   * The key a payment routed to an unknown (or unnamed) registration is attributed to, among the
   * value's keys (never FAILED) with no registration recorded (`withoutAnchorOnly`) or any: a
   * REGISTERING one first (its registration's answer may have been lost), else the most recent one
   * created at or before `paidAt`, else (clocks apart: the network's time is not ours) the earliest after it.
   */
  byValueAt(value: string, paidAt: Date, withoutAnchorOnly: boolean): Promise<CollectKeyRecord | undefined>;
  /** REGISTERING keys whose last registration attempt is older than the grace, leased (`updated_at` moved ahead). */
  leaseStaleRegistrations(graceSeconds: number, batch: number): Promise<CollectKeyRecord[]>;

  liveQr(keyId: string): Promise<QrRecord | undefined>;
  /** Inserts the key's live QR + event; undefined when another live QR won the race. */
  insertQr(q: QrRecord, event: (q: QrRecord) => OutboxEvent): Promise<QrRecord | undefined>;
  qr(id: string): Promise<QrRecord | undefined>;

  /**
   * Inserts the payment in its initial money state (CREDITING / HOLDING, `pending_step` derived) with
   * its history row and the provider event id; the existing row when the transfer is known.
   */
  recordIntent(p: PaymentRecord, eventId: string): Promise<{ payment: PaymentRecord; created: boolean }>;
  paymentByTransfer(providerTransferId: string): Promise<PaymentRecord | undefined>;
  paymentById(depositId: string): Promise<PaymentRecord | undefined>;
  /** The network's id of each of these payments (by deposit id): their exceptions' movement. */
  providerIdsOf(depositIds: readonly string[]): Promise<Map<string, string>>;
  /**
   * The saga's compare-and-set: from one of `from` to `to` (`pending_step`/`step_at` follow the state),
   * a history row and the event when given, one transaction; undefined when the state was not one of `from`.
   */
  transitionPayment(t: {
    depositId: string;
    from: readonly PaymentState[];
    to: PaymentState;
    reason: string;
    event?: (p: PaymentRecord) => OutboxEvent;
    /** `assign`: the fees of the assignment and the key it is assigned through (the payment's own key, or a live key of its company). */
    patch?: { fee?: FeeBreakdown; netAmount?: bigint; key?: PaymentRecord['key']; returnedAt?: Date };
  }): Promise<PaymentRecord | undefined>;
  /** A money state left for an operator: the sweeper no longer runs it (`step_at` null). */
  parkPayment(depositId: string, state: PaymentState): Promise<void>;
  /** Payments in a money state whose step is older than the grace, leased (`step_at` moved ahead); parked ones never. */
  leaseStalePayments(graceSeconds: number, batch: number): Promise<PaymentRecord[]>;
  /** Money exceptions (CONTRACT §10), one per kind and payment. */
  readonly exceptions: MoneyExceptionStore;
}

export interface LedgerPort extends ReturnLedger {
  computeBrebInflowFees(companyId: string, amount: bigint, ivaApplicable: boolean): Promise<FeeBreakdown>;
  /**
   * RecordInflow BREB: `credit` (assigned) and `hold` (unassigned) under `collectkey:payment:<providerTransferId>`;
   * `assign` (assigned from unassigned funds) under `collectkey:payment:<providerTransferId>:assign`.
   */
  recordInflow(p: PaymentRecord, step: 'credit' | 'hold' | 'assign'): Promise<void>;
  /** ReturnUnassignedInflow of the payment's hold under `collectkey:payment:<providerTransferId>:returned`: unassigned_funds(BREB) −G; breb_settlement +G. */
  returnHeld(p: PaymentRecord): Promise<void>;
  /** Whether the company has a BREB wallet (GetBalances): a key's payments are credited there. */
  hasBrebWallet(companyId: string): Promise<boolean>;
}

/**
 * What the directory said to a registration (idempotent for the same value and callback URL):
 * REGISTERED (2xx: the value is registered to us, now or already); TAKEN (409: another
 * registration holds it); REFUSED (another 4xx: this request will never be accepted);
 * UNAVAILABLE (5xx, 408, 429, time-out, unreachable: unknown; it may or may not have landed).
 */
export type RegistrationOutcome = 'REGISTERED' | 'TAKEN' | 'REFUSED' | 'UNAVAILABLE';

/** The outcome, and for REGISTERED the registration's `anchorHandle` (the network names it in each payment it routes to it). */
export interface RegistrationAnswer {
  outcome: RegistrationOutcome;
  anchorHandle: string | null;
}

export interface BrebDirectory {
  /** Never throws for a directory answer or an outage: the outcome says what is known. */
  register(r: { keyValue: string; holderName: string; callbackUrl: string }): Promise<RegistrationAnswer>;
  /** Idempotent; throws BREB_DIRECTORY_LOOKUP_FAILED when the directory cannot be reached. */
  unregister(keyValue: string): Promise<void>;
  /**
   * The network's return of an inbound payment to the payer (`POST /breb/network/returns`, idempotent by
   * `returnId`): RETURNED (with the network's time), REFUSED (a 4xx: never), UNAVAILABLE (unknown: ask again).
   */
  returnPayment(r: {
    returnId: string;
    providerTransferId: string;
    amountCents: bigint;
  }): Promise<{ outcome: 'RETURNED' | 'REFUSED' | 'UNAVAILABLE'; returnedAt: Date | null; code?: string }>;
}
