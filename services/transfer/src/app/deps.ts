import { randomBytes, randomUUID } from 'node:crypto';
import { currentTraceparent, newExceptionId, type Logger } from '@wallet/platform';
import type { ScreenedDestination } from '../domain/destination-fingerprint.js';
import type { CounterpartyStore } from './counterparty-ports.js';
import type { PolicyBook } from './policy-book.js';
import type { ApprovalStore, BatchStore, BrebDirectoryPort, LedgerPort, RailPort, TransferStore } from './ports.js';

/** Settings the use cases read (a slice of the config, in the units they use). */
export interface TransferSettings {
  idempotencyWindowSeconds: number;
  dispatchTimeoutSeconds: number;
  confirmTimeoutSeconds: number;
  dispatchRetryBaseMs: number;
  dispatchRetryMaxMs: number;
  sweeperGraceSeconds: number;
  counterpartyDailyLimit: bigint;
  counterpartyMonthlyLimit: bigint;
  callbackBaseUrl: string;
  callbackSecret: string;
  /** How long a duplicate request waits for the first one's answer before answering 503. */
  duplicateWaitMs: number;
  /** How long a resolve-key result stands in for a key (`target_anchor_handle`). */
  resolvedKeyTtlSeconds: number;
  /** A multi-signature send without quorum for this long expires and its funds are released. */
  approvalTtlSeconds: number;
}

/** What every use case is built from: its ports plus the clock and id source (replaceable in tests). */
export interface TransferDeps {
  store: TransferStore;
  approvals: ApprovalStore;
  ledger: LedgerPort;
  directory: BrebDirectoryPort;
  rails: RailPort;
  settings: TransferSettings;
  log: Logger;
  now: () => Date;
  newId: () => string;
  /** `appr_` + 32 hex characters. */
  newApprovalId: () => string;
  /** `exc_` + 32 hex characters (money exceptions). */
  newExceptionId: () => string;
  traceparent: () => string | undefined;
  /** Called after a commit that wrote events (the outbox relay publishes at once). */
  eventsWritten: () => void;
  /** The keyed fingerprint of a payout's destination (AML account entries, counterparty limits). */
  destinationFingerprint: (d: ScreenedDestination) => string;
  /** The companies' approval policies (docs/policies.md). Absent: the multi-signature threshold decides, as before policies. */
  policies?: PolicyBook;
  /** The companies' counterparties, for sends that name one (`counterpartyId`). */
  counterparties?: Pick<CounterpartyStore, 'get'>;
}

/** Bulk payouts (docs/batches.md): the transfer use cases' deps, the batch store and the runner's settings. */
export interface BatchDeps extends TransferDeps {
  batches: BatchStore;
  /** `awaitDispatch`: the request waits for its batch's dispatch instead of running it in the background (deterministic tests). */
  batchSettings: {
    dispatchConcurrency: number;
    /** A page goes to the rail as one bulk submission where the rail port takes one (RailPort.dispatchMany). */
    railBulk?: boolean;
    /** How many pages of one batch are dispatched at once (each its own lease). */
    pagesInFlight?: number;
    lookupConcurrency: number;
    fundingLeaseMs: number;
    pollMs: number;
    awaitDispatch?: boolean;
  };
}

export function transferDeps(p: Omit<TransferDeps, 'now' | 'newId' | 'newApprovalId' | 'newExceptionId' | 'traceparent'>): TransferDeps {
  return {
    ...p,
    now: () => new Date(),
    newId: randomUUID,
    newApprovalId: () => `appr_${randomBytes(16).toString('hex')}`,
    newExceptionId,
    traceparent: currentTraceparent,
  };
}
