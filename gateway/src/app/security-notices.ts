// TEMPORARY stand-in until the security notices branch merges (replaced by it).
import type { AdminPrincipal } from '../auth/admin-principal.js';
import type { Queryable } from '../persistence/sql.js';
export type SecurityChange = 'MULTISIG_THRESHOLD_CHANGE_REQUESTED' | 'MULTISIG_THRESHOLD_CHANGED' | 'API_KEY_REQUESTED' | 'API_KEY_ISSUED' | 'API_KEY_REVOKED' | 'USER_REQUESTED' | 'USER_ADDED' | 'USER_DISABLED' | 'LIMITS_CHANGED' | 'FEES_CHANGE_REQUESTED' | 'FEES_CHANGED' | 'STATUS_CHANGED' | 'REQUEST_REJECTED';
export type SecurityActorKind = 'operator' | 'bootstrap-token' | 'dashboard-user' | 'api-key';
export interface SecurityNotice { companyId: string; change: SecurityChange; summary: string; actor: { kind: SecurityActorKind; id: string | null }; approvalRequestId?: string | null; effectiveAt?: string | null; details?: Record<string, unknown> }
export function adminSecurityActor(p: AdminPrincipal | undefined): SecurityNotice['actor'] {
  return p?.kind === 'operator' ? { kind: 'operator', id: p.operatorId } : { kind: 'bootstrap-token', id: null };
}
export class SecurityNotices {
  async record(_tx: Queryable, _n: SecurityNotice): Promise<void> {}
}
