import type { Next } from 'koa';
import { Counter } from 'prom-client';
import { AppError, metricsRegistry } from '@wallet/platform';
import type { RateClass } from '../ratelimit/rate-classes.js';
import type { LimitDecision, MultiDecision, RollingWindowLimiter } from '../ratelimit/rolling-window-limiter.js';
import type { ClientIpResolver } from './client-ip.js';
import type { GatewayContext } from './context.js';

export interface RateLimitSettings {
  perMinute: Record<RateClass, number>;
  /**
   * The budget of one credential (an API key, a dashboard user) in a class, as a multiple of the
   * class limit (× the company multiplier), whatever client IPs it comes from. 1 (the default): a
   * key gets the documented allowance from one IP, and no more by spreading over many.
   */
  perKeyFactor?: number;
}

const rejections = new Counter({
  name: 'gateway_rate_limit_rejections_total',
  help: 'requests answered 429 by the rate limiter, by rate class',
  labelNames: ['class'],
  registers: [metricsRegistry],
});

/** The limit of a class for a caller: class limit × the company's multiplier (1 without a company). */
export function effectiveLimit(base: number, multiplier: number | undefined): number {
  const m = multiplier !== undefined && Number.isFinite(multiplier) && multiplier > 0 ? multiplier : 1;
  return Math.max(1, Math.floor(base * m));
}

/** The credential a request is counted for beside its IP: the API key, or the dashboard user. */
export function credentialOf(ctx: GatewayContext): string | undefined {
  if (ctx.state.principal) return `key:${ctx.state.principal.keyId}`;
  if (ctx.state.session) return `user:${ctx.state.session.userId}`;
  return undefined;
}

/**
 * Counts the request in its class for the client IP and, once authenticated, for its credential
 * (credentialOf: its own budget, so one key spread over many IPs gets no more), both in one atomic
 * step (rolling window, shared through Redis): a request refused by either counter is recorded in
 * neither. Answers 429 with Retry-After when a window is full. Sends RateLimit-Limit / -Remaining
 * (after this request) / -Reset on every answer of a limited route, of the counter closest to its
 * limit (the refusing one on a 429).
 */
export function rateLimit(
  rateClass: RateClass,
  limiter: RollingWindowLimiter,
  ips: ClientIpResolver,
  settings: RateLimitSettings,
  /** Whom to count (default the client IP), e.g. the operator; undefined: skip this counter. */
  keyOf?: (ctx: GatewayContext, ip: string) => string | undefined,
) {
  const base = settings.perMinute[rateClass];
  return async function limitRate(ctx: GatewayContext, next: Next): Promise<void> {
    const ip = ips.resolve(ctx.req.socket.remoteAddress, ctx.req.headers['x-forwarded-for']);
    ctx.state.clientIp = ip;
    const key = keyOf ? keyOf(ctx, ip) : ip;
    if (key === undefined) {
      await next();
      return;
    }
    const limit = effectiveLimit(base, ctx.state.principal?.rateLimitMultiplier);
    const credential = keyOf ? undefined : credentialOf(ctx);
    const d =
      credential === undefined
        ? await limiter.consume(rateClass, key, limit)
        : pick(
            await limiter.consumeAll(rateClass, [
              { key, limit },
              { key: credential, limit: perKeyLimit(limit, settings.perKeyFactor) },
            ]),
          );
    ctx.set('RateLimit-Limit', String(d.limit));
    ctx.set('RateLimit-Remaining', String(d.remaining));
    ctx.set('RateLimit-Reset', String(d.resetSeconds));
    if (!d.allowed) {
      rejections.inc({ class: rateClass });
      ctx.set('Retry-After', String(d.resetSeconds));
      throw new AppError('RATE_LIMIT_EXCEEDED', undefined, { retryAfter: d.resetSeconds });
    }
    await next();
  };
}

/** The budget of one credential: the caller's limit × the factor (at least the limit itself). */
export function perKeyLimit(limit: number, factor: number | undefined): number {
  const f = factor !== undefined && Number.isFinite(factor) && factor >= 1 ? factor : 1;
  return Math.max(limit, Math.floor(limit * f));
}

/** The counter the headers report: on a refusal the full one that frees last; otherwise the one with the fewest left. */
export function pick(m: MultiDecision): LimitDecision {
  if (!m.allowed) {
    const full = m.counters.filter((c) => !c.allowed);
    const refusing = full.length > 0 ? full : m.counters;
    return { ...refusing.reduce((a, b) => (b.resetSeconds > a.resetSeconds ? b : a)), allowed: false };
  }
  return { ...m.counters.reduce((a, b) => (b.remaining < a.remaining ? b : a)), allowed: true };
}

/** One more count in a class for a key the handler learns (e.g. the e-mail of a login); 429 past the limit. */
export async function consumeOrThrow(ctx: GatewayContext, limiter: RollingWindowLimiter, rateClass: RateClass, key: string, limit: number): Promise<void> {
  const d = await limiter.consume(rateClass, key, limit);
  if (!d.allowed) {
    rejections.inc({ class: rateClass });
    ctx.set('Retry-After', String(d.resetSeconds));
    throw new AppError('RATE_LIMIT_EXCEEDED', undefined, { retryAfter: d.resetSeconds });
  }
}
