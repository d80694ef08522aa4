import type { MovementRail, WalletRail } from './rails.js';

export const MOVEMENT_TYPES = ['TRANSFER_OUT', 'TRANSFER_IN', 'FEE_CHARGE', 'BALANCE_ADD'] as const;
export type MovementType = (typeof MOVEMENT_TYPES)[number];

export const MOVEMENT_STATUSES = ['PENDING', 'AWAITING_APPROVAL', 'EXECUTING', 'COMPLETED', 'FAILED', 'EXPIRED', 'REVERSED'] as const;
export type MovementStatus = (typeof MOVEMENT_STATUSES)[number];

export type HoldStatus = 'OPEN' | 'COMMITTED' | 'RELEASED';

/** A transfer whose funds are still reserved: its hold is OPEN (LEDGER.md invariant 3). */
export const LIVE_TRANSFER_STATUSES: readonly MovementStatus[] = ['PENDING', 'AWAITING_APPROVAL', 'EXECUTING'];

/** Statuses a send may be reserved in. */
export const RESERVE_STATUSES: readonly MovementStatus[] = ['PENDING', 'AWAITING_APPROVAL'];

/** Final statuses a release may leave a send in. */
export const RELEASE_STATUSES: readonly MovementStatus[] = ['FAILED', 'EXPIRED'];

/** The rail may complete a send once it was dispatched: PENDING, or EXECUTING when the callback outruns the status change. */
export const COMMITTABLE_STATUSES: readonly MovementStatus[] = ['PENDING', 'EXECUTING'];

/** Status changes that move no money (multi-signature): AWAITING_APPROVAL → EXECUTING → PENDING. */
const NON_MONEY_TRANSITIONS: ReadonlyArray<readonly [MovementStatus, MovementStatus]> = [
  ['AWAITING_APPROVAL', 'EXECUTING'],
  ['EXECUTING', 'PENDING'],
];

export function isNonMoneyTransition(from: MovementStatus, to: MovementStatus): boolean {
  return NON_MONEY_TRANSITIONS.some(([f, t]) => f === from && t === to);
}

export function isMovementStatus(v: unknown): v is MovementStatus {
  return typeof v === 'string' && (MOVEMENT_STATUSES as readonly string[]).includes(v);
}

export function isMovementType(v: unknown): v is MovementType {
  return typeof v === 'string' && (MOVEMENT_TYPES as readonly string[]).includes(v);
}

/** Display details the owning service supplies; the account number is kept masked. */
export interface MovementDetails {
  targetName?: string;
  targetDocument?: string;
  bankName?: string;
  bankAccountType?: string;
  bankAccountNumber?: string;
  description?: string;
  errorMessage?: string;
  payerName?: string;
  payerDocument?: string;
  payerBank?: string;
  /** A bulk payout's item (docs/batches.md): the batch the send belongs to. */
  batchId?: string;
}

export const DETAIL_FIELDS = [
  'targetName',
  'targetDocument',
  'bankName',
  'bankAccountType',
  'bankAccountNumber',
  'description',
  'errorMessage',
  'payerName',
  'payerDocument',
  'payerBank',
  'batchId',
] as const satisfies ReadonlyArray<keyof MovementDetails>;

export interface Movement {
  id: string;
  companyId: string;
  type: MovementType;
  rail: MovementRail;
  walletRail: WalletRail;
  status: MovementStatus;
  amount: bigint;
  totalFee: bigint;
  ivaAmount: bigint;
  netAmount: bigint;
  reference: string | null;
  apiKeyId: string | null;
  details: MovementDetails;
  /** Instants as the journal keeps them: RFC 3339 UTC with six fraction digits (never a `Date`, which keeps milliseconds). */
  createdAt: string;
  completedAt: string | null;
  /** A leg of a move between the company's own wallets (docs/wallet-moves.md): the move (its posting's id). */
  walletMoveId?: string | null;
}

export interface Hold {
  id: string;
  companyId: string;
  rail: WalletRail;
  status: HoldStatus;
  amount: bigint;
  fee: bigint;
  iva: bigint;
  total: bigint;
  /** The fixed part of `fee` (the rest is variable); null on holds reserved before it was kept. */
  fixedFee: bigint | null;
  movementId: string;
  createdAt: Date;
  closedAt: Date | null;
  /** A return's hold (ReserveReturn): the inflow movement it returns, and the settlement account its Commit credits. */
  returnOf?: string | null;
  returnAccount?: string | null;
}

/** The amounts a movement shows, per type (README "Movement amounts"). */
export interface MovementAmounts {
  amount: bigint;
  totalFee: bigint;
  ivaAmount: bigint;
  netAmount: bigint;
}

/** Send: netAmount = amount − totalFee (CONTRACT §2); the wallet is debited amount + fee + IVA. */
export function outflowAmounts(amount: bigint, subtotalFee: bigint, iva: bigint): MovementAmounts {
  return { amount, totalFee: subtotalFee, ivaAmount: iva, netAmount: amount - subtotalFee };
}

/** Inflow: netAmount = what the wallet received, G − fee − IVA. */
export function inflowAmounts(gross: bigint, subtotalFee: bigint, iva: bigint): MovementAmounts {
  return { amount: gross, totalFee: subtotalFee, ivaAmount: iva, netAmount: gross - subtotalFee - iva };
}

/** Admin credit: everything is the amount. */
export function creditAmounts(amount: bigint): MovementAmounts {
  return { amount, totalFee: 0n, ivaAmount: 0n, netAmount: amount };
}

/** A leg of a move between the company's own wallets: no fee, everything is the amount. */
export const moveAmounts = creditAmounts;

/** Admin fee charge: amount = netAmount = what left the wallet (fee + IVA). */
export function feeChargeAmounts(fee: bigint, iva: bigint): MovementAmounts {
  return { amount: fee + iva, totalFee: fee, ivaAmount: iva, netAmount: fee + iva };
}
