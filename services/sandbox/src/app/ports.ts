import type { Tx } from '@wallet/platform';
import type { FaultName, FaultState } from '../domain/faults.js';
import type { KeyType } from '../domain/keys.js';
import type { PrenoteBehaviour, PrenoteFinalStatus, PrenoteOutcome, PrenoteReasonCode, PrenoteStatus } from '../domain/prenotes.js';
import type { PseStatus } from '../domain/pse.js';
import type { FinalStatus, Rail, TransferStatus } from '../domain/rails.js';
import type { Discrepancy, DiscrepancySpec, LineStatus, ReportLine, ReportRail } from '../domain/settlement-report.js';

/**
 * What the sandbox's use cases need from storage, in their words (implemented by the stores in
 * persistence/). Methods taking a `Tx` run in the caller's transaction (`Database.tx`), so an
 * outcome and its callback commit together.
 */

/** The outage switches (domain/faults.ts): the directory, a rail, PSE or the callbacks, down or up. */
export interface FaultSwitches {
  fault(name: FaultName): Promise<FaultState>;
}

// ---- The rails' transfers (persistence/sandbox.store.ts) ----

export interface TransferRow {
  providerTransferId: string;
  transactionId: string;
  rail: Rail;
  amountCents: bigint;
  status: TransferStatus;
  errorMessage: string | null;
  callbackUrl: string;
  request: Record<string, unknown>;
  outcomeAt: string | null;
}

export interface NewTransfer {
  providerTransferId: string;
  transactionId: string;
  rail: Rail;
  amountCents: bigint;
  callbackUrl: string;
  request: Record<string, unknown>;
  confirmMs: number;
}

/** The outcome callback to write with an outcome, in the same transaction. */
export type CallbackBodyFactory = (t: TransferRow, eventId: string) => string;

/** The rails' transfer book. */
export interface TransferBook {
  /** Inserts the transfer unless its transactionId is known; returns the stored row and whether it is new. */
  insertTransfer(t: NewTransfer): Promise<{ transfer: TransferRow; created: boolean }>;
  /** `insertTransfer` for many at once, in one statement; in the given order (no transactionId twice). */
  insertTransfers(ts: NewTransfer[]): Promise<Array<{ transfer: TransferRow; created: boolean }>>;
  findTransfer(transactionId: string): Promise<TransferRow | undefined>;
  /** Locks a transfer for a forced outcome. */
  lockTransfer(tx: Tx, transactionId: string): Promise<TransferRow | undefined>;
  /** Pending transfers whose outcome is due, locked; other instances skip them. */
  lockDueTransfers(tx: Tx, limit: number): Promise<TransferRow[]>;
  /** Records the outcome of a locked pending transfer and schedules its callback (due now); returns the settled transfer. */
  settle(
    tx: Tx,
    transactionId: string,
    outcome: { status: FinalStatus; errorMessage: string | null; forced: boolean },
    body: CallbackBodyFactory,
    deliveryWindowMs: number,
  ): Promise<TransferRow>;
  /** `settle` for many locked pending transfers at once (the scheduler's batch). */
  settleMany(
    tx: Tx,
    outcomes: Array<{ transactionId: string; status: FinalStatus; errorMessage: string | null }>,
    body: CallbackBodyFactory,
    deliveryWindowMs: number,
  ): Promise<TransferRow[]>;
}

// ---- ACH prenotes (persistence/prenote.store.ts) ----

/** The account a prenote tests, as the product sent it (the ACH fields, validated). */
export interface PrenoteAccount {
  bankCode: string;
  accountTypeId: number;
  accountNumber: string;
  documentTypeId: number;
  documentNumber: string;
  holderName: string | null;
}

export interface PrenoteRow extends PrenoteAccount {
  prenoteId: string;
  callbackUrl: string;
  status: PrenoteStatus;
  /** Set when REJECTED. */
  reasonCode: PrenoteReasonCode | null;
  /** The outcome decided at submission, recorded when due (a forced outcome overrides it). */
  decided: PrenoteOutcome;
  /** ISO-8601 UTC, ms (database clock). */
  submittedAt: string;
  settledAt: string | null;
}

export interface NewPrenote extends PrenoteAccount {
  prenoteId: string;
  callbackUrl: string;
  decided: PrenoteOutcome;
  /** Due this long after submission (database clock). */
  delayMs: number;
}

/** A per-account behaviour as stored. */
export interface PrenoteBehaviourRow extends PrenoteBehaviour {
  accountNumber: string;
  updatedAt: string;
}

/** The prenote's outcome callback to write with its outcome, in the same transaction. */
export type PrenoteCallbackFactory = (p: PrenoteRow, eventId: string) => string;

