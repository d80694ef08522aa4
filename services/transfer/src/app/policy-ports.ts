import type { PolicyDocumentJson } from '../domain/approval-policy.js';
import type { OutboxEvent, Signer } from './ports.js';

/** What the approval-policy use cases need from storage (persistence/policy.store.ts). */

export type PolicyStatus = 'PROPOSED' | 'APPROVED' | 'CANCELLED';

export interface PolicyVersionRecord {
  id: string;
  companyId: string;
  version: number;
  document: PolicyDocumentJson;
  status: PolicyStatus;
  requiredSignatures: number;
  proposedBy: string;
  proposedByEmail: string;
  note: string | null;
  createdAt: Date;
  decidedAt: Date | null;
  decidedBy: string | null;
  effectiveAt: Date | null;
  signatures: Array<{ userId: string; email: string; role: string; signedAt: Date }>;
}

/** A version as a send is decided with: its rules and when it takes effect. */
export interface DecidingVersion {
  id: string;
  version: number;
  document: PolicyDocumentJson;
  effectiveAt: Date;
}

export type ProposeOutcome = { kind: 'proposed'; policy: PolicyVersionRecord } | { kind: 'proposal_pending' };

export type SignPolicyOutcome =
  | { kind: 'not_found' }
  | { kind: 'not_pending' }
  | { kind: 'already_signed' }
  | { kind: 'may_sign' }
  | { kind: 'signed'; policy: PolicyVersionRecord; quorum: boolean };

export type CancelPolicyOutcome = { kind: 'not_found' } | { kind: 'not_pending' } | { kind: 'cancelled'; policy: PolicyVersionRecord };

export interface PolicyStore {
  /** A new PROPOSED version (the next number) with the proposer's signature; one PROPOSED per company. */
  propose(
    companyId: string,
    id: string,
    document: PolicyDocumentJson,
    requiredSignatures: number,
    proposer: Signer,
    note: string | null,
  ): Promise<ProposeOutcome>;
  /**
   * A signature on a PROPOSED version, under its row lock. The one that reaches the quorum makes it
   * APPROVED with `effective_at = now + delayMs` and writes `event` in the same transaction.
   */
  sign(
    companyId: string,
    id: string,
    signer: Signer,
    delayMs: number,
    precheck: boolean,
    event: (p: PolicyVersionRecord, previousVersion: number) => OutboxEvent,
  ): Promise<SignPolicyOutcome>;
  cancel(companyId: string, id: string, by: Signer, precheck: boolean): Promise<CancelPolicyOutcome>;
  get(companyId: string, id: string): Promise<PolicyVersionRecord | undefined>;
  list(companyId: string, limit: number, beforeVersion: number | null): Promise<PolicyVersionRecord[]>;
  /** The PROPOSED version, if any. */
  proposed(companyId: string): Promise<PolicyVersionRecord | undefined>;
  /**
   * The versions that decide from `at` on: the one in force at `at` (the highest APPROVED version
   * whose effective_at has passed), then every higher APPROVED version not in force yet, by version.
   */
  fromInstant(companyId: string, at: Date): Promise<PolicyVersionRecord[]>;
  /** `fromInstant` without the signatures: what a send is decided with (the replicas' cache loads it). */
  decidingVersions(companyId: string, at: Date): Promise<DecidingVersion[]>;
  /**
   * Whether a payment of the company to this destination has completed. Only COMPLETED counts: a first
   * payment still awaiting its approvals must not make a second one "not the first".
   */
  paidBefore(companyId: string, destinationFingerprint: string): Promise<boolean>;
  /** `paidBefore` for many destinations at once (a bulk payout's lines): those already paid. */
  paidBeforeMany(companyId: string, destinationFingerprints: string[]): Promise<Set<string>>;
  /** What the company has sent on a Bogotá day so far, as `claimDayTotal` counts it (reads only: quotes). */
  dayTotal(companyId: string, day: string): Promise<bigint>;
  /** Adds a send to the company's Bogotá-day total (the day's first claim starts from what was sent that day); answers the total with it. */
  claimDayTotal(companyId: string, day: string, amount: bigint): Promise<bigint>;
  /** Gives back what `claimDayTotal` added for a send refused before it was accepted. */
  releaseDayTotal(companyId: string, day: string, amount: bigint): Promise<void>;
}
