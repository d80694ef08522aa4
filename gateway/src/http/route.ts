import type { z } from 'zod';
import type { CallContext, ErrorCode } from '@wallet/platform';
import type { AuditTrail } from '../audit/admin-audit.js';
import type { AdminPrincipal, SharedTokenPolicy } from '../auth/admin-principal.js';
import type { ApiKeyPrincipal } from '../auth/api-key-authenticator.js';
import type { SessionPrincipal } from '../auth/dashboard-auth.js';
import type { Scope } from '../persistence/api-key.store.js';
import type { RateClass } from '../ratelimit/rate-classes.js';
import type { RouteDeprecation } from './api-versions.js';
import type { GatewayContext } from './context.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * How a route authenticates: a client API key of a scope; an operator session or the shared admin
 * token (`sharedToken`: where the shared token is accepted, default `development`); a dashboard
 * session; or nobody.
 */
export type RouteAuth = { kind: 'apiKey'; scope: Scope } | { kind: 'admin'; sharedToken?: SharedTokenPolicy } | { kind: 'session' } | { kind: 'public' };

/**
 * The audit log of an admin action (audit/admin-audit.ts). `gateway`: the change is in the gateway's
 * tables and the use case records its row in the same transaction (the router writes the outcome
 * only if it did not). `service`: another service makes the change over gRPC, so the router writes
 * a REQUESTED row before the handler and the outcome after it.
 */
export interface RouteAudit {
  change: 'gateway' | 'service';
}

export interface RouteResponseDoc {
  description: string;
  /** JSON body; omitted for non-JSON answers. */
  schema?: z.ZodType;
  /** Non-JSON content (e.g. text/html); several when the answer's type depends on what is served (static files). */
  contentType?: string | readonly string[];
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
}

type Input<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface HandlerArgs<P, Q, B> {
  params: Input<P>;
  query: Input<Q>;
  body: Input<B>;
  ctx: GatewayContext;
  /** Who is calling, for gRPC metadata (request id, company, API key, actor). */
  call: CallContext;
  /** Set on API-key routes. */
  principal: ApiKeyPrincipal | undefined;
  /** Set on dashboard-session routes. */
  session: SessionPrincipal | undefined;
  /** Set on admin routes: the operator or the shared token (also on `ctx.state.admin`). */
  admin: AdminPrincipal | undefined;
  /** Set on audited routes (every mutating admin route, and those declaring `audit`). */
  audit: AuditTrail | undefined;
  /**
   * `body` is the validated JSON body, except on a `csv` route when the client sent `text/csv`:
   * then `body` is undefined and the handler parses `rawBody` itself.
   */
  bodyType: 'json' | 'csv' | undefined;
  /** The body's exact bytes, on routes declared with `rawBody: true` and on `csv` routes. */
  rawBody: Buffer | undefined;
  /** The request's `Idempotency-Key`, on idempotent routes (undefined when the client sent none). */
  idempotencyKey: string | undefined;
}

export interface HandlerResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * One HTTP endpoint, declared once: the router registers it and the OpenAPI document is generated
 * from the same declaration (including the zod schemas), so the two cannot drift.
 */
export interface RouteDef<
  P extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: HttpMethod;
  /** OpenAPI form: `/admin/companies/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: RouteAuth;
  /** A provider callback: public (no client credential), but every request is signed (`X-Provider-Signature`); documented as the `providerSignature` scheme. */
  signedBy?: 'provider';
  rateClass?: RateClass;
  params?: P;
  query?: Q;
  body?: B;
  /** Audit log: default `{ change: 'gateway' }` for admin routes other than GET, none elsewhere; `false` opts out. */
  audit?: RouteAudit | false;
  /** Keep the body's exact bytes for the handler (signed provider callbacks). */
  rawBody?: boolean;
  /**
   * Also accepts `text/csv` (charset omitted or UTF-8) besides JSON: the zod `body` schema applies to
   * JSON only; a CSV body reaches the handler as `rawBody` with `bodyType: 'csv'` (the handler parses
   * it). `description` documents the file (its columns) in the OpenAPI document, `example` shows one
   * the server accepts. `only`: the route takes a CSV file and nothing else (declare no `body`; JSON →
   * 415 UNSUPPORTED_MEDIA_TYPE).
   */
  csv?: { description: string; example?: string; only?: boolean };
  /** The largest body accepted, in bytes (default MAX_BODY_BYTES, 1 MiB); more → 413 PAYLOAD_TOO_LARGE. */
  bodyLimitBytes?: number;
  /**
   * Creates something: accepts an `Idempotency-Key` header (the first final answer is stored per
   * company and key and replayed; see http/idempotency.ts). Needs an authenticated company.
   * `'bound'`: the handler passes the key to a downstream that is idempotent by it (it binds the key
   * to what it creates and answers a retry with that), so an unknown outcome (5xx, time-out, a
   * gateway that died) keeps the key bound to the request and the same request may run again at once.
   */
  idempotent?: boolean | 'bound';
  /** Error code to answer when a path parameter is malformed (default INVALID_REQUEST): e.g. a bad company id reads as not found. */
  paramErrors?: Record<string, ErrorCode>;
  responses: Record<number, RouteResponseDoc>;
  /** Domain errors this route can answer (auth, validation, rate-limit and internal errors are added automatically). */
  errors?: ErrorCode[];
  /** Being retired: every answer carries `Deprecation` (and `Sunset` once set) and the document marks it `deprecated` (docs/api-versioning.md). */
  deprecated?: RouteDeprecation;
  handler(args: HandlerArgs<P, Q, B>): Promise<HandlerResult>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDef<any, any, any>;

/** Identity, for inference of the handler's argument types from the schemas. */
export function defineRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(def: RouteDef<P, Q, B>): RouteDef<P, Q, B> {
  return def;
}

/** The distinct media types (parameters dropped) of the files a static route serves, for its documented content. */
export function mediaTypes(contentTypes: readonly string[]): string[] {
  return [...new Set(contentTypes.map((t) => t.split(';')[0]!.trim()))];
}

/** The rate class a route is counted in: its own, or ADMIN for every admin route. */
export function rateClassOf(route: AnyRoute): RateClass | undefined {
  return route.rateClass ?? (route.auth.kind === 'admin' ? 'ADMIN' : undefined);
}

/** How a route is audited (see RouteAudit), or undefined. */
export function auditOf(route: AnyRoute): RouteAudit | undefined {
  if (route.audit === false) return undefined;
  if (route.audit) return route.audit;
  return route.auth.kind === 'admin' && route.method !== 'GET' ? { change: 'gateway' } : undefined;
}

/** The shared-token policy of an admin route. */
export function sharedTokenPolicyOf(route: AnyRoute): SharedTokenPolicy {
  return route.auth.kind === 'admin' ? (route.auth.sharedToken ?? 'development') : 'never';
}

/** `/admin/companies/{id}` → `/admin/companies/:id` (koa-router form). */
export function toRouterPath(openApiPath: string): string {
  return openApiPath.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/** `/admin/companies/:id` → `/admin/companies/{id}`. */
export function toOpenApiPath(routerPath: string): string {
  return routerPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}
