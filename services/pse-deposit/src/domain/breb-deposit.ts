import { depositEventsV1 } from '@wallet/proto';
import { isDepositId, type BrebKeyRef, type DepositStatus } from './deposit.js';

/**
 * Bre-B collect-key deposits as this service lists them (CONTRACT §2, §6): the collect-key service
 * publishes `deposit.paid` (ASSIGNED) / `deposit.unassigned` (UNASSIGNED) DepositEvents with source
 * BREB on the DEPOSITS stream; this service copies them into its listing table. They are final when
 * published (never PENDING_CONFIRM); REVERSED is accepted too should the collect-key service ever
 * publish it.
 */
export const BREB_STATUSES = ['UNASSIGNED', 'ASSIGNED', 'REVERSED'] as const satisfies readonly DepositStatus[];
export type BrebStatus = (typeof BREB_STATUSES)[number];

/** Tie-break when two events for one deposit carry the same occurredAt: the higher rank wins. */
export const BREB_STATUS_RANK: Readonly<Record<BrebStatus, number>> = { UNASSIGNED: 1, ASSIGNED: 2, REVERSED: 3 };

export interface BrebDeposit {
  id: string;
  companyId: string;
  status: BrebStatus;
  amount: bigint;
  fee: bigint;
  iva: bigint;
  net: bigint;
  currency: string;
  brebKey: BrebKeyRef | null;
  payerName: string | null;
  payerDocument: string | null;
  payerBank: string | null;
  providerTransferId: string | null;
  providerConfirmedAt: Date | null;
  createdAt: Date;
  /** The transaction id of the dynamic QR the payer paid (when it paid one): the matcher's first clue. */
  transactionId: string | null;
  /** The cobro whose dynamic key was paid, per collect-key (the matcher checks it is the company's). */
  cobroId: string | null;
  /** The event's occurredAt: orders events of one deposit (arrival order is not guaranteed). */
  eventAt: Date;
}

export type BrebDecision =
  | { kind: 'upsert'; deposit: BrebDeposit }
  /** Not ours to list (a PSE event, this service's own) or unusable; acknowledged and dropped. */
  | { kind: 'ignore'; reason: string; level: 'debug' | 'warn' | 'error' };

const text = (v: string | undefined, max: number): string | null => {
  if (v === undefined) return null;
  const t = v.trim();
  return t === '' ? null : t.slice(0, max);
};
const validDate = (d: Date | undefined): d is Date => d instanceof Date && !Number.isNaN(d.getTime());

/** Reads one received `deposit.*` event (proto3 JSON payload). Pure; never throws. */
export function readBrebDepositEvent(payload: unknown, now: Date): BrebDecision {
  let evt: depositEventsV1.DepositEvent;
  try {
    evt = depositEventsV1.DepositEvent.fromJSON(payload ?? {});
  } catch (err) {
    return { kind: 'ignore', reason: `unreadable payload: ${(err as Error).message}`, level: 'error' };
  }
  const d = evt.deposit;
  if (!d) return { kind: 'ignore', reason: 'no deposit in the event', level: 'error' };
  if (d.source !== 'BREB') return { kind: 'ignore', reason: `source ${d.source || '(none)'} is not BREB`, level: 'debug' };
  if (!isDepositId(d.id)) return { kind: 'ignore', reason: `invalid deposit id ${JSON.stringify(d.id)}`, level: 'error' };
  const companyId = evt.companyId.trim();
  if (!companyId || companyId.length > 100) return { kind: 'ignore', reason: 'missing or invalid companyId', level: 'error' };
  if (!(BREB_STATUSES as readonly string[]).includes(d.status)) {
    return { kind: 'ignore', reason: `status ${d.status || '(none)'} is not a final Bre-B status`, level: 'warn' };
  }
  const amount = d.amountCents,
    fee = d.feeAmountCents,
    iva = d.ivaAmountCents,
    net = d.netAmountCents;
  if (amount <= 0n || fee < 0n || iva < 0n || net !== amount - fee - iva) {
    return { kind: 'ignore', reason: `inconsistent amounts gross ${amount} fee ${fee} iva ${iva} net ${net}`, level: 'error' };
  }
  const k = d.brebKey;
  const brebKey = k && k.id ? { id: k.id.slice(0, 64), externalId: k.externalId.slice(0, 64), name: k.name.slice(0, 200), value: k.value.slice(0, 200) } : null;
  const eventAt = validDate(evt.occurredAt) ? evt.occurredAt : validDate(d.createdAt) ? d.createdAt : now;
  return {
    kind: 'upsert',
    deposit: {
      id: d.id,
      companyId,
      status: d.status as BrebStatus,
      amount,
      fee,
      iva,
      net,
      currency: text(d.currency, 3) ?? 'COP',
      brebKey,
      payerName: text(d.payerName, 200),
      payerDocument: text(d.payerDocument, 40),
      payerBank: text(d.payerBank, 100),
      providerTransferId: text(d.providerTransferId, 100),
      providerConfirmedAt: validDate(d.providerConfirmedAt) ? d.providerConfirmedAt : null,
      createdAt: validDate(d.createdAt) ? d.createdAt : eventAt,
      transactionId: text(d.transactionId, 35),
      cobroId: text(d.cobroId, 64),
      eventAt,
    },
  };
}

