import type { MoneyExceptionStore, ReturnLedger, SqlTx } from '@wallet/platform';
import type { BrebDeposit } from '../domain/breb-deposit.js';
import type { DepositRecord, DepositSource, DepositState, DepositStatus, FeeBreakdown } from '../domain/deposit.js';

/** What the application needs from storage (implemented by persistence/deposit.store.ts and persistence/breb-listing.ts). */

export interface OutboxEvent {
  id: string;
  subject: string;
  payload: unknown;
  traceparent?: string;
}

export interface NewDeposit extends DepositRecord {
  apiKeyId: string | null;
}

export interface DepositPatch {
  providerTransferId?: string | null;
  providerConfirmedAt?: Date | null;
  payerBank?: string | null;
  errorMessage?: string | null;
}

/** One transition of the saga table, as the store runs it: a compare-and-set of the state. */
export interface Transition {
  id: string;
  /** The states the event leaves from (DEPOSIT_MACHINE[event].from). */
  from: readonly DepositState[];
  to: DepositState;
  patch?: DepositPatch;
  reason?: string;
  /** Built from the updated record, written to the outbox in the same transaction. */
  event?: (d: DepositRecord) => OutboxEvent;
  /** The provider callback that caused it, recorded (dedupe) in the same transaction. */
  callback?: { eventId: string; status: string };
}

/** The listing's filter: `status` is what clients see (publicStatus), read with the clock `now`. */
export interface ListFilter {
  status?: DepositStatus;
  source?: DepositSource;
  externalId?: string;
  brebKeyId?: string;
}
export interface ListCursor {
  createdAt: string;
  id: string;
}

export interface DepositStore {
  insert(d: NewDeposit, event: OutboxEvent): Promise<DepositRecord>;
  get(companyId: string, id: string): Promise<DepositRecord | undefined>;
  getById(id: string): Promise<DepositRecord | undefined>;
  /** The cobro each of these deposits was matched to (cobro_payments), by deposit id. */
  matchedCobros(ids: readonly string[]): Promise<Map<string, string>>;
  /** The PSE link made for a cobro, if any. */
  byCobro(companyId: string, cobroId: string): Promise<DepositRecord | undefined>;
  list(
    companyId: string,
    f: ListFilter,
    page: { limit: number; offset: number; after?: ListCursor; withTotal: boolean; now: Date },
  ): Promise<{ items: Array<DepositRecord & { cursor: ListCursor }>; hasMore: boolean; total: number | null }>;
  /**
   * Compare-and-set of the state (+ patch, history, outbox event, callback id, one transaction);
   * entering a money state schedules it for the sweeper (step_at = now), leaving one clears it.
   * Undefined when the state was not one of `from` (another writer won).
   */
  transition(t: Transition): Promise<DepositRecord | undefined>;
  callbackSeen(eventId: string): Promise<boolean>;
  /** Records a callback that changed nothing; false when the id was already recorded. */
  recordCallback(eventId: string, depositId: string, status: string): Promise<boolean>;
  /** PENDING_CONFIRM links whose expires_at is at or before `now`, oldest first (no lock: `expire` is a compare-and-set). */
  dueForExpiry(now: Date, batch: number): Promise<DepositRecord[]>;
  /** Leases deposits in a money state whose step has been in flight longer than the grace (step_at moved ahead); parked ones are skipped. */
  leaseStaleSteps(graceSeconds: number, batch: number): Promise<DepositRecord[]>;
  /** Stops the sweeper retrying the money step of a deposit still in `state` (an operator must look). */
  park(id: string, state: DepositState): Promise<void>;

  /** Money exceptions (CONTRACT §10), one per kind and deposit. */
  readonly exceptions: MoneyExceptionStore;
}

export type BrebUpsertOutcome = 'inserted' | 'updated' | 'unchanged';

/** The Bre-B deposits' rows of the listing, written in the inbox consumer's open transaction (persistence/breb-listing.ts). */
export interface BrebListing {
  /**
   * Inserts the deposit, or moves the company's Bre-B row of that id to the event's state when it is
   * different and the event is newer; anything else changes nothing ('unchanged').
   */
  upsert(tx: SqlTx, d: BrebDeposit, eventId: string): Promise<BrebUpsertOutcome>;
  /** The same for a page of events with distinct deposit ids, in one statement: the outcome of each id that changed. */
  upsertMany(tx: SqlTx, items: ReadonlyArray<{ d: BrebDeposit; eventId: string }>): Promise<Map<string, BrebUpsertOutcome>>;
  /** Why an upsert changed nothing (for the log): the stored row's source / company / status, if any. */
  storedState(tx: SqlTx, id: string): Promise<{ source: string; company_id: string; status: string } | undefined>;
}

export interface LedgerPort extends ReturnLedger {
  computeFees(companyId: string, amount: bigint, ivaApplicable: boolean): Promise<FeeBreakdown>;
  /** RecordInflow PSE, assign, key `deposit:<id>:paid`, movement = the deposit's movement id. */
  recordPseInflow(d: DepositRecord): Promise<void>;
  /** ReverseInflow of `deposit:<id>:paid` under `deposit:<id>:reversed`. */
  reversePseInflow(d: DepositRecord, reason: string): Promise<void>;
}

export interface PseLinkRequest {
  depositId: string;
  amountCents: bigint;
  companyName: string;
  payerName: string;
  payerEmail: string;
  description?: string;
  expiresAt: Date;
  callbackUrl: string;
}

export interface PseProvider {
  /** Creates the payment link (idempotent on depositId). Throws PSE_PROVIDER_ERROR. */
  createLink(r: PseLinkRequest): Promise<{ linkId: string | null; paygatewayUrl: string }>;
  /**
   * Refunds all or part of a paid link to its payer (`POST /pse/refunds`, idempotent by `refundId`):
   * RETURNED with the provider's time, REFUSED (a 4xx: never; `code` says why), UNAVAILABLE (unknown: ask again).
   */
  refund(r: {
    refundId: string;
    depositId: string;
    amountCents: bigint;
  }): Promise<{ outcome: 'RETURNED' | 'REFUSED' | 'UNAVAILABLE'; returnedAt: Date | null; code?: string }>;
}

export interface Mailer {
  /** Throws SERVICE_UNAVAILABLE when the SMTP server refuses or cannot be reached. */
  send(m: { to: { name?: string; address: string }; subject: string; text: string; html: string }): Promise<{ messageId: string }>;
}
