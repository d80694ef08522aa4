import { depositEventsV1, ledgerV1, transferEventsV1 } from '@wallet/proto';

/**
 * The read model: one record per transfer and per deposit, built only from events. Every field is
 * nullable because any event (in any order) may be the first one seen; `merge` combines them so an
 * out-of-order or repeated event never loses or regresses data.
 */

export interface TransactionFields {
  rail: string | null; // BREB | ACH
  amount: bigint | null;
  totalFee: bigint | null;
  ivaAmount: bigint | null;
  netAmount: bigint | null;
  targetName: string | null;
  targetDocument: string | null;
  reference: string | null;
  description: string | null;
  bankName: string | null;
  bankAccountType: string | null;
  bankAccountMasked: string | null;
  /** BREB sends: the destination key, e.g. "3001234567 (PHONE)". */
  brebKey: string | null;
  providerTransferId: string | null;
  errorMessage: string | null;
  apiKeyId: string | null;
  createdAt: Date | null;
  completedAt: Date | null;
  /** null: a send; RETURN: a return of a deposit to its payer (docs/returns.md). */
  kind: string | null;
}

export interface DepositFields {
  source: string | null; // PSE | BREB
  amount: bigint | null;
  feeAmount: bigint | null;
  ivaAmount: bigint | null;
  netAmount: bigint | null;
  currency: string | null;
  brebKeyId: string | null;
  brebKeyExternalId: string | null;
  brebKeyName: string | null;
  brebKeyValue: string | null;
  payerName: string | null;
  payerDocument: string | null;
  payerBank: string | null;
  payerEmail: string | null;
  providerTransferId: string | null;
  providerConfirmedAt: Date | null;
  internalRef: string | null;
  expiresAt: Date | null;
  createdAt: Date | null;
}

/** What every stored record carries besides its fields. */
export interface RecordMeta {
  id: string;
  companyId: string;
  status: string | null;
  /** occurredAt of the event whose status is stored. */
  statusAt: Date | null;
  /** The newest occurredAt applied, and that event's id. */
  lastEventAt: Date;
  lastEventId: string;
}

export type StoredTransaction = RecordMeta & TransactionFields;
export type StoredDeposit = RecordMeta & DepositFields;

/** One event, reduced to the fields it carries (absent = undefined). */
export interface Patch<F> {
  id: string;
  companyId: string;
  eventId: string;
  status: string | undefined;
  occurredAt: Date;
  fields: Partial<F>;
}

export const TRANSACTION_FIELDS: ReadonlyArray<keyof TransactionFields> = [
  'rail',
  'amount',
  'totalFee',
  'ivaAmount',
  'netAmount',
  'targetName',
  'targetDocument',
  'reference',
  'description',
  'bankName',
  'bankAccountType',
  'bankAccountMasked',
  'brebKey',
  'providerTransferId',
  'errorMessage',
  'apiKeyId',
  'createdAt',
  'completedAt',
  'kind',
];
export const DEPOSIT_FIELDS: ReadonlyArray<keyof DepositFields> = [
  'source',
  'amount',
  'feeAmount',
  'ivaAmount',
  'netAmount',
  'currency',
  'brebKeyId',
  'brebKeyExternalId',
  'brebKeyName',
  'brebKeyValue',
  'payerName',
  'payerDocument',
  'payerBank',
  'payerEmail',
  'providerTransferId',
  'providerConfirmedAt',
  'internalRef',
  'expiresAt',
  'createdAt',
];

/** Final states beat in-progress ones whatever the arrival order; within a class the later occurredAt wins. */
const TRANSFER_FINAL = new Set(['COMPLETED', 'FAILED', 'EXPIRED', 'REVERSED']);
const DEPOSIT_FINAL = new Set(['ASSIGNED', 'FAILED', 'EXPIRED', 'REVERSED', 'UNASSIGNED']);
export const transferStatusRank = (s: string | null | undefined): number => (!s ? 0 : TRANSFER_FINAL.has(s) ? 2 : 1);
export const depositStatusRank = (s: string | null | undefined): number => (!s ? 0 : DEPOSIT_FINAL.has(s) ? 2 : 1);

// proto3 JSON drops zero values and empty strings: both read as "this event did not say".
const str = (v: string | undefined | null): string | undefined => (v === undefined || v === null || v.trim() === '' ? undefined : v);
const cents = (v: bigint | undefined | null): bigint | undefined => (v === undefined || v === null || v === 0n ? undefined : v);
const date = (v: Date | undefined | null): Date | undefined => (v instanceof Date && !Number.isNaN(v.getTime()) ? v : undefined);

function compact<F>(o: Record<string, unknown>): Partial<F> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as Partial<F>;
}

/** An account shown on a receipt is always masked to its last 4, even if a publisher forgot to. */
export function ensureMasked(v: string | undefined): string | undefined {
  if (!v) return undefined;
  const digits = v.replace(/[^0-9A-Za-z]/g, '');
  if (/^\*+/.test(v) && digits.length <= 4) return `****${digits}`;
  return digits.length > 0 ? `****${digits.slice(-4)}` : undefined;
}

