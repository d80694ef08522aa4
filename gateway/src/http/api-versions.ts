import type { Next } from 'koa';
import { AppError } from '@wallet/platform';
import type { GatewayContext } from './context.js';
import { effectiveApiVersion, SUPPORTED_API_VERSIONS } from '../api-versions.js';

/** The request header naming a version, and the answer header saying which applied. */
export const API_VERSION_HEADER = 'Wallet-Version';
/** Where integrators read about versions and deprecations (the reference page shows the document's description). */
export const DEPRECATION_INFO_LINK = '</docs>; rel="deprecation"; type="text/html"';

/** The version that applies to this request (see the module's comment). */
export function appliedApiVersion(ctx: GatewayContext): string {
  return ctx.state.apiVersion ?? effectiveApiVersion(ctx.state.principal?.apiVersion);
}

const VERSION_SHAPE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Reads `Wallet-Version` (400 UNSUPPORTED_API_VERSION with the supported versions when it names none
 * of them) and writes the version applied on every answer, errors included (set after the route has
 * authenticated the key, whose pinned version applies when the request names none).
 */
export function apiVersioning(supported: readonly string[] = SUPPORTED_API_VERSIONS) {
  return async function negotiateVersion(ctx: GatewayContext, next: Next): Promise<void> {
    const raw = ctx.req.headers['wallet-version'];
    if (raw !== undefined) {
      const requested = (Array.isArray(raw) ? raw.join(', ') : raw).trim();
      if (!VERSION_SHAPE.test(requested) || !supported.includes(requested)) {
        throw new AppError('UNSUPPORTED_API_VERSION', undefined, { requested: requested.slice(0, 64), supported: [...supported] });
      }
      ctx.state.apiVersion = requested;
    }
    try {
      await next();
    } finally {
      ctx.set(API_VERSION_HEADER, ctx.state.apiVersion ?? effectiveApiVersion(ctx.state.principal?.apiVersion, supported));
    }
  };
}

/**
 * A route being retired (RFC 9745 `Deprecation`, RFC 8594 `Sunset`): since when it is deprecated and,
 * once decided, the date after which it may stop answering (announced at least 6 months ahead).
 */
export interface RouteDeprecation {
  /** ISO 8601 date or instant the deprecation took effect (`2026-12-01`). */
  since: string;
  /** ISO 8601 date or instant after which the route may answer 404 or 410. */
  sunset?: string;
  /** What to use instead, for the document. */
  replacement?: string;
}

/** The headers every answer of a deprecated route carries. */
export function deprecationHeaders(d: RouteDeprecation): Record<string, string> {
  const since = instantOf(d.since, 'since');
  const headers: Record<string, string> = {
    // RFC 9745: a Structured Field Date, `@` + Unix seconds.
    Deprecation: `@${Math.floor(since.getTime() / 1000)}`,
    Link: DEPRECATION_INFO_LINK,
  };
  // RFC 8594: an HTTP-date.
  if (d.sunset) headers.Sunset = instantOf(d.sunset, 'sunset').toUTCString();
  return headers;
}

function instantOf(text: string, what: string): Date {
  const t = Date.parse(text);
  if (!Number.isFinite(t)) throw new Error(`deprecation ${what}: not an ISO 8601 date: ${text}`);
  return new Date(t);
}