/** The ACH rail's prenotes and the per-account behaviours that decide them. */
export interface PrenoteBook {
  /** Inserts the prenote unless its id is known; returns the stored row and whether it is new. */
  insertPrenote(p: NewPrenote): Promise<{ prenote: PrenoteRow; created: boolean }>;
  findPrenote(prenoteId: string): Promise<PrenoteRow | undefined>;
  /** Locks a prenote for a forced outcome. */
  lockPrenote(tx: Tx, prenoteId: string): Promise<PrenoteRow | undefined>;
  /** Pending prenotes whose outcome is due, locked; other instances skip them. */
  lockDuePrenotes(tx: Tx, limit: number): Promise<PrenoteRow[]>;
  /** Records the outcomes of locked pending prenotes and schedules their callbacks (due now); returns the settled prenotes. */
  settlePrenotes(
    tx: Tx,
    outcomes: Array<{ prenoteId: string; status: PrenoteFinalStatus; reasonCode: PrenoteReasonCode | null }>,
    forced: boolean,
    body: PrenoteCallbackFactory,
    deliveryWindowMs: number,
  ): Promise<PrenoteRow[]>;
  behaviour(accountNumber: string): Promise<PrenoteBehaviourRow | undefined>;
  /** Creates or replaces the account's behaviour. */
  setBehaviour(accountNumber: string, b: PrenoteBehaviour): Promise<PrenoteBehaviourRow>;
  /** Deletes the account's behaviour; whether there was one. */
  deleteBehaviour(accountNumber: string): Promise<boolean>;
}

// ---- Participants' Bre-B keys and inbound payments (persistence/registration.store.ts) ----

export interface RegistrationRow {
  id: string;
  keyValue: string;
  keyType: KeyType;
  holderName: string;
  holderDocument: string | null;
  participantCallbackUrl: string;
  anchorHandle: string;
  registeredAt: string;
  deletedAt: string | null;
}

export interface IncomingRow {
  providerTransferId: string;
  registrationId: string;
  keyValue: string;
  amountCents: bigint;
  payerName: string;
  payerDocument: string;
  payerBank: string;
  receivedAt: string;
  /** The transaction id of the dynamic QR the payer paid (tag 62/05); null when paid by key or by a QR without one. */
  transactionId: string | null;
}

export interface NewRegistration {
  keyValue: string;
  keyType: KeyType;
  holderName: string;
  holderDocument: string | null;
  participantCallbackUrl: string;
  anchorHandle: string;
}

export interface NewIncoming {
  providerTransferId: string;
  keyValue: string;
  amountCents: bigint;
  payerName: string;
  payerDocument: string;
  payerBank: string;
  transactionId: string | null;
}

/** One return of an inbound payment to its payer (all or part of it), as the network recorded it. */
export interface ReturnRow {
  returnId: string;
  providerTransferId: string;
  amountCents: bigint;
  /** ISO-8601 UTC, ms: the network's time of the return. */
  returnedAt: string;
}

/** Participants' key registrations and the inbound payments the network routes to them. */
export interface KeyRegistry {
  /** Inserts a live registration unless the value already has one; returns the live registration and whether it is new. */
  insertRegistration(r: NewRegistration): Promise<{ registration: RegistrationRow; created: boolean }>;
  /** The value's live registration. */
  findLive(keyValue: string): Promise<RegistrationRow | undefined>;
  /** The most recent registration of the value, live or deleted (where the network routes payments). */
  findLatest(tx: Tx, keyValue: string): Promise<RegistrationRow | undefined>;
  /** Live registrations' anchor handles of these values (rail settlement). */
  liveAnchors(tx: Tx, keyValues: string[]): Promise<Map<string, string>>;
  /** Soft-deletes the live registration of the value; returns it, or undefined when there was none. */
  deleteLive(keyValue: string): Promise<RegistrationRow | undefined>;
  insertIncoming(tx: Tx, registrationId: string, p: NewIncoming): Promise<IncomingRow>;
  /** The payment's amount, its row locked until the caller's transaction ends (returns are decided under it); undefined when unknown. */
  lockIncoming(tx: Tx, providerTransferId: string): Promise<bigint | undefined>;
  /** The return recorded under this id, of any payment. */
  findReturn(tx: Tx, returnId: string): Promise<ReturnRow | undefined>;
  /** The sum of the payment's returns (0 when none). */
  returnedCents(tx: Tx, providerTransferId: string): Promise<bigint>;
  /** Records a return now; undefined when its id was taken meanwhile (a racing request with the same id). */
  insertReturn(tx: Tx, r: { returnId: string; providerTransferId: string; amountCents: bigint }): Promise<ReturnRow | undefined>;
  findIncoming(providerTransferId: string): Promise<IncomingRow | undefined>;
  /** Schedules the inbound payment's callback (due now); returns its eventId. */
  insertCallback(tx: Tx, providerTransferId: string, callbackUrl: string, body: (eventId: string) => string, deliveryWindowMs: number): Promise<string>;
}