const RAILS: Partial<Record<ledgerV1.Rail, string>> = { [ledgerV1.Rail.BREB]: 'BREB', [ledgerV1.Rail.ACH]: 'ACH', [ledgerV1.Rail.PSE]: 'PSE' };
const MOVEMENT_STATUS: Partial<Record<ledgerV1.MovementStatus, string>> = {
  [ledgerV1.MovementStatus.PENDING]: 'PENDING',
  [ledgerV1.MovementStatus.AWAITING_APPROVAL]: 'AWAITING_APPROVAL',
  [ledgerV1.MovementStatus.EXECUTING]: 'EXECUTING',
  [ledgerV1.MovementStatus.COMPLETED]: 'COMPLETED',
  [ledgerV1.MovementStatus.FAILED]: 'FAILED',
  [ledgerV1.MovementStatus.EXPIRED]: 'EXPIRED',
  [ledgerV1.MovementStatus.REVERSED]: 'REVERSED',
};

export type Decoded<F> = { ok: true; patch: Patch<F> } | { ok: false; reason: string };

/** A `transfer.*` payload (proto3 JSON) → patch. `fallbackEventId` is the message's ce-id. */
export function transferPatch(payload: unknown, fallbackEventId: string, fallbackTime?: string): Decoded<TransactionFields> {
  let e: transferEventsV1.TransferEvent;
  try {
    e = transferEventsV1.TransferEvent.fromJSON(payload);
  } catch (err) {
    return { ok: false, reason: `undecodable: ${(err as Error).message}` };
  }
  if (!str(e.transferId) || !str(e.companyId)) return { ok: false, reason: 'missing transferId or companyId' };
  const occurredAt = date(e.occurredAt) ?? date(fallbackTime ? new Date(fallbackTime) : undefined) ?? date(e.completedAt) ?? date(e.createdAt);
  if (!occurredAt) return { ok: false, reason: 'missing occurredAt' };
  return {
    ok: true,
    patch: {
      id: e.transferId,
      companyId: e.companyId,
      eventId: str(e.eventId) ?? fallbackEventId,
      occurredAt,
      status: MOVEMENT_STATUS[e.status],
      fields: compact<TransactionFields>({
        rail: RAILS[e.rail],
        amount: cents(e.amount),
        totalFee: cents(e.totalFee),
        ivaAmount: cents(e.ivaAmount),
        netAmount: cents(e.netAmount),
        targetName: str(e.targetName),
        targetDocument: str(e.targetDocument),
        reference: str(e.reference),
        description: str(e.description),
        bankName: str(e.bankName),
        bankAccountType: str(e.bankAccountType),
        bankAccountMasked: ensureMasked(str(e.bankAccountNumberMasked)),
        brebKey: str(e.brebKeyValue) ? `${str(e.brebKeyValue)}${str(e.brebKeyType) ? ` (${str(e.brebKeyType)})` : ''}` : undefined,
        providerTransferId: str(e.providerTransferId),
        errorMessage: str(e.errorMessage),
        apiKeyId: str(e.apiKeyId),
        createdAt: date(e.createdAt),
        completedAt: date(e.completedAt),
      }),
    },
  };
}

/** A return's final status as a transaction's (the receipt's vocabulary): RETURNED is COMPLETED. */
const RETURN_STATUS: Record<string, string> = { PENDING: 'PENDING', RETURNED: 'COMPLETED', FAILED: 'FAILED' };

/**
 * A `deposit.returned` / `deposit.return_failed` payload (a DepositReturnEvent) → the patch of the
 * return's wallet movement (`transactionId`): a transaction of kind RETURN, to the payment's payer.
 */
export function returnPatch(payload: unknown, fallbackEventId: string, fallbackTime?: string): Decoded<TransactionFields> {
  let e: depositEventsV1.DepositReturnEvent;
  try {
    e = depositEventsV1.DepositReturnEvent.fromJSON(payload);
  } catch (err) {
    return { ok: false, reason: `undecodable: ${(err as Error).message}` };
  }
  const r = e.depositReturn;
  if (!r || !str(r.transactionId) || !str(e.companyId)) return { ok: false, reason: 'missing return, transactionId or companyId' };
  const occurredAt = date(e.occurredAt) ?? date(fallbackTime ? new Date(fallbackTime) : undefined) ?? date(r.returnedAt) ?? date(r.createdAt);
  if (!occurredAt) return { ok: false, reason: 'missing occurredAt' };
  return {
    ok: true,
    patch: {
      id: r.transactionId,
      companyId: e.companyId,
      eventId: str(e.eventId) ?? fallbackEventId,
      occurredAt,
      status: RETURN_STATUS[r.status],
      fields: compact<TransactionFields>({
        kind: 'RETURN',
        rail: str(r.rail),
        amount: cents(r.amountCents),
        totalFee: 0n,
        ivaAmount: 0n,
        netAmount: cents(r.amountCents),
        targetName: str(r.payerName),
        targetDocument: str(r.payerDocument),
        bankName: str(r.payerBank),
        reference: str(r.id),
        description: str(r.description) ?? `Devolución del depósito ${r.depositId}`,
        errorMessage: str(r.failureMessage),
        createdAt: date(r.createdAt),
        completedAt: date(r.returnedAt),
      }),
    },
  };
}

