import type { Next } from 'koa';
import { inServerSpan, pathForLog, runWithLogContext, setServerRoute, SpanStatusCode } from '@wallet/platform';
import type { GatewayContext } from './context.js';

/**
 * The first middleware: ONE server span per request (the HTTP instrumentation's when the SDK is
 * loaded, else one continuing an incoming W3C `traceparent`), named by the route template
 * (`POST /transfers/{id}`), with the path masked as the access log masks it, and the log context, so
 * every line logged while handling the request carries requestId, companyId and traceId. gRPC calls
 * made by the handlers inherit the active context and send it on as metadata. A no-op without a
 * tracer provider.
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
  const attributes = { 'http.request.method': ctx.method, 'url.scheme': 'http', 'url.path': pathForLog(ctx.path) };
  return inServerSpan(ctx.method, ctx.req.headers, attributes, async (span) => {
    try {
      await runWithLogContext(logContext, next);
    } finally {
      if (span.isRecording()) {
        const route = state.routeTemplate ?? 'unmatched';
        setServerRoute(span, ctx.method, route);
        span.setAttribute('http.response.status_code', ctx.status);
        if (state.requestId) span.setAttribute('wallet.request_id', state.requestId);
        if (state.principal?.companyId) span.setAttribute('wallet.company_id', state.principal.companyId);
        if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
  });
}
