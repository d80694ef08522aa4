import { isJsonBody, toJsonText } from './json-text.js';
import { Router } from '@koa/router';
import type { Middleware, Next } from 'koa';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator.js';
import type { AdminTokenVerifier } from '../auth/admin-token.js';
import type { RollingWindowLimiter } from '../ratelimit/rolling-window-limiter.js';
import { requireAdmin, requireApiKey, requireSession } from './auth.js';
import type { DashboardAuth } from '../auth/dashboard-auth.js';
import type { ClientIpResolver } from './client-ip.js';
import { callContext, type GatewayContext, type GatewayState } from './context.js';
import type { IdempotencyGuard } from './idempotency.js';
import { parseIdempotencyKey } from './idempotency-key.js';
import { readJsonBodyWithRaw } from './json-body.js';
import { rateLimit, type RateLimitSettings } from './rate-limit.js';
import { toRouterPath, type AnyRoute } from './route.js';
import { parseOrThrow, parseParams } from './validation.js';

export interface RouterDeps {
  authenticator: ApiKeyAuthenticator;
  adminToken: AdminTokenVerifier;
  limiter: RollingWindowLimiter;
  clientIp: ClientIpResolver;
  rateLimits: RateLimitSettings;
  /** Required when a route authenticates with a dashboard session. */
  sessions?: DashboardAuth;
  /** Required when a route is `idempotent`. */
  idempotency?: IdempotencyGuard;
}

/**
 * Registers each declared route with its pipeline, in this order:
 * authenticate → scope → rate limit → parse/validate (params, query, body) → [Idempotency-Key] → handler.
 * (Authentication first, so the rate limit can apply the company's multiplier.)
 */
export function buildRouter(routes: readonly AnyRoute[], deps: RouterDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  for (const def of routes) {
    if (def.idempotent && (!deps.idempotency || def.auth.kind === 'public' || def.auth.kind === 'admin')) {
      throw new Error(`${def.operationId}: idempotent routes need an authenticated company and an IdempotencyGuard`);
    }
    const chain: Middleware<GatewayState>[] = [];
    chain.push(async (ctx: GatewayContext, next: Next) => {
      ctx.state.routeTemplate = def.path;
      await next();
    });
    if (def.auth.kind === 'apiKey') chain.push(requireApiKey(deps.authenticator, def.auth.scope));
    else if (def.auth.kind === 'admin') chain.push(requireAdmin(deps.adminToken));
    else if (def.auth.kind === 'session') {
      if (!deps.sessions) throw new Error(`${def.operationId}: session routes need DashboardAuth`);
      chain.push(requireSession(deps.sessions));
    }
    if (def.rateClass) chain.push(rateLimit(def.rateClass, deps.limiter, deps.clientIp, deps.rateLimits));
    chain.push(async (ctx: GatewayContext) => {
      const idempotencyKey = def.idempotent ? parseIdempotencyKey(ctx.req.headers['idempotency-key']) : undefined;
      const params = def.params ? parseParams(def.params, ctx.params, def.paramErrors) : undefined;
      const query = def.query ? parseOrThrow(def.query, ctx.query, 'query') : undefined;
      const read = def.body ? await readJsonBodyWithRaw(ctx.req) : undefined;
      const body = def.body ? parseOrThrow(def.body, read!.value) : undefined;
      const rawBody = def.rawBody ? read?.raw : undefined;
      const handle = () => def.handler({ params, query, body, ctx, call: callContext(ctx), principal: ctx.state.principal, session: ctx.state.session, rawBody });
      const result = idempotencyKey === undefined
        ? await handle()
        : await deps.idempotency!.run(ctx, idempotencyKey, { method: def.method, routeTemplate: def.path, params: ctx.params, body: read?.value }, handle);
      ctx.status = result.status;
      if (result.headers) for (const [k, v] of Object.entries(result.headers)) ctx.set(k, v);
      if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', 'no-store');
      if (isJsonBody(result.body)) {
        ctx.body = toJsonText(result.body);
        ctx.type = 'application/json; charset=utf-8';
      } else {
        ctx.body = result.body;
      }
    });
    router.register(toRouterPath(def.path), [def.method], chain as never, { name: def.operationId });
  }
  return router;
}

