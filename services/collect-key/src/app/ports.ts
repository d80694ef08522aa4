import type { CollectKeyRecord, KeyState, QrRecord } from '../domain/collect-key.js';

export interface OutboxEvent { id: string; subject: string; payload: unknown }

export interface FeeBreakdown {
  fixedFee: bigint; variableFee: bigint; subtotalFee: bigint; ivaApplicable: boolean; ivaAmount: bigint; totalCharged: bigint;
}
export const ZERO_FEE: FeeBreakdown = { fixedFee: 0n, variableFee: 0n, subtotalFee: 0n, ivaApplicable: false, ivaAmount: 0n, totalCharged: 0n };

export type PaymentStep = 'CREDIT' | 'HOLD';

/** An inbound payment = the deposit this service creates (ASSIGNED credited / UNASSIGNED held). */
export interface PaymentRecord {
  depositId: string;
  providerTransferId: string;
  companyId: string;
  key: { id: string; externalId: string; name: string; value: string; state: KeyState };
  status: 'ASSIGNED' | 'UNASSIGNED';
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
}

export interface KeyListFilter { state?: KeyState; externalId?: string }
export interface KeyCursor { createdAt: string; id: string }

export interface CollectKeyStore {
  /** Inserts an ACTIVE key + event; 'EXTERNAL_TAKEN' / 'VALUE_TAKEN' when a live-key unique index refuses it. */
  insertKey(k: CollectKeyRecord, event: (k: CollectKeyRecord) => OutboxEvent): Promise<CollectKeyRecord | 'EXTERNAL_TAKEN' | 'VALUE_TAKEN'>;
  liveByExternalId(companyId: string, externalId: string): Promise<CollectKeyRecord | undefined>;
  /** The live key of that customer, else its most recently deleted one. */
  byExternalId(companyId: string, externalId: string): Promise<CollectKeyRecord | undefined>;
  byId(id: string): Promise<CollectKeyRecord | undefined>;
  /** The live holder of a value, else its most recent holder (any company). */
  byValue(value: string): Promise<CollectKeyRecord | undefined>;
  list(companyId: string, f: KeyListFilter, limit: number, after?: KeyCursor): Promise<{ items: Array<CollectKeyRecord & { cursor: KeyCursor }>; hasMore: boolean }>;
  /** Compare-and-set of the state (from one of `from`) + event, one transaction; DELETED also revokes the live QR. */
  setState(id: string, from: KeyState[], to: KeyState, event: (k: CollectKeyRecord) => OutboxEvent): Promise<CollectKeyRecord | undefined>;

  liveQr(keyId: string): Promise<QrRecord | undefined>;
  /** Inserts the key's live QR + event; undefined when another live QR won the race. */
  insertQr(q: QrRecord, event: (q: QrRecord) => OutboxEvent): Promise<QrRecord | undefined>;
  qr(id: string): Promise<QrRecord | undefined>;

  /** Inserts the payment intent (pending step set) and the provider event id; the existing row when the transfer is known. */
  recordIntent(p: PaymentRecord, eventId: string): Promise<{ payment: PaymentRecord; created: boolean }>;
  paymentByTransfer(providerTransferId: string): Promise<PaymentRecord | undefined>;
  /** Clears the pending step and writes the deposit event, one transaction; undefined when already completed. */
  completePayment(depositId: string, event: (p: PaymentRecord) => OutboxEvent): Promise<PaymentRecord | undefined>;
  leaseStalePayments(graceSeconds: number, batch: number): Promise<PaymentRecord[]>;
}

export interface LedgerPort {
  computeBrebInflowFees(companyId: string, amount: bigint, ivaApplicable: boolean): Promise<FeeBreakdown>;
  /** RecordInflow BREB, key `collectkey:payment:<providerTransferId>`; assign per the payment's status. */
  recordInflow(p: PaymentRecord): Promise<void>;
}

export interface BrebDirectory {
  /** Throws KEY_ALREADY_REGISTERED (409) or BREB_DIRECTORY_LOOKUP_FAILED (anything else). */
  register(r: { keyValue: string; holderName: string; callbackUrl: string }): Promise<void>;
  /** Idempotent; throws BREB_DIRECTORY_LOOKUP_FAILED when the directory cannot be reached. */
  unregister(keyValue: string): Promise<void>;
}
