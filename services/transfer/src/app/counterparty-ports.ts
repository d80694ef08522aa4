import type { CounterpartyRecord, VerificationStatus } from '../domain/counterparty.js';
import type { CounterpartyActor, CounterpartyEvent } from '../domain/counterparty-machine.js';
import type { Rail } from '../domain/rails.js';
import type { OutboxEvent } from './ports.js';

/** What the counterparty use cases need from storage (persistence/counterparty.store.ts). */

/** One event of the verification table as the store applies it (from, to, and who). */
export interface CounterpartyMove {
  event: CounterpartyEvent;
  from: readonly VerificationStatus[];
  to: VerificationStatus;
  actor: CounterpartyActor;
}

/** A new verification attempt's ids (the prenote id for ACH). */
export interface VerificationAttempt {
  verificationId: string;
  prenoteId: string | null;
  /** When the sweeper first looks at it, from now. */
  checkInMs: number;
}

export interface CounterpartyDecision {
  reasonCode: string | null;
  reason: string | null;
}

export type CounterpartyInsert = { inserted: true; counterparty: CounterpartyRecord } | { inserted: false; existing: CounterpartyRecord; sameRequest: boolean };

export interface CounterpartyListQuery {
  tag: string | null;
  status: VerificationStatus | null;
  rail: Rail | null;
  limit: number;
  cursor: { createdAt: Date; id: string } | null;
}

export interface CounterpartyStore {
  /**
   * Inserts the counterparty with its first attempt applied (`move`: UNVERIFIED → PENDING) and its
   * history, in one statement. With `idempotency` the key is unique per company: when another
   * counterparty holds it, nothing is inserted and that one is answered (compared by request hash).
   */
  insert(
    c: CounterpartyRecord,
    move: CounterpartyMove,
    attempt: VerificationAttempt,
    idempotency: { key: string; requestHash: string } | null,
  ): Promise<CounterpartyInsert>;
  /** The company's live (not deleted) counterparty. */
  get(companyId: string, id: string): Promise<CounterpartyRecord | undefined>;
  /** The live counterparty whose current prenote this is (a superseded prenote names none). */
  getByPrenote(prenoteId: string): Promise<CounterpartyRecord | undefined>;
  list(companyId: string, q: CounterpartyListQuery): Promise<CounterpartyRecord[]>;
  /**
   * A change of name, tags and/or identity, compare-and-set on `current.version`. With `move` (an
   * identity change) the status moves too and `attempt` replaces the verification (history row in the
   * same statement). Undefined when the version moved meanwhile.
   */
  update(
    current: CounterpartyRecord,
    patch: { name?: string; tags?: string[]; identity?: Pick<CounterpartyRecord, 'rail' | 'destination' | 'documentTypeId' | 'documentNumber' | 'holderName'> },
    move: CounterpartyMove | null,
    attempt: VerificationAttempt | null,
  ): Promise<CounterpartyRecord | undefined>;
  /**
   * The verification's compare-and-set: status in `move.from` AND the attempt `current.verificationId`
   * still current; history row and outbox event in the same statement. Undefined when another writer
   * moved it first, or the attempt was replaced.
   */
  transition(
    current: CounterpartyRecord,
    move: CounterpartyMove,
    patch: { attempt?: VerificationAttempt; decision?: CounterpartyDecision },
    event: ((c: CounterpartyRecord) => OutboxEvent) | null,
  ): Promise<CounterpartyRecord | undefined>;
  /** The rail took the prenote: the sweeper asks about it after `checkInMs` if no callback came. */
  markPrenoteSubmitted(id: string, prenoteId: string, checkInMs: number): Promise<void>;
  /** The sweeper's next look at a PENDING attempt. */
  reschedule(id: string, verificationId: string, inMs: number): Promise<void>;
  /** PENDING attempts due (FOR UPDATE SKIP LOCKED, then moved `leaseMs` ahead). */
  leaseDue(limit: number, leaseMs: number): Promise<CounterpartyRecord[]>;
  /** Soft delete; the deleted counterparty, or undefined when there was no live one. */
  softDelete(companyId: string, id: string): Promise<CounterpartyRecord | undefined>;
}

// ───────────────────────────── the ACH rail's prenotes ─────────────────────────────

export interface PrenoteRequest {
  prenoteId: string;
  bankAchCode: string;
  accountTypeId: number;
  accountNumber: string;
  documentTypeId: number;
  documentNumber: string;
  holderName: string;
}

export type PrenoteSubmission = { outcome: 'accepted' } | { outcome: 'refused'; code: string; message: string } | { outcome: 'unavailable'; error: string };

export type PrenoteStatus =
  | { found: true; status: 'PENDING' }
  | { found: true; status: 'ACCEPTED' | 'REJECTED'; reasonCode: string | null; reason: string | null }
  | { found: false }
  | { unavailable: true; error: string };

/**
 * The ACH rail's prenotes (docs/sandbox.md "ACH prenotes"): HttpRails implements it beside RailPort
 * (a port of its own, so the sends' rail stand-ins need not stub it).
 */
export interface AchPrenotePort {
  /** Idempotent on the prenote id at the rail; the outcome comes by the ACH callback. */
  submitPrenote(p: PrenoteRequest, callbackUrl: string): Promise<PrenoteSubmission>;
  /** The rail's record of the prenote (answers while the rail is down). */
  prenoteStatus(prenoteId: string): Promise<PrenoteStatus>;
}
