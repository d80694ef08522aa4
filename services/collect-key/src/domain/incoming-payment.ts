import { AppError } from '@wallet/platform';
import { TRANSACTION_ID } from './cobro-key.js';

/** The Bre-B network's notification of an inbound payment (docs/sandbox.md "Bre-B collect keys and inbound payments"). */
export interface IncomingPayment {
  eventId: string;
  providerTransferId: string;
  keyValue: string;
  /** The directory registration the network routed the payment to when it was paid; null when the notification names none. */
  anchorHandle: string | null;
  amountCents: bigint;
  payerName: string | null;
  payerDocument: string | null;
  payerBank: string | null;
  receivedAt: Date;
  /** The transaction id the payer's app read from a dynamic QR (tag 62/05), when it paid one; null otherwise. */
  transactionId: string | null;
}

const str = (v: unknown, max = 200): string | null => (typeof v === 'string' && v.length > 0 && v.length <= max ? v : null);

export function parseIncomingPayment(raw: Buffer): IncomingPayment {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new AppError('INVALID_REQUEST', 'El cuerpo de la notificación no es JSON válido.');
  }
  if (!body || typeof body !== 'object') throw new AppError('INVALID_REQUEST', 'La notificación no es un objeto.');
  const eventId = str(body.eventId);
  const providerTransferId = str(body.providerTransferId);
  const keyValue = str(body.keyValue, 64);
  const amt = body.amountCents;
  let amountCents: bigint | null = null;
  if (typeof amt === 'number' && Number.isSafeInteger(amt) && amt > 0) amountCents = BigInt(amt);
  else if (typeof amt === 'string' && /^[1-9]\d{0,17}$/.test(amt)) amountCents = BigInt(amt);
  if (!eventId || !providerTransferId || !keyValue || amountCents === null) {
    throw new AppError('INVALID_REQUEST', 'La notificación no tiene eventId, providerTransferId, keyValue o amountCents válidos.');
  }
  // Optional; when present it must be what a QR can carry (the payment is then matched by it): a malformed one is refused, never dropped.
  const tx = body.transactionId;
  if (tx !== undefined && tx !== null && (typeof tx !== 'string' || !TRANSACTION_ID.test(tx))) {
    throw new AppError('INVALID_REQUEST', 'El transactionId de la notificación debe tener de 1 a 35 caracteres ASCII imprimibles.');
  }
  const at = str(body.receivedAt) ?? str(body.occurredAt);
  const receivedAt = at && !Number.isNaN(Date.parse(at)) ? new Date(at) : new Date();
  return {
    eventId,
    providerTransferId,
    keyValue: keyValue.toLowerCase(),
    anchorHandle: str(body.anchorHandle, 100),
    amountCents,
    payerName: str(body.payerName, 200),
    payerDocument: str(body.payerDocument, 100),
    payerBank: str(body.payerBank, 100),
    receivedAt,
    transactionId: typeof tx === 'string' ? tx : null,
  };
}

/** The ledger idempotency key of an inbound payment: a redelivery or a retry after a crash posts once. */
export const paymentLedgerKey = (providerTransferId: string): string => `collectkey:payment:${providerTransferId}`;

/** The ledger key of the inflow that credited a payment: its credit, or the assignment of it once held (`:assign`). */
export const creditLedgerKey = (providerTransferId: string, viaAssignment: boolean): string =>
  viaAssignment ? `${paymentLedgerKey(providerTransferId)}:assign` : paymentLedgerKey(providerTransferId);