/** A `deposit.*` payload (proto3 JSON) → patch. */
export function depositPatch(payload: unknown, fallbackEventId: string, fallbackTime?: string): Decoded<DepositFields> {
  let e: depositEventsV1.DepositEvent;
  try {
    e = depositEventsV1.DepositEvent.fromJSON(payload);
  } catch (err) {
    return { ok: false, reason: `undecodable: ${(err as Error).message}` };
  }
  const d = e.deposit;
  if (!d || !str(d.id) || !str(e.companyId)) return { ok: false, reason: 'missing deposit, deposit id or companyId' };
  const occurredAt = date(e.occurredAt) ?? date(fallbackTime ? new Date(fallbackTime) : undefined) ?? date(d.providerConfirmedAt) ?? date(d.createdAt);
  if (!occurredAt) return { ok: false, reason: 'missing occurredAt' };
  const payerName = str(d.payerName) ?? str([d.payerFirstName, d.payerLastName].filter((x) => str(x)).join(' '));
  return {
    ok: true,
    patch: {
      id: d.id,
      companyId: e.companyId,
      eventId: str(e.eventId) ?? fallbackEventId,
      occurredAt,
      status: str(d.status)?.toUpperCase(),
      fields: compact<DepositFields>({
        source: str(d.source)?.toUpperCase(),
        amount: cents(d.amountCents),
        feeAmount: cents(d.feeAmountCents),
        ivaAmount: cents(d.ivaAmountCents),
        netAmount: cents(d.netAmountCents),
        currency: str(d.currency),
        brebKeyId: str(d.brebKey?.id),
        brebKeyExternalId: str(d.brebKey?.externalId),
        brebKeyName: str(d.brebKey?.name),
        brebKeyValue: str(d.brebKey?.value),
        payerName,
        payerDocument: str(d.payerDocument),
        payerBank: str(d.payerBank),
        payerEmail: str(d.payerEmail),
        providerTransferId: str(d.providerTransferId),
        providerConfirmedAt: date(d.providerConfirmedAt),
        internalRef: str(d.internalRef),
        expiresAt: date(d.expiresAt),
        createdAt: date(d.createdAt),
      }),
    },
  };
}

const same = (a: unknown, b: unknown): boolean => (a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b);

/**
 * Applies one event to the stored record (or creates it). Per field: an event at least as new as the
 * newest one applied overwrites what it carries; an older one only fills fields still empty. Status:
 * a higher rank (final over in-progress) wins; within a rank the later occurredAt. Returns
 * `changed: false` when nothing moved (a repeat under a new id, or an older event with nothing new).
 */
export function merge<F extends object>(
  stored: (RecordMeta & F) | undefined,
  p: Patch<F>,
  fieldNames: ReadonlyArray<keyof F>,
  rank: (s: string | null | undefined) => number,
): { record: RecordMeta & F; changed: boolean } {
  if (!stored) {
    const fields = {} as Record<keyof F, unknown>;
    for (const k of fieldNames) fields[k] = p.fields[k] ?? null;
    return {
      record: {
        ...(fields as F),
        id: p.id,
        companyId: p.companyId,
        status: p.status ?? null,
        statusAt: p.status ? p.occurredAt : null,
        lastEventAt: p.occurredAt,
        lastEventId: p.eventId,
      },
      changed: true,
    };
  }
  const newer = p.occurredAt.getTime() > stored.lastEventAt.getTime();
  const notOlder = p.occurredAt.getTime() >= stored.lastEventAt.getTime();
  const next = { ...stored } as RecordMeta & F;
  let changed = false;
  for (const k of fieldNames) {
    const v = p.fields[k];
    if (v === undefined) continue;
    const cur = stored[k];
    if ((cur === null || cur === undefined || notOlder) && !same(cur, v)) {
      (next as Record<keyof F, unknown>)[k] = v;
      changed = true;
    }
  }
  if (p.status && p.status !== stored.status) {
    const rNew = rank(p.status),
      rOld = rank(stored.status);
    if (rNew > rOld || (rNew === rOld && (!stored.statusAt || p.occurredAt.getTime() > stored.statusAt.getTime()))) {
      next.status = p.status;
      next.statusAt = p.occurredAt;
      changed = true;
    }
  }
  if (newer) {
    next.lastEventAt = p.occurredAt;
    next.lastEventId = p.eventId;
    changed = true;
  }
  return { record: next, changed };
}
