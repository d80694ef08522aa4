import { isJsonBody, toJsonText } from './json-text.js';
import { deprecationHeaders } from './api-versions.js';
import { Router } from '@koa/router';
import type { Middleware, Next } from 'koa';
import { AppError, type Logger } from '@wallet/platform';
import type { AdminAudit } from '../audit/admin-audit.js';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator.js';
import type { AdminAuthenticator } from '../auth/admin-token.js';
import type { RollingWindowLimiter } from '../ratelimit/rolling-window-limiter.js';
import { requireAdmin, requireApiKey, requireSession } from './auth.js';
import type { DashboardAuth } from '../auth/dashboard-auth.js';
import type { ClientIpResolver } from './client-ip.js';
import { callContext, type GatewayContext, type GatewayState } from './context.js';
import type { IdempotencyGuard } from './idempotency.js';
import { parseIdempotencyKey } from './idempotency-key.js';
import { createHash } from 'node:crypto';
import { readBody, type RequestBody } from './json-body.js';
import { rateLimit, type RateLimitSettings } from './rate-limit.js';
import { auditOf, rateClassOf, sharedTokenPolicyOf, toRouterPath, type AnyRoute } from './route.js';
import { parseOrThrow, parseParams, withQueryPaths } from './validation.js';

export interface RouterDeps {
  authenticator: ApiKeyAuthenticator;
  /** Required when a route authenticates as admin. */
  admin?: AdminAuthenticator;
  /** The admin audit log, required when a route is audited (every mutating admin route, and routes declaring `audit`). */
  audit?: AdminAudit;
  /** For audit rows that could not be written after the action took effect. */
  log?: Logger;
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
 * authenticate → scope → rate limit → parse/validate (params, query, body) → [Idempotency-Key] → [audit] → handler.
 * (Authentication first, so the rate limit can apply the company's multiplier.) Admin routes are
 * counted per client IP before authentication (failed attempts count too) and per operator after it.
 */
export function buildRouter(routes: readonly AnyRoute[], deps: RouterDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  for (const def of routes) {
    if (def.idempotent && (!deps.idempotency || def.auth.kind === 'public' || def.auth.kind === 'admin')) {
      throw new Error(`${def.operationId}: idempotent routes need an authenticated company and an IdempotencyGuard`);
    }
    const chain: Middleware<GatewayState>[] = [];
    const adminRoute = def.path.startsWith('/admin/') || def.path === '/admin';
    const deprecation = def.deprecated ? deprecationHeaders(def.deprecated) : undefined;
    chain.push(async (ctx: GatewayContext, next: Next) => {
      // A listener that does not serve this route answers as if it did not exist (production: /admin only on the admin port).
      const areas = ctx.state.areas;
      if (areas && !(adminRoute ? areas.admin : areas.other)) throw new AppError('ROUTE_NOT_FOUND');
      ctx.state.routeTemplate = def.path;
      // On every answer of a route being retired, refusals included.
      if (deprecation) ctx.set(deprecation);
      await next();
    });
    const rateClass = rateClassOf(def);
    const audited = auditOf(def);
    if (def.auth.kind === 'admin' && !deps.admin) throw new Error(`${def.operationId}: admin routes need an AdminAuthenticator`);
    if (audited && !deps.audit) throw new Error(`${def.operationId}: audited routes need the AdminAudit`);
    if (def.auth.kind === 'apiKey') chain.push(requireApiKey(deps.authenticator, def.auth.scope));
    else if (def.auth.kind === 'admin') {
      chain.push(rateLimit(rateClass!, deps.limiter, deps.clientIp, deps.rateLimits));
      chain.push(requireAdmin(deps.admin!, sharedTokenPolicyOf(def)));
    } else if (def.auth.kind === 'session') {
      if (!deps.sessions) throw new Error(`${def.operationId}: session routes need DashboardAuth`);
      chain.push(requireSession(deps.sessions));
    }
    if (def.auth.kind === 'admin') {
      // Per operator as well, whatever address they come from (the shared token: its IP count only).
      const byOperator = (ctx: GatewayContext) => (ctx.state.admin?.kind === 'operator' ? `operator:${ctx.state.admin.operatorId}` : undefined);
      chain.push(rateLimit(rateClass!, deps.limiter, deps.clientIp, deps.rateLimits, byOperator));
    } else if (rateClass) chain.push(rateLimit(rateClass, deps.limiter, deps.clientIp, deps.rateLimits));
    const handler: typeof def.handler = (args) =>
      def.handler(args).catch((err: unknown) => {
        throw withQueryPaths(err, def.query, def.body !== undefined);
      });
    chain.push(async (ctx: GatewayContext) => {
      const idempotencyKey = def.idempotent ? parseIdempotencyKey(ctx.req.headers['idempotency-key']) : undefined;
      const params = def.params ? parseParams(def.params, ctx.params, def.paramErrors) : undefined;
      const query = def.query ? parseOrThrow(def.query, ctx.query, 'query') : undefined;
      const read =
        def.body || def.csv?.only
          ? await readBody(ctx.req, { limit: def.bodyLimitBytes, csv: def.csv === undefined ? false : def.csv.only ? 'only' : true })
          : undefined;
      const body = read?.type === 'json' ? parseOrThrow(def.body!, read.value) : undefined;
      const rawBody = def.rawBody || read?.type === 'csv' ? read?.raw : undefined;
      const trail = audited
        ? deps.audit!.begin({
            action: def.operationId,
            method: def.method,
            route: def.path,
            requestId: ctx.state.requestId,
            clientIp: ctx.state.clientIp,
            principal: ctx.state.admin ?? { kind: 'anonymous' },
            request: { params: ctx.params, query, body },
            targets: auditTargets(def.path, params),
          })
        : undefined;
      const run = () =>
        handler({
          params,
          query,
          body,
          ctx,
          call: callContext(ctx),
          principal: ctx.state.principal,
          session: ctx.state.session,
          admin: ctx.state.admin,
          audit: trail,
          bodyType: read?.type,
          rawBody,
          idempotencyKey,
        });
      const handle = !trail
        ? run
        : async () => {
            if (audited!.change === 'service') await trail.requested();
            let result;
            try {
              result = await run();
            } catch (err) {
              if (!trail.final)
                await trail
                  .failed(err)
                  .catch((e: unknown) => deps.log?.error({ err: e, requestId: ctx.state.requestId }, 'audit row of a failed admin action not written'));
              throw err;
            }
            // The action took effect: a failure to write its row must not turn it into an error answer
            // (a retry would act again); it is logged, and a REQUESTED row (service changes) remains.
            if (!trail.final)
              await trail
                .succeeded(result.body)
                .catch((e: unknown) => deps.log?.error({ err: e, requestId: ctx.state.requestId }, 'audit row of an admin action not written'));
            return result;
          };
      const result =
        idempotencyKey === undefined
          ? await handle()
          : await deps.idempotency!.run(
              ctx,
              idempotencyKey,
              { method: def.method, routeTemplate: def.path, params: ctx.params, body: idempotentBodyOf(read, ctx.query) },
              handle,
              { bound: def.idempotent === 'bound' },
            );
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

/**
 * The path parameters of an audited request, named for what they identify: `{id}` takes the name
 * of the collection before it (`/admin/companies/{id}` → companyId, `/admin/credit-requests/{id}` →
 * creditRequestId); the others keep theirs (keyId, userId, rail…).
 */
export function auditTargets(path: string, params: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const segments = path.split('/');
  for (const [name, value] of Object.entries((params ?? {}) as Record<string, unknown>)) {
    if (typeof value !== 'string') continue;
    let key = name;
    if (name === 'id') {
      const seg = segments[segments.indexOf('{id}') - 1] ?? 'resource';
      const singular = seg.endsWith('ies') ? `${seg.slice(0, -3)}y` : seg.endsWith('s') ? seg.slice(0, -1) : seg;
      key = `${singular.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())}Id`;
    }
    out[key] = value;
  }
  return out;
}

/** What an Idempotency-Key is bound to: the JSON body, or a CSV file's digest with the query that goes with it (hashed only when a key was sent). */
function idempotentBodyOf(read: RequestBody | undefined, query: unknown): unknown {
  return read?.type === 'csv' ? { csvSha256: createHash('sha256').update(read.raw).digest('hex'), query } : read?.value;
}
