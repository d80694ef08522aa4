import type { depositV1 } from '@wallet/proto';
import { payerDocument, payerFullName, type DepositRecord } from '../domain/deposit.js';

/** A deposit with every field of §2.7 plus the CONTRACT §2 superset. providerTransferId is absent until confirmed. */
export function depositToProto(d: DepositRecord): depositV1.Deposit {
  const doc = payerDocument(d.payerDocumentType, d.payerDocumentNumber);
  const name = d.payerName ?? payerFullName(d.payerFirstName, d.payerLastName);
  return {
    id: d.id,
    status: d.status,
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
    ...(d.providerTransferId && d.providerConfirmedAt && d.status !== 'PENDING_CONFIRM' ? { providerTransferId: d.providerTransferId } : {}),
    ...(d.providerConfirmedAt && d.status !== 'PENDING_CONFIRM' ? { providerConfirmedAt: d.providerConfirmedAt } : {}),
    createdAt: d.createdAt,
    ...(d.internalRef ? { internalRef: d.internalRef } : {}),
    ...(d.paygatewayUrl ? { paygatewayUrl: d.paygatewayUrl } : {}),
    ...(d.expiresAt ? { expiresAt: d.expiresAt } : {}),
  };
}