// ---- PSE payment links (persistence/pse.store.ts) ----

export interface PseLinkRow {
  linkId: string;
  depositId: string;
  providerTransferId: string;
  amountCents: bigint;
  companyName: string;
  payerName: string;
  payerEmail: string;
  description: string | null;
  expiresAt: string;
  callbackUrl: string;
  status: PseStatus;
  payerBank: string | null;
  paidAt: string | null;
  outcomeAt: string | null;
  reversedAt: string | null;
  /** expires_at has passed (database clock). */
  expired: boolean;
}

export interface NewPseLink {
  linkId: string;
  depositId: string;
  providerTransferId: string;
  amountCents: bigint;
  companyName: string;
  payerName: string;
  payerEmail: string;
  description: string | null;
  expiresAt: string;
  callbackUrl: string;
}

/** One refund of a paid PSE link to its payer (all or part of it), as the gateway recorded it. */
export interface PseRefundRow {
  refundId: string;
  depositId: string;
  amountCents: bigint;
  /** ISO-8601 UTC, ms: the gateway's time of the refund. */
  refundedAt: string;
}

/** The PSE gateway's payment links, their outcome callbacks and their refunds. */
export interface PseLinkBook {
  /** Inserts the link unless its depositId is known; returns the stored row and whether it is new. */
  insertLink(l: NewPseLink): Promise<{ link: PseLinkRow; created: boolean }>;
  findLink(depositId: string): Promise<PseLinkRow | undefined>;
  lockLink(tx: Tx, depositId: string): Promise<PseLinkRow | undefined>;
  /** Records a payer's outcome on a locked pending link. */
  setOutcome(tx: Tx, depositId: string, status: 'PAID' | 'FAILED', payerBank: string | null): Promise<PseLinkRow>;
  setReversed(tx: Tx, depositId: string): Promise<PseLinkRow>;
  /** The refund recorded under this id, of any link. */
  findRefund(tx: Tx, refundId: string): Promise<PseRefundRow | undefined>;
  /** The sum of the link's refunds (0 when none). */
  refundedCents(tx: Tx, depositId: string): Promise<bigint>;
  /** Records a refund now; undefined when its id was taken meanwhile (a racing request with the same id for another link). */
  insertRefund(tx: Tx, r: { refundId: string; depositId: string; amountCents: bigint }): Promise<PseRefundRow | undefined>;
  /** Schedules a callback (due now) for the locked link, numbered after its earlier ones; returns its eventId. */
  insertCallback(tx: Tx, link: PseLinkRow, body: (eventId: string) => string, deliveryWindowMs: number): Promise<string>;
}

// ---- Settlement reports (persistence/report.store.ts) ----

/** One consistent view of the database for one rendering (a repeatable-read, read-only transaction). */
export interface ReportSnapshot {
  /** Today's date in Bogotá, by the database clock. */
  today(): Promise<string>;
  discrepancies(rail: ReportRail, date: string): Promise<Discrepancy[]>;
  /** The day's lines whose provider id or our id is one of `refs` (small: the lines a discrepancy moves). */
  linesWithRefs(rail: ReportRail, date: string, range: { from: string; to: string }, refs: string[]): Promise<ReportLine[]>;
  /**
   * Every line of the day, in order, through a cursor: `onBatch` is awaited before the next
   * fetch, so a slow reader slows the query down instead of filling memory.
   */
  streamLines(
    rail: ReportRail,
    date: string,
    range: { from: string; to: string },
    batchSize: number,
    onBatch: (lines: ReportLine[]) => Promise<void>,
  ): Promise<void>;
}

/** The providers' settlement reports: a snapshot to render from, and the injected discrepancies. */
export interface ReportBook {
  /** Runs `fn` in one read-only repeatable-read transaction, held until `fn` settles (the whole download of a report). */
  snapshot<T>(fn: (s: ReportSnapshot) => Promise<T>): Promise<T>;
  insertDiscrepancy(id: string, rail: ReportRail, date: string, spec: DiscrepancySpec): Promise<Discrepancy>;
  discrepancies(rail: ReportRail, date: string): Promise<Discrepancy[]>;
  /** Deletes the report's discrepancies (or just `id`); returns how many were deleted. */
  deleteDiscrepancies(rail: ReportRail, date: string, id?: string): Promise<number>;
  /** Whether the day's report has a line with this provider id or our id (and status). */
  hasLine(rail: ReportRail, range: { from: string; to: string }, ref: string, status?: LineStatus): Promise<boolean>;
}