/** A PSE payment this service credited (`deposit.paid`, source PSE), as the cobro matcher reads it from its own event. */
export interface PsePaid {
  id: string;
  companyId: string;
  amount: bigint;
  net: bigint;
  payerName: string | null;
  payerDocument: string | null;
  paidAt: Date;
  /** The cobro its link was made for. */
  cobroId: string | null;
  /** The company's reference on the link (`internalRef`): matched to the cobro of that reference. */
  reference: string | null;
}

/** The `deposit.*` event of this subject, decoded; null for another subject or a payload that does not decode. */
function depositEventOf(subject: string, expected: string, payload: unknown): depositEventsV1.DepositEvent | null {
  if (subject !== expected) return null;
  try {
    return depositEventsV1.DepositEvent.fromJSON(payload ?? {});
  } catch {
    return null;
  }
}

/** A `deposit.paid` of a PSE deposit, or null for anything else. Pure; never throws. */
export function readPsePaidEvent(subject: string, payload: unknown, now: Date): PsePaid | null {
  const evt = depositEventOf(subject, 'deposit.paid', payload);
  const d = evt?.deposit;
  if (!evt || !d || d.source !== 'PSE' || !isDepositId(d.id) || !evt.companyId || d.amountCents <= 0n) return null;
  return {
    id: d.id,
    companyId: evt.companyId,
    amount: d.amountCents,
    net: d.netAmountCents,
    payerName: text(d.payerName, 200),
    payerDocument: text(d.payerDocument, 40),
    paidAt: validDate(d.providerConfirmedAt) ? d.providerConfirmedAt : validDate(evt.occurredAt) ? evt.occurredAt : now,
    cobroId: text(d.cobroId, 64),
    reference: text(d.internalRef, 100),
  };
}

/** A payment's return that reached the payer (`deposit.returned`, RETURNED), or null for anything else. Pure; never throws. */
export function readReturnedEvent(payload: unknown): { returnId: string; depositId: string; companyId: string; amount: bigint } | null {
  let e: depositEventsV1.DepositReturnEvent;
  try {
    e = depositEventsV1.DepositReturnEvent.fromJSON(payload ?? {});
  } catch {
    return null;
  }
  const r = e.depositReturn;
  if (!r || r.status !== 'RETURNED' || !e.companyId || !r.id || !r.depositId || r.amountCents <= 0n) return null;
  return { returnId: r.id, depositId: r.depositId, companyId: e.companyId, amount: r.amountCents };
}

/**
 * A credited payment its provider reversed (`deposit.reversed` with the deposit REVERSED: a PSE payment
 * debited back by this service; a Bre-B one should collect-key ever publish one), or null for anything else.
 * Pure; never throws.
 */
export function readReversedEvent(
  subject: string,
  payload: unknown,
  now: Date,
): { depositId: string; companyId: string; amount: bigint; reversedAt: Date } | null {
  const evt = depositEventOf(subject, 'deposit.reversed', payload);
  const d = evt?.deposit;
  const companyId = evt?.companyId?.trim();
  if (!d || d.status !== 'REVERSED' || !isDepositId(d.id) || !companyId || d.amountCents <= 0n) return null;
  return { depositId: d.id, companyId, amount: d.amountCents, reversedAt: evt && validDate(evt.occurredAt) ? evt.occurredAt : now };
}
