import type { Next } from 'koa';
import { Counter } from 'prom-client';
import { AppError, metricsRegistry } from '@wallet/platform';
import type { RateClass } from '../ratelimit/rate-classes.js';
import type { RollingWindowLimiter } from '../ratelimit/rolling-window-limiter.js';
import type { ClientIpResolver } from './client-ip.js';
import type { GatewayContext } from './context.js';

export interface RateLimitSettings {
  perMinute: Record<RateClass, number>;
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

/**
 * Counts the request in its class for the client IP (rolling window, shared through Redis) and
 * answers 429 with Retry-After when the window is full. Sends RateLimit-Limit / -Remaining
 * (after this request) / -Reset on every answer of a limited route.
 */
export function rateLimit(
  rateClass: RateClass, limiter: RollingWindowLimiter, ips: ClientIpResolver, settings: RateLimitSettings,
  /** Whom to count (default the client IP), e.g. the operator; undefined: skip this counter. */
  keyOf?: (ctx: GatewayContext, ip: string) => string | undefined,
) {
  const base = settings.perMinute[rateClass];
  return async function limitRate(ctx: GatewayContext, next: Next): Promise<void> {
    const ip = ips.resolve(ctx.req.socket.remoteAddress, ctx.req.headers['x-forwarded-for']);
    ctx.state.clientIp = ip;
    const key = keyOf ? keyOf(ctx, ip) : ip;
    if (key === undefined) { await next(); return; }
    const limit = effectiveLimit(base, ctx.state.principal?.rateLimitMultiplier);
    const d = await limiter.consume(rateClass, key, limit);
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

/** One more count in a class for a key the handler learns (e.g. the e-mail of a login); 429 past the limit. */
export async function consumeOrThrow(ctx: GatewayContext, limiter: RollingWindowLimiter, rateClass: RateClass, key: string, limit: number): Promise<void> {
  const d = await limiter.consume(rateClass, key, limit);
  if (!d.allowed) {
    rejections.inc({ class: rateClass });
    ctx.set('Retry-After', String(d.resetSeconds));
    throw new AppError('RATE_LIMIT_EXCEEDED', undefined, { retryAfter: d.resetSeconds });
  }
}
