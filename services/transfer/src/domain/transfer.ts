import type { ApproverRole, PolicyDecision } from './approval-policy.js';
import type { KeyType } from './keys.js';
import type { Rail } from './rails.js';

/**
 * The send saga's states. Every way between them is declared in `transfer-machine.ts` (one table,
 * with the money step each transition owes); each state is recorded before the next step starts,
 * so a crash anywhere is resumed by the sweeper from the last recorded state.
 *
 * ABANDONING, RELEASING, EXPIRING and COMPLETING are the intermediate states of the money steps:
 * a writer first wins the move into one of them, then touches the ledger, then closes it.
 * EXECUTING behaves as RESERVED (accepted, funds held, to be dispatched) once the quorum is reached.
 * REJECTED transfers were never accepted: nothing stays reserved, no event, no reference held.
 * Users see PENDING for the live states, then COMPLETED or FAILED; the multi-signature states are
 * shown as they are (CONTRACT §2).
 */
export const TRANSFER_STATES = [
  'RECEIVED',
  'RESERVED',
  'AWAITING_APPROVAL',
  'EXECUTING',
  'DISPATCHED',
  'ABANDONING',
  'RELEASING',
  'EXPIRING',
  'COMPLETING',
  'COMPLETED',
  'FAILED',
  'REJECTED',
  'EXPIRED',
] as const;
export type TransferState = (typeof TRANSFER_STATES)[number];

export const LIVE_STATES: readonly TransferState[] = [
  'RECEIVED',
  'RESERVED',
  'AWAITING_APPROVAL',
  'EXECUTING',
  'DISPATCHED',
  'ABANDONING',
  'RELEASING',
  'EXPIRING',
  'COMPLETING',
];
export const FINAL_STATES: readonly TransferState[] = ['COMPLETED', 'FAILED', 'REJECTED', 'EXPIRED'];
/** States whose gross amount counts towards the counterparty limits (on its way out, or out). */
export const COUNTED_STATES: readonly TransferState[] = ['RECEIVED', 'RESERVED', 'AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED', 'COMPLETING', 'COMPLETED'];
/** Accepted, funds held, to be dispatched to the rail. */
export const DISPATCHABLE_STATES: readonly TransferState[] = ['RESERVED', 'EXECUTING'];

export type PublicStatus = 'PENDING' | 'COMPLETED' | 'FAILED' | 'AWAITING_APPROVAL' | 'EXECUTING' | 'EXPIRED';

export function publicStatus(state: TransferState): PublicStatus {
  switch (state) {
    case 'COMPLETED':
      return 'COMPLETED';
    case 'FAILED':
    case 'REJECTED':
      return 'FAILED';
    case 'AWAITING_APPROVAL':
    case 'EXPIRING':
      return 'AWAITING_APPROVAL';
    case 'EXECUTING':
      return 'EXECUTING';
    case 'EXPIRED':
      return 'EXPIRED';
    default:
      return 'PENDING';
  }
}

export function isFinal(state: TransferState): boolean {
  return FINAL_STATES.includes(state);
}

/** The approval a multi-signature send waits for (its status lives in the approvals table). */
export interface ApprovalRef {
  id: string;
  threshold: number;
  expiresAt: Date;
  /** The roles whose signatures count (absent: ADMIN and OPERATOR). */
  roles?: ApproverRole[];
}

/** An approval as decided so far (a multi-signature send's or a bulk payout's): signatures and decision. */
export interface ApprovalRecord {
  id: string;
  threshold: number;
  status: 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED';
  signatures: Array<{ userId: string; email: string; role: string; signedAt: Date }>;
  createdAt: Date;
  expiresAt: Date;
  decidedAt: Date | null;
  rejectReason: string | null;
  rejectedBy: string | null;
}

export interface FeeBreakdown {
  fixedFee: bigint;
  variableFee: bigint;
  subtotalFee: bigint;
  ivaApplicable: boolean;
  ivaAmount: bigint;
  totalCharged: bigint;
}

export interface BrebDestination {
  kind: 'BREB';
  keyType: KeyType;
  keyValue: string;
  anchorHandle: string;
  bankName: string | null;
  bankAccountType: string | null;
}

export interface AchDestination {
  kind: 'ACH';
  bankId: number;
  bankName: string;
  bankAchCode: string;
  accountTypeId: number;
  /** Full number: needed to dispatch (also after a crash). Sealed at rest (persistence/data-protection.ts), never logged, masked everywhere it is shown. */
  accountNumber: string;
  documentTypeId: number;
  documentNumber: string;
  holderFirstName: string;
  holderLastName: string;
}

export type Destination = BrebDestination | AchDestination;

export interface TransferRecord {
  id: string;
  companyId: string;
  apiKeyId: string | null;
  rail: Rail;
  state: TransferState;
  amount: bigint;
  fee: FeeBreakdown;
  targetName: string;
  targetDocument: string;
  reference: string | null;
  description: string | null;
  destination: Destination;
  holdId: string | null;
  providerTransferId: string | null;
  errorMessage: string | null;
  dispatchAttempts: number;
  /** Set on multi-signature sends. */
  approval: ApprovalRef | null;
  /** When the quorum was reached (the dispatch time-out counts from here for approved sends). */
  approvedAt: Date | null;
  /** Which event a RELEASING transfer writes when FAILED: `rejected` for a signer's rejection. */
  releaseEvent: 'failed' | 'rejected' | null;
  /** The signer who rejected it (multi-signature). */
  rejectedBy: string | null;
  createdAt: Date;
  dispatchedAt: Date | null;
  completedAt: Date | null;
  /** An item of a bulk payout (docs/batches.md): the batch it belongs to. */
  batchId?: string | null;
  /**
   * The keyed fingerprint of the destination (docs/security.md "Screening on the destination account": AML and counterparty limits on what
   * the money reaches). Null on transfers recorded before it existed (they count by document only).
   */
  destinationFingerprint?: string | null;
  /**
   * The W3C trace context of the call that recorded it (null when tracing was off): the rail's
   * callback, sweeper resumptions and status lookups, each in a trace of its own, link to it.
   */
  traceparent?: string | null;
  /** What the company's approval policy decided for it (docs/policies.md); null on transfers from before policies. */
  policyDecision?: PolicyDecision | null;
}

/** What the wallet is debited: amount + fee + IVA (CONTRACT §2). */
export function totalDebit(t: { amount: bigint; fee: FeeBreakdown }): bigint {
  return t.amount + t.fee.subtotalFee + t.fee.ivaAmount;
}

/** Exponential back-off for dispatch retries: base, 2·base, 4·base … capped. attempts ≥ 1. */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number): number {
  const exp = Math.min(Math.max(attempts - 1, 0), 30);
  return Math.min(baseMs * 2 ** exp, maxMs);
}
