import { randomBytes } from 'node:crypto';

/** CONTRACT §2: stored and returned statuses; `PAID` is accepted as a filter alias of ASSIGNED. */
export const DEPOSIT_STATUSES = ['PENDING_CONFIRM', 'ASSIGNED', 'FAILED', 'EXPIRED', 'UNASSIGNED', 'REVERSED'] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];
export const DEPOSIT_SOURCES = ['PSE', 'BREB'] as const;
export type DepositSource = (typeof DEPOSIT_SOURCES)[number];

/**
 * A money step in flight (recorded before the ledger call, cleared with the state change that
 * follows it), so a crash between the two is finished by the sweeper and never double-posts:
 * CREDIT: PAID received, RecordInflow `deposit:<id>:paid` not yet confirmed;
 * REVERSE: REVERSED received, ReverseInflow `deposit:<id>:reversed` not yet confirmed.
 */
export type PendingStep = 'CREDIT' | 'REVERSE';

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

export interface BrebKeyRef { id: string; externalId: string; name: string; value: string }

export interface DepositRecord {
  id: string;
  companyId: string;
  source: DepositSource;
  status: DepositStatus;
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
  const n = [first, last].filter((s): s is string => !!s).join(' ').trim();
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

/** A PAID outcome is credited only while the link is pending and not past expiry + grace. */
export function paidInTime(expiresAt: Date | null, paidAt: Date, graceSeconds: number): boolean {
  return expiresAt === null || paidAt.getTime() <= expiresAt.getTime() + graceSeconds * 1000;
}

/** The listing's status filter: PAID is an alias of ASSIGNED; unknown → null. */
export function statusFilter(v: string): DepositStatus | null {
  const s = v.trim().toUpperCase();
  if (s === 'PAID') return 'ASSIGNED';
  return (DEPOSIT_STATUSES as readonly string[]).includes(s) ? (s as DepositStatus) : null;
}
