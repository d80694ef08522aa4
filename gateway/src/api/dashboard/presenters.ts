import { centsToNumber, cobroView, formatInstant } from '@wallet/platform';
import type { cobroV1 } from '@wallet/proto';
import type { DashboardUser } from '../../auth/dashboard-auth.js';

export const userToApi = (u: DashboardUser) => ({
  id: u.id,
  email: u.email,
  role: u.role,
  createdAt: u.createdAt,
  activatedAt: u.activatedAt,
  disabledAt: u.disabledAt,
});

/** A cobro as GET /cobros/{id} shows it, with the QR at the dashboard's route (a session cannot read /cobros). */
export function dashboardCobroToApi(c: cobroV1.Cobro) {
  const v = cobroView(c);
  return v.breb ? { ...v, breb: { ...v.breb, qrPngUrl: `/dashboard/cobros/${v.id}/qr.png` } } : v;
}

/** A payment that matched no cobro (UnmatchedPaymentSchema). */
export const unmatchedPaymentToApi = (u: cobroV1.UnmatchedPayment) => ({
  depositId: u.depositId,
  cobroId: u.cobroId ?? null,
  reason: u.reason,
  source: u.source,
  amountCents: centsToNumber(u.amountCents),
  payerName: u.payerName ?? null,
  payerDocument: u.payerDocument ?? null,
  receivedAt: formatInstant(u.receivedAt ?? new Date(0)),
  listedAt: formatInstant(u.listedAt ?? new Date(0)),
});
