import type { Next } from 'koa';
import { AppError } from '@wallet/platform';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator.js';
import type { AdminAuthenticator } from '../auth/admin-token.js';
import type { SharedTokenPolicy } from '../auth/admin-principal.js';
import type { DashboardAuth } from '../auth/dashboard-auth.js';
import { looksLikeApiKey } from '../auth/api-key-format.js';
import type { Scope } from '../persistence/api-key.store.js';
import type { GatewayContext } from './context.js';

/** The credential of `Authorization: Bearer <token>`: undefined when absent, null when not a bearer credential. */
export function bearerToken(ctx: GatewayContext): string | undefined | null {
  const header = ctx.req.headers.authorization;
  if (header === undefined) return undefined;
  const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/** Path families reserved for the operator and dashboard sessions: client API keys are refused there. */
export const NON_API_KEY_AREAS = /^\/(admin|auth|dashboard)(\/|$)/;

/**
 * Before routing: a client API key presented on /admin, /auth or /dashboard (existing routes or
 * not) is answered 403 API_KEY_AUTH_NOT_ALLOWED, so the rule holds for routes added later.
 */
export async function apiKeyAreaGuard(ctx: GatewayContext, next: Next): Promise<void> {
  if (NON_API_KEY_AREAS.test(ctx.path)) {
    const token = bearerToken(ctx);
    if (token && looksLikeApiKey(token)) throw new AppError('API_KEY_AUTH_NOT_ALLOWED');
  }
  await next();
}

const SCOPE_RANK: Record<Scope, number> = { READ: 1, WRITE: 2 };

export function requireApiKey(authenticator: ApiKeyAuthenticator, scope: Scope) {
  return async function apiKeyAuth(ctx: GatewayContext, next: Next): Promise<void> {
    const token = bearerToken(ctx);
    if (token === undefined) throw new AppError('AUTH_REQUIRED');
    if (token === null) throw new AppError('INVALID_API_KEY');
    const principal = await authenticator.authenticate(token);
    ctx.state.principal = principal;
    // WRITE includes READ.
    if (SCOPE_RANK[principal.scope] < SCOPE_RANK[scope]) {
      throw new AppError('INSUFFICIENT_SCOPE', undefined, { required: scope, granted: principal.scope });
    }
    await next();
  };
}

/**
 * Admin routes: an operator session or the shared ADMIN_TOKEN (as the route's policy allows). The
 * principal is put on `ctx.state.admin` for the handler, the audit log and the gRPC actor.
 */
export function requireAdmin(auth: AdminAuthenticator, policy: SharedTokenPolicy) {
  return async function adminAuth(ctx: GatewayContext, next: Next): Promise<void> {
    const token = bearerToken(ctx);
    if (token === undefined) throw new AppError('AUTH_REQUIRED');
    if (token && looksLikeApiKey(token)) throw new AppError('API_KEY_AUTH_NOT_ALLOWED');
    if (!token) throw new AppError('INVALID_ADMIN_TOKEN');
    ctx.state.admin = await auth.authenticate(token, policy);
    await next();
  };
}

/** Dashboard routes: `Authorization: Bearer <session token>` from POST /auth/login (CONTRACT §5). */
export function requireSession(auth: DashboardAuth) {
  return async function sessionAuth(ctx: GatewayContext, next: Next): Promise<void> {
    const token = bearerToken(ctx);
    if (token === undefined) throw new AppError('AUTH_REQUIRED');
    if (token && looksLikeApiKey(token)) throw new AppError('API_KEY_AUTH_NOT_ALLOWED');
    if (!token) throw new AppError('SESSION_EXPIRED');
    ctx.state.session = await auth.authenticate(token);
    await next();
  };
}
