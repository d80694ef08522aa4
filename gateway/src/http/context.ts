import type { ParameterizedContext } from 'koa';
import type { CallContext } from '@wallet/platform';
import { adminActor, type AdminPrincipal } from '../auth/admin-principal.js';
import type { ApiKeyPrincipal } from '../auth/api-key-authenticator.js';
import type { SessionPrincipal } from '../auth/dashboard-auth.js';

/** Per-request state shared by the middlewares and handlers. */
export interface GatewayState {
  requestId: string;
  /** Route template (OpenAPI form) once matched: a low-cardinality label for logs and metrics. */
  routeTemplate?: string;
  principal?: ApiKeyPrincipal;
  /** Set on dashboard routes (session token). */
  session?: SessionPrincipal;
  /**
   * Set on /admin routes once authenticated: `{ kind: 'operator', operatorId, email, sessionId }`
   * or `{ kind: 'bootstrap-token' }` (the shared ADMIN_TOKEN).
   */
  admin?: AdminPrincipal;
  clientIp?: string;
  /** What the listener that took the request serves: admin routes, the others (set by the app; absent = both). */
  areas?: { admin: boolean; other: boolean };
}

export type GatewayContext = ParameterizedContext<GatewayState>;

/** The gRPC call context for this request: who is calling, for metadata and audit. */
export function callContext(ctx: GatewayContext): CallContext {
  const s = ctx.state;
  if (s.principal) {
    return { requestId: s.requestId, companyId: s.principal.companyId, apiKeyId: s.principal.keyId, actor: `apikey:${s.principal.keyId}` };
  }
  if (s.session) return { requestId: s.requestId, companyId: s.session.companyId, actor: `user:${s.session.userId}` };
  return { requestId: s.requestId, actor: s.admin ? adminActor(s.admin) : 'anonymous' };
}
