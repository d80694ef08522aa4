/**
 * Who is behind an /admin request, set by the admin authentication on `ctx.state.admin` (and
 * handed to handlers as `admin`): a named operator (a session from POST /admin/auth/login), or the
 * shared ADMIN_TOKEN — accepted in production only to create the first operators (bootstrap).
 * Meant to travel on: the audit log records it, gRPC calls carry it as the actor.
 */
export type AdminPrincipal = { kind: 'operator'; operatorId: string; email: string; sessionId: string } | { kind: 'bootstrap-token' };

/**
 * Where a route accepts the shared ADMIN_TOKEN:
 * - `development` (the default): outside production only; production answers 403 ADMIN_TOKEN_NOT_ALLOWED.
 * - `bootstrap`: in production too, while fewer than BOOTSTRAP_OPERATORS operators are active
 *   (POST /admin/operators only; the use case enforces the count).
 * - `never`: the action needs a named operator in every environment (approvals, logout).
 */
export type SharedTokenPolicy = 'development' | 'bootstrap' | 'never';

/** How many active operators the bootstrap token may bring about in production: two, the least maker-checker needs. */
export const BOOTSTRAP_OPERATORS = 2;

/** The gRPC / log actor of a principal: `operator:<id>`, or `admin` for the shared token (as before operators existed). */
export function adminActor(p: AdminPrincipal): string {
  return p.kind === 'operator' ? `operator:${p.operatorId}` : 'admin';
}
