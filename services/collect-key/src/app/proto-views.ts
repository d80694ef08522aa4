import type { collectKeyV1, depositV1 } from '@wallet/proto';
import type { CollectKeyRecord, QrRecord } from '../domain/collect-key.js';
import type { PaymentRecord } from './ports.js';

/**
 * A key, a QR and a Bre-B deposit as proto messages: the one shape the gRPC answers and the events
 * (events.ts) carry, so both are built here. It lives in app/ because the events are written by the
 * use cases with their change (outbox) and app/ may not import grpc/; the handlers import it from
 * here (grpc/ → app/ is the allowed direction).
 */

export function keyToProto(k: CollectKeyRecord): collectKeyV1.CollectKey {
  return {
    id: k.id,
    externalId: k.externalId,
    name: k.name,
    keyType: k.keyType,
    keyValue: k.keyValue,
    state: k.state,
    createdAt: k.createdAt,
    ...(k.deletedAt ? { deletedAt: k.deletedAt } : {}),
  };
}

export function qrToProto(q: QrRecord): collectKeyV1.Qr {
  return { id: q.id, type: q.type, reference: q.reference, isPaid: q.isPaid, createdAt: q.createdAt, payload: q.payload, keyId: q.keyId };
}

/** The deposit (§2.7, deposit.proto) an inbound payment became: source BREB, the key it was paid to, provider fields, the cobro's transaction id and cobro. */
export function paymentToDeposit(p: PaymentRecord): depositV1.Deposit {
  return {
    id: p.depositId,
    // A held payment returned to the payer is shown as the listing shows money that went back: REVERSED.
    status: p.status === 'RETURNED' ? 'REVERSED' : p.status,
    amountCents: p.amount,
    feeAmountCents: p.fee.subtotalFee,
    ivaAmountCents: p.fee.ivaAmount,
    netAmountCents: p.netAmount,
    currency: 'COP',
    source: 'BREB',
    brebKey: { id: p.key.id, externalId: p.key.externalId, name: p.key.name, value: p.key.value },
    ...(p.payerName ? { payerName: p.payerName } : {}),
    ...(p.payerDocument ? { payerDocument: p.payerDocument } : {}),
    ...(p.payerBank ? { payerBank: p.payerBank } : {}),
    providerTransferId: p.providerTransferId,
    providerConfirmedAt: p.receivedAt,
    createdAt: p.createdAt,
    // Cobros: the transaction id the payer's app read from a dynamic QR, and the cobro whose key it was paid to.
    ...(p.transactionId ? { transactionId: p.transactionId } : {}),
    ...(p.cobroId ? { cobroId: p.cobroId } : {}),
  };
}
