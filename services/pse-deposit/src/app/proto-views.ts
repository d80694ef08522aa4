import type { depositV1 } from '@wallet/proto';
import { payerDocument, payerFullName, publicStatus, type DepositRecord } from '../domain/deposit.js';

// The one proto shape of a deposit, which the gRPC answers and the events (events.ts) carry. It lives
// in app/ because the events are written by the use cases with their change (outbox) and app/ may not
// import grpc/; the handlers import it from here (grpc/ → app/ is the allowed direction).

/**
 * A deposit with every field of §2.7 plus the CONTRACT §2 superset, its status as clients see it at
 * `now` (publicStatus: EXPIRED from expiresAt; the money states never shown). providerTransferId /
 * providerConfirmedAt are absent until the payment is credited (or failed).
 */
export function depositToProto(d: DepositRecord, now: Date): depositV1.Deposit {
  const confirmed = d.status !== 'PENDING_CONFIRM' && d.status !== 'CREDITING';
  const doc = payerDocument(d.payerDocumentType, d.payerDocumentNumber);
  const name = d.payerName ?? payerFullName(d.payerFirstName, d.payerLastName);
  return {
    id: d.id,
    status: publicStatus(d.status, d.expiresAt, now),
    amountCents: d.amount,
    feeAmountCents: d.fee.subtotalFee,
    ivaAmountCents: d.fee.ivaAmount,
    netAmountCents: d.netAmount,
    currency: d.currency,
    source: d.source,
    ...(d.brebKey ? { brebKey: { ...d.brebKey } } : {}),
    ...(name ? { payerName: name } : {}),
    ...(doc ? { payerDocument: doc } : {}),
    ...(d.payerBank ? { payerBank: d.payerBank } : {}),
    ...(d.payerEmail ? { payerEmail: d.payerEmail } : {}),
    ...(d.payerFirstName ? { payerFirstName: d.payerFirstName } : {}),
    ...(d.payerLastName ? { payerLastName: d.payerLastName } : {}),
    ...(d.providerTransferId && d.providerConfirmedAt && confirmed ? { providerTransferId: d.providerTransferId } : {}),
    ...(d.providerConfirmedAt && confirmed ? { providerConfirmedAt: d.providerConfirmedAt } : {}),
    createdAt: d.createdAt,
    ...(d.internalRef ? { internalRef: d.internalRef } : {}),
    ...(d.paygatewayUrl ? { paygatewayUrl: d.paygatewayUrl } : {}),
    ...(d.expiresAt ? { expiresAt: d.expiresAt } : {}),
    ...((d.cobroId ?? d.matchedCobroId) ? { cobroId: (d.cobroId ?? d.matchedCobroId)! } : {}),
  };
}
