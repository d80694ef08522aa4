import type { DepositRecord, DepositSource, DepositStatus, FeeBreakdown, PendingStep } from '../domain/deposit.js';

/** What the application needs from storage (implemented by persistence/deposit.store.ts). */

export interface OutboxEvent { id: string; subject: string; payload: unknown; traceparent?: string }

export interface NewDeposit extends DepositRecord { apiKeyId: string | null }

export interface DepositPatch {
  providerTransferId?: string | null;
  providerConfirmedAt?: Date | null;
  payerBank?: string | null;
  errorMessage?: string | null;
}

export interface Transition {
  id: string;
  from: { status: DepositStatus; step: PendingStep | null };
  to: { status: DepositStatus; step: PendingStep | null };
  patch?: DepositPatch;
  reason?: string;
  /** Built from the updated record, written to the outbox in the same transaction. */
  event?: (d: DepositRecord) => OutboxEvent;
  /** The provider callback that caused it, recorded (dedupe) in the same transaction. */
  callback?: { eventId: string; status: string };
}

export interface ListFilter { status?: DepositStatus; source?: DepositSource; externalId?: string; brebKeyId?: string }
export interface ListCursor { createdAt: string; id: string }

export interface DepositStore {
  insert(d: NewDeposit, event: OutboxEvent): Promise<DepositRecord>;
  get(companyId: string, id: string): Promise<DepositRecord | undefined>;
  getById(id: string): Promise<DepositRecord | undefined>;
  list(companyId: string, f: ListFilter, page: { limit: number; offset: number; after?: ListCursor; withTotal: boolean }):
    Promise<{ items: Array<DepositRecord & { cursor: ListCursor }>; hasMore: boolean; total: number | null }>;
  /** Compare-and-set of (status, pending step) + patch + history + outbox + callback id; undefined when it did not apply. */
  transition(t: Transition): Promise<DepositRecord | undefined>;
  callbackSeen(eventId: string): Promise<boolean>;
  /** Records a callback that changed nothing; false when the id was already recorded. */
  recordCallback(eventId: string, depositId: string, status: string): Promise<boolean>;
  /** PENDING_CONFIRM past expires_at + grace (no step in flight) → EXPIRED with their events, one transaction; SKIP LOCKED. */
  expireDue(graceSeconds: number, batch: number, event: (d: DepositRecord) => OutboxEvent): Promise<DepositRecord[]>;
  /** Leases deposits whose money step has been in flight longer than the grace (step_at moved ahead). */
  leaseStaleSteps(graceSeconds: number, batch: number): Promise<DepositRecord[]>;
}

export interface LedgerPort {
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
}

export interface Mailer {
  /** Throws SERVICE_UNAVAILABLE when the SMTP server refuses or cannot be reached. */
  send(m: { to: { name?: string; address: string }; subject: string; text: string; html: string }): Promise<{ messageId: string }>;
}
