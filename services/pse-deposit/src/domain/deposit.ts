import { randomBytes } from 'node:crypto';
import { MONEY_STATES, linkDue, type PseState } from './deposit-machine.js';

export { paidInTime } from './deposit-machine.js';

/** CONTRACT §2: stored and returned statuses; `PAID` is accepted as a filter alias of ASSIGNED. */
export const DEPOSIT_STATUSES = ['PENDING_CONFIRM', 'ASSIGNED', 'FAILED', 'EXPIRED', 'UNASSIGNED', 'REVERSED'] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];
/**
 * What a deposit is stored as: the PSE saga's states (deposit-machine.ts, including the money
 * states CREDITING and REVERSING, never shown) and Bre-B's UNASSIGNED (fed by the collect-key service).
 */
export type DepositState = PseState | 'UNASSIGNED';
export const DEPOSIT_SOURCES = ['PSE', 'BREB'] as const;
export type DepositSource = (typeof DEPOSIT_SOURCES)[number];

/**
 * The `pending_step` column: the money step a deposit in a money state owes (CREDIT in CREDITING,
 * REVERSE in REVERSING, null otherwise; a CHECK ties it to the state). Kept for operators' queries.
 */
export type PendingStep = 'CREDIT' | 'REVERSE';

export function pendingStepOf(state: DepositState): PendingStep | null {
  const step = MONEY_STATES[state as PseState]?.step;
  return step === 'credit' ? 'CREDIT' : step === 'reverse' ? 'REVERSE' : null;
}

/**
 * The status clients see (CONTRACT §2, §10): a link is EXPIRED from `expiresAt` even before the
 * sweeper moves it (and while a payment confirmed for it is being credited); a reversal in flight
 * still shows ASSIGNED. CREDITING and REVERSING are never shown.
 */
export function publicStatus(state: DepositState, expiresAt: Date | null, now: Date): DepositStatus {
  switch (state) {
    case 'PENDING_CONFIRM':
    case 'CREDITING':
      return linkDue(expiresAt, now) ? 'EXPIRED' : 'PENDING_CONFIRM';
    case 'REVERSING':
      return 'ASSIGNED';
    default:
      return state;
  }
}

/** The stored states whose public status the clock decides (publicStatus: PENDING_CONFIRM until expiresAt, then EXPIRED). */
export const CLOCK_SHOWN_STATES: readonly DepositState[] = ['PENDING_CONFIRM', 'CREDITING'];

/** The stored states that can show as a public status (the listing filter narrows by these first). */
export function statesShownAs(status: DepositStatus): DepositState[] {
  switch (status) {
    case 'PENDING_CONFIRM':
      return ['PENDING_CONFIRM', 'CREDITING'];
    case 'EXPIRED':
      return ['EXPIRED', 'PENDING_CONFIRM', 'CREDITING'];
    case 'ASSIGNED':
      return ['ASSIGNED', 'REVERSING'];
    default:
      return [status];
  }
}

/** §4.6: 1 = CC, 4 = CE, 5 = Pasaporte, 8 = NIT. */
export const DOCUMENT_TYPES: Readonly<Record<number, string>> = { 1: 'CC', 4: 'CE', 5: 'PA', 8: 'NIT' };

export interface FeeBreakdown {
  fixedFee: bigint;
  variableFee: bigint;
  subtotalFee: bigint;
  ivaApplicable: boolean;
  ivaAmount: bigint;
  totalCharged: bigint;
}

export interface BrebKeyRef {
  id: string;
  externalId: string;
  name: string;
  value: string;
}

export interface DepositRecord {
  id: string;
  companyId: string;
  source: DepositSource;
  /** The stored state; clients see `publicStatus(status, expiresAt, now)`. */
  status: DepositState;
  amount: bigint;
  fee: FeeBreakdown;
  netAmount: bigint;
  currency: string;
  payerDocumentType: number | null;
  payerDocumentNumber: string | null;
  payerFirstName: string | null;
  payerLastName: string | null;
  payerEmail: string | null;
  payerPhone: string | null;
  payerBank: string | null;
  payerName: string | null;
  internalRef: string | null;
  paygatewayUrl: string | null;
  providerLinkId: string | null;
  expiresAt: Date | null;
  providerTransferId: string | null;
  providerConfirmedAt: Date | null;
  movementId: string | null;
  pendingStep: PendingStep | null;
  errorMessage: string | null;
  brebKey: BrebKeyRef | null;
  createdAt: Date;
  /** The cobro this PSE link was made for (docs/cobros.md); null for a link of its own. */
  cobroId?: string | null;
  /** In the listing: the cobro the payment was matched to (cobro_payments), when it is not the cobro of its own link. */
  matchedCobroId?: string | null;
  /** The W3C trace context of the call that recorded it (null when tracing was off); later steps in other traces link to it. */
  traceparent?: string | null;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** `dep_` + 24 lowercase alphanumerics (uniform: rejection sampling over random bytes). */
export function newDepositId(): string {
  let out = '';
  while (out.length < 24) {
    for (const b of randomBytes(32)) {
      if (b < 252 && out.length < 24) out += ALPHABET[b % 36];
    }
  }
  return `dep_${out}`;
}

export const isDepositId = (v: string): boolean => /^dep_[a-z0-9]{24}$/.test(v);

/** "CC 1020304050": the listing's payer document (§2.7 example: the type as a prefix). */
export function payerDocument(type: number | null, num: string | null): string | null {
  if (!num) return null;
  const t = type === null ? undefined : DOCUMENT_TYPES[type];
  return t ? `${t} ${num}` : num;
}

export function payerFullName(first: string | null, last: string | null): string | null {
  const n = [first, last]
    .filter((s): s is string => !!s)
    .join(' ')
    .trim();
  return n.length > 0 ? n : null;
}

/** Net credited to the wallet: gross − fee − IVA (§3.2). */
export function netOf(amount: bigint, fee: FeeBreakdown): bigint {
  return amount - fee.subtotalFee - fee.ivaAmount;
}

/** Fee plus IVA at or above the amount: nothing would be credited (§4.6, 422). */
export function feeExceedsAmount(amount: bigint, fee: FeeBreakdown): boolean {
  return fee.subtotalFee + fee.ivaAmount >= amount;
}

/** The listing's status filter: PAID is an alias of ASSIGNED; unknown → null. */
export function statusFilter(v: string): DepositStatus | null {
  const s = v.trim().toUpperCase();
  if (s === 'PAID') return 'ASSIGNED';
  return (DEPOSIT_STATUSES as readonly string[]).includes(s) ? (s as DepositStatus) : null;
}

/** Ledger idempotency keys derived from the deposit: a retry after a crash never double-credits. */
export const ledgerKeys = {
  paid: (id: string) => `deposit:${id}:paid`,
  reversed: (id: string) => `deposit:${id}:reversed`,
};
