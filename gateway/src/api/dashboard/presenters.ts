import { cobroView } from '@wallet/platform';
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
export { unmatchedPaymentView as unmatchedPaymentToApi } from '@wallet/platform';
