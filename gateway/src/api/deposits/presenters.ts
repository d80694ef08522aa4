import { centsToNumber, depositView, formatInstant } from '@wallet/platform';
import type { depositV1 } from '@wallet/proto';

/** Deposit proto ↔ HTTP edge mappings (§2.6.1, §2.7 + the CONTRACT §2 superset). */

const iso = (d: Date | undefined) => (d ? formatInstant(d) : null);

/** §2.6.1: the creation response (amountCents as a number). */
export function createdDepositToApi(d: depositV1.Deposit) {
  return {
    id: d.id,
    status: d.status,
    amountCents: centsToNumber(d.amountCents),
    currency: d.currency || 'COP',
    paygatewayUrl: d.paygatewayUrl ?? null,
    expiresAt: iso(d.expiresAt),
    internalRef: d.internalRef ?? null,
    createdAt: iso(d.createdAt),
  };
}

/** §2.7 listing item with the CONTRACT §2 superset; amounts as strings (the webhooks' data too). */
export function depositToApi(d: depositV1.Deposit) {
  return depositView(d);
}
