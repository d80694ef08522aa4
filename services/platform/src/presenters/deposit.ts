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
    createdAt: iso(d.createdAt),
  };
}
