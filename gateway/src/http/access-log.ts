import type { Next } from 'koa';
import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry, pathForLog, type Logger } from '@wallet/platform';
import type { GatewayContext } from './context.js';

const httpDuration = new Histogram({
  name: 'http_server_request_duration_seconds',
  help: 'HTTP requests handled by the gateway, by route template and status',
  labelNames: ['method', 'route', 'status'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});
const httpRequests = new Counter({
  name: 'http_server_requests_total',
  help: 'HTTP requests answered by the gateway, by route template, method and status',
  labelNames: ['method', 'route', 'status'],
  registers: [metricsRegistry],
});
const httpInFlight = new Gauge({
  name: 'http_server_in_flight_requests',
  help: 'HTTP requests being handled by the gateway',
  registers: [metricsRegistry],
});

/** Methods kept as a label value; anything else is `OTHER` (bounded cardinality). */
const KNOWN_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/**
 * One structured line and one histogram sample per request: request id, route template, status,
 * duration, company and API key (audit). Never headers or bodies (credentials live there).
 */
export function accessLog(log: Logger) {
  return async function logRequest(ctx: GatewayContext, next: Next): Promise<void> {
    const start = performance.now();
    httpInFlight.inc();
    try {
      await next();
    } finally {
      httpInFlight.dec();
      const ms = performance.now() - start;
      const route = ctx.state.routeTemplate ?? 'unmatched';
      const labels = { method: KNOWN_METHODS.has(ctx.method) ? ctx.method : 'OTHER', route, status: String(ctx.status) };
      httpDuration.observe(labels, ms / 1000);
      httpRequests.inc(labels);
      if (log.isLevelEnabled('info')) {
        log.info(
          {
            requestId: ctx.state.requestId,
            method: ctx.method,
            route,
            path: pathForLog(ctx.path),
            status: ctx.status,
            durationMs: Math.round(ms * 100) / 100,
            companyId: ctx.state.principal?.companyId,
            apiKeyId: ctx.state.principal?.keyId,
            admin: ctx.state.admin?.kind,
            operatorId: ctx.state.admin?.kind === 'operator' ? ctx.state.admin.operatorId : undefined,
            clientIp: ctx.state.clientIp,
          },
          'request',
        );
      }
    }
  };
}
