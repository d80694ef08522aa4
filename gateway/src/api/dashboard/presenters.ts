import type { DashboardUser } from '../../auth/dashboard-auth.js';

export const userToApi = (u: DashboardUser) => ({
  id: u.id,
  email: u.email,
  role: u.role,
  createdAt: u.createdAt,
  activatedAt: u.activatedAt,
  disabledAt: u.disabledAt,
});
