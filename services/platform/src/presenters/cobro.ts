import { centsToNumber } from '../money/money.js';
import { formatInstant } from '../time/instant.js';
import type { cobroV1 } from '@wallet/proto';

const iso = (d: Date | undefined) => (d ? formatInstant(d) : null);
const cents = (v: bigint | undefined) => (v === undefined ? null : centsToNumber(v));

/** A cobro as the API shows it (the gateway's CobroSchema) and its webhooks carry it (`cobro.*` data). */
export function cobroView(c: cobroV1.Cobro) {
  return {
    id: c.id,
    reference: c.reference,
    status: c.status,
    amountType: c.amountType,
    amountCents: cents(c.amountCents),
    minAmountCents: cents(c.minAmountCents),
    maxAmountCents: cents(c.maxAmountCents),
    paidAmountCents: centsToNumber(c.paidAmountCents),
    returnedAmountCents: centsToNumber(c.returnedAmountCents),
    toleranceBelowCents: centsToNumber(c.toleranceBelowCents),
    toleranceAboveCents: centsToNumber(c.toleranceAboveCents),
    currency: 'COP' as const,
    description: c.description ?? null,
    expectedPayer: c.expectedPayer ? { document: c.expectedPayer.document ?? null, name: c.expectedPayer.name ?? null } : null,
    metadata: c.metadata ?? {},
    overpaymentPolicy: c.overpaymentPolicy,
    methods: c.methods,
    transactionId: c.transactionId,
    pse: c.pse ? { depositId: c.pse.depositId, paygatewayUrl: c.pse.paygatewayUrl } : null,
    breb: c.breb ? { keyValue: c.breb.keyValue, qrPayload: c.breb.qrPayload, qrPngUrl: `/cobros/${c.id}/qr.png` } : null,
    payments: c.payments.map((p) => ({
      depositId: p.depositId,
      source: p.source,
      amountCents: centsToNumber(p.amountCents),
      netAmountCents: centsToNumber(p.netAmountCents),
      matchedBy: p.matchedBy,
      disposition: p.disposition,
      payerName: p.payerName ?? null,
      payerDocument: p.payerDocument ?? null,
      receivedAt: iso(p.receivedAt)!,
      matchedAt: iso(p.matchedAt)!,
      autoReturn: p.autoReturn
        ? {
            returnId: p.autoReturn.returnId,
            amountCents: centsToNumber(p.autoReturn.amountCents),
            status: p.autoReturn.status,
            error: p.autoReturn.error ?? null,
          }
        : null,
      returnedCents: centsToNumber(p.returnedCents),
      reversedCents: centsToNumber(p.reversedCents),
    })),
    expiresAt: iso(c.expiresAt)!,
    createdAt: iso(c.createdAt)!,
    updatedAt: iso(c.updatedAt)!,
    paidAt: iso(c.paidAt),
    closedAt: iso(c.closedAt),
  };
}

/** A payment that matched no cobro, as GET /cobros/unmatched-payments (and the dashboard's) lists it. */
export function unmatchedPaymentView(u: cobroV1.UnmatchedPayment) {
  return {
    depositId: u.depositId,
    cobroId: u.cobroId ?? null,
    reason: u.reason,
    source: u.source,
    amountCents: centsToNumber(u.amountCents),
    payerName: u.payerName ?? null,
    payerDocument: u.payerDocument ?? null,
    receivedAt: formatInstant(u.receivedAt ?? new Date(0)),
    listedAt: formatInstant(u.listedAt ?? new Date(0)),
  };
}
