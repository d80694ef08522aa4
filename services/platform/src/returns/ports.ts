import type { NewMoneyException } from '../db/money-exceptions.js';
import type { ReturnReason, ReturnState } from './return-machine.js';

/** A return (devolución) of a credited inbound payment (return-machine.ts), as its owning service stores it. */
export interface ReturnRecord {
  id: string;
  depositId: string;
  companyId: string;
  /** The rail's id of the payment (Bre-B: the network's transfer id; PSE: the provider's). */
  providerTransferId: string;
  /** The ledger key of the inflow it returns (ReserveReturn's `inflow_idempotency_key`). */
  inflowKey: string;
  amount: bigint;
  reason: ReturnReason;
  description: string | null;
  status: ReturnState;
  holdId: string | null;
  movementId: string;
  failureCode: string | null;
  failureMessage: string | null;
  requestedBy: string;
  /** The rail's time of the return (RETURNED). */
  returnedAt: Date | null;
  parked: boolean;
  traceparent: string | null;
  createdAt: Date;
  /** The payment's gross, and the amounts of its returns that are not FAILED (this one included when it is not). */
  depositAmount: bigint;
  returnedAmount: bigint;
  /** The payer, shown on the return's movement. */
  payerName: string | null;
  payerDocument: string | null;
  payerBank: string | null;
}

export interface NewReturn {
  id: string;
  depositId: string;
  companyId: string;
  /** Absent: what is left to return of the payment. */
  amount?: bigint;
  reason: ReturnReason;
  description: string | null;
  movementId: string;
  requestedBy: string;
  /** The ledger key of the payment's inflow, given the payment's `inflow_hint` (ReturnsConfig). */
  inflowKey: (payment: { providerTransferId: string; hint: string | null }) => string;
}

/** Why a return was not recorded (nothing written). */
export type ReturnRefusal =
  | { refused: 'NOT_FOUND' }
  | { refused: 'NOT_RETURNABLE'; status: string }
  | { refused: 'EXCEEDS'; gross: bigint; returned: bigint }
  | { refused: 'TOO_MANY'; count: number }
  /** The caller's own return id names a return of another payment. */
  | { refused: 'ID_TAKEN' };

export interface ReturnPatch {
  holdId?: string;
  returnedAt?: Date;
  failureCode?: string;
  failureMessage?: string;
}

export interface ReturnEventOut {
  id: string;
  subject: string;
  payload: unknown;
}

export interface ReturnStore {
  /**
   * Under the payment's row lock (`for update`: two returns of one payment are decided one after
   * the other): the payment is the company's and returnable (credited), it has fewer than the maximum
   * returns, and the amounts of its returns that are not FAILED plus this one stay within its gross.
   * Then the return in RESERVING with its history row. Nothing is written on a refusal. A return id
   * already used for this payment answers that return as it is (idempotent by the caller's id).
   */
  insert(r: NewReturn): Promise<ReturnRecord | ReturnRefusal>;
  /** The saga's compare-and-set (state + history + event, one transaction); undefined when it was not in `from`. */
  transition(t: {
    id: string;
    from: readonly ReturnState[];
    to: ReturnState;
    reason: string;
    patch?: ReturnPatch;
    event?: (r: ReturnRecord) => ReturnEventOut;
  }): Promise<ReturnRecord | undefined>;
  byId(id: string): Promise<ReturnRecord | undefined>;
  /** A payment's returns, oldest first. */
  byDeposit(depositId: string): Promise<ReturnRecord[]>;
  /**
   * A live return left for an operator: the sweeper no longer runs it. In the same transaction, its money
   * exception is opened (one per kind and return: a repeat park opens none, `opened: false`).
   */
  park(id: string, exception: NewMoneyException): Promise<{ exceptionId: string; opened: boolean }>;
  /** An operator's retry of a parked return: the sweeper may run it again. */
  unpark(id: string): Promise<void>;
  /** Live returns whose step is older than the grace, leased (`step_at` moved ahead); parked ones never. */
  leaseStale(graceSeconds: number, batch: number): Promise<ReturnRecord[]>;
}

/** The ledger's return holds (ReserveReturn / CommitReturn / ReleaseReturn), keyed `<owner>:return:<id>:…`. */
export interface ReturnLedger {
  /** The hold's id. */
  reserveReturn(r: ReturnRecord): Promise<string>;
  commitReturn(r: ReturnRecord): Promise<void>;
  releaseReturn(r: ReturnRecord, errorMessage: string): Promise<void>;
}

/**
 * The rail's return of the payment (idempotent by the return's id): RETURNED with the rail's time,
 * REFUSED (never: `code` says why) or UNAVAILABLE (unknown: ask again).
 */
export interface ReturnRail {
  readonly name: 'BREB' | 'PSE';
  send(r: ReturnRecord): Promise<{ outcome: 'RETURNED' | 'REFUSED' | 'UNAVAILABLE'; returnedAt: Date | null; code?: string }>;
}
