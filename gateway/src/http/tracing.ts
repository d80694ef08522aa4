import type { Next } from 'koa';
import { inServerSpan, runWithLogContext, SpanStatusCode } from '@wallet/platform';
import type { GatewayContext } from './context.js';

/**
 * The first middleware: a SERVER span per request (continuing an incoming W3C `traceparent`, or the
 * HTTP span of the auto-instrumentation when the SDK is loaded) and the log context, so every line
 * logged while handling the request carries requestId, companyId and traceId. gRPC calls made by the
 * handlers inherit the active context and send it on as metadata. A no-op without a tracer provider.
 */
export function requestTelemetry(ctx: GatewayContext, next: Next): Promise<void> {
  const state = ctx.state;
  const logContext = {
    get requestId() {
      return state.requestId;
    },
    get companyId() {
      return state.principal?.companyId;
    },
  };
  return inServerSpan(ctx.method, ctx.req.headers, { 'http.request.method': ctx.method, 'url.scheme': 'http' }, async (span) => {
    try {
      await runWithLogContext(logContext, next);
    } finally {
      if (span.isRecording()) {
        const route = state.routeTemplate ?? 'unmatched';
        span.updateName(`${ctx.method} ${route}`);
        span.setAttribute('http.route', route);
        span.setAttribute('http.response.status_code', ctx.status);
        if (state.requestId) span.setAttribute('wallet.request_id', state.requestId);
        if (state.principal?.companyId) span.setAttribute('wallet.company_id', state.principal.companyId);
        if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
  });
}
