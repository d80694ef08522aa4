import type { depositV1 } from '@wallet/proto';
import { formatInstant } from '../time/instant.js';

const iso = (d: Date | undefined) => (d ? formatInstant(d) : null);

/**
 * A deposit as the API shows it (§2.7 with the CONTRACT §2 superset; amounts as decimal strings):
 * the ONE builder of a `GET /deposits` item (gateway) and of the `deposit.*` and
 * `collect_key.payment_received` webhooks' data (webhook service; docs/webhooks.md), so the two
 * can never differ.
 */
export function depositView(d: depositV1.Deposit) {
  return {
    id: d.id,
    status: d.status,
    amountCents: d.amountCents.toString(),
    feeAmountCents: d.feeAmountCents.toString(),
    ivaAmountCents: d.ivaAmountCents.toString(),
    netAmountCents: d.netAmountCents.toString(),
    netCreditedCents: d.netAmountCents.toString(),
    currency: d.currency || 'COP',
    source: d.source,
    brebKey: d.brebKey ? { id: d.brebKey.id, externalId: d.brebKey.externalId, name: d.brebKey.name, value: d.brebKey.value } : null,
    payerName: d.payerName ?? null,
    payerFirstName: d.payerFirstName ?? null,
    payerLastName: d.payerLastName ?? null,
    payerDocument: d.payerDocument ?? null,
    payerBank: d.payerBank ?? null,
    payerEmail: d.payerEmail ?? null,
    providerTransferId: d.providerTransferId ?? null,
    providerConfirmedAt: iso(d.providerConfirmedAt),
    paidAt: iso(d.providerConfirmedAt),
    internalRef: d.internalRef ?? null,
    cobroId: d.cobroId ?? null,
    createdAt: iso(d.createdAt),
  };
}

/**
 * A return (devolución) of a deposit as the API shows it (`POST/GET /deposits/{id}/returns`) and the
 * `deposit.returned` / `deposit.return_failed` webhooks carry it (docs/returns.md); amounts as decimal
 * strings, like the deposit's.
 */
export function depositReturnView(r: depositV1.DepositReturn) {
  return {
    id: r.id,
    depositId: r.depositId,
    rail: r.rail,
    amountCents: r.amountCents.toString(),
    currency: 'COP' as const,
    reason: r.reason,
    description: r.description ?? null,
    status: r.status,
    failureCode: r.failureCode ?? null,
    failureMessage: r.failureMessage ?? null,
    transactionId: r.transactionId,
    depositAmountCents: r.depositAmountCents.toString(),
    returnedAmountCents: r.returnedAmountCents.toString(),
    createdAt: iso(r.createdAt),
    returnedAt: iso(r.returnedAt),
  };
}
