import type { ParameterizedContext } from 'koa';
import type { CallContext, CompanyProfileClaims } from '@wallet/platform';
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
  /** The API version the request named (`Wallet-Version`); absent: the key's pinned version, else the newest (http/api-versions.ts). */
  apiVersion?: string;
  /** What the listener that took the request serves: admin routes, the others (set by the app; absent = both). */
  areas?: { admin: boolean; other: boolean };
}

export type GatewayContext = ParameterizedContext<GatewayState>;

/**
 * The gRPC call context for this request: who is calling, for metadata and audit, and the principal
 * that the gRPC client signs into the caller context (the services take the company, the role and
 * the company profile only from that signature). No principal: the services refuse the call.
 */
export function callContext(ctx: GatewayContext): CallContext {
  const s = ctx.state;
  if (s.principal) {
    const p = s.principal;
    return {
      requestId: s.requestId,
      companyId: p.companyId,
      apiKeyId: p.keyId,
      actor: `apikey:${p.keyId}`,
      principal: { kind: 'apikey', companyId: p.companyId, keyId: p.keyId, scope: p.scope, profile: profileOf(p) },
    };
  }
  if (s.session) {
    const u = s.session;
    return {
      requestId: s.requestId,
      companyId: u.companyId,
      actor: `user:${u.userId}`,
      // The company's profile too, as for an API key: the services apply the company's rules to a
      // dashboard user's calls as well (the approval policy's change quorum is its multi-signature threshold).
      principal: { kind: 'user', companyId: u.companyId, userId: u.userId, email: u.email, role: u.role, profile: u.profile },
    };
  }
  if (s.admin) {
    // An operator by id, or the shared token (development and bootstrap): the services see which.
    const operator = s.admin.kind === 'operator' ? `operator:${s.admin.operatorId}` : 'bootstrap-token';
    return { requestId: s.requestId, actor: adminActor(s.admin), principal: { kind: 'admin', operator } };
  }
  // Unauthenticated routes (provider callbacks, verified by their own signatures in the services;
  // the public receipt verification, whose number and hash are its only key):
  // a principal of their own, which no company or operator method admits.
  return { requestId: s.requestId, actor: 'anonymous', principal: { kind: 'callback' } };
}

function profileOf(p: ApiKeyPrincipal): CompanyProfileClaims {
  return {
    nit: p.nit,
    name: p.companyName,
    ivaApplicable: p.taxRegime === 'COMMON',
    multiSigThreshold: p.multiSigThreshold,
    counterpartyDailyLimitCents: p.counterpartyDailyLimitCents,
    counterpartyMonthlyLimitCents: p.counterpartyMonthlyLimitCents,
  };
}
