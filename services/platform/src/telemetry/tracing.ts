import {
  context,
  propagation,
  trace,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';

/**
 * Explicit spans at the product's boundaries (HTTP in the gateway, gRPC client and server, outbox
 * publish, JetStream consume), written with @opentelemetry/api only. Without a registered tracer
 * provider and propagator (the default: no OTEL_EXPORTER_OTLP_ENDPOINT) every call here is a no-op.
 * With the SDK (`--import @wallet/platform/otel`) or a test provider, one trace id runs from the
 * HTTP request through gRPC metadata and NATS headers to the consumer.
 */
export const TRACER_NAME = '@wallet/platform';

export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

export { SpanKind, SpanStatusCode };

/** Anything with get/set of string headers: grpc-js Metadata, NATS MsgHdrs, plain records. */
interface HeaderBag {
  get(key: string): unknown;
}

/** Reads W3C headers from grpc-js Metadata (`get` returns an array) or NATS headers (`get` returns a string). */
export const headerGetter: TextMapGetter<HeaderBag> = {
  keys(carrier) {
    const c = carrier as unknown as { keys?: () => string[]; getMap?: () => Record<string, unknown> };
    if (typeof c.getMap === 'function') return Object.keys(c.getMap());
    if (typeof c.keys === 'function') return c.keys();
    return [];
  },
  get(carrier, key) {
    const v = carrier.get(key);
    if (Array.isArray(v)) return v.length > 0 ? v.map(String) : undefined;
    return typeof v === 'string' && v.length > 0 ? v : undefined;
  },
};

export const headerSetter: TextMapSetter<{ set(key: string, value: string): unknown }> = {
  set(carrier, key, value) {
    carrier.set(key, value);
  },
};

/** The W3C headers (traceparent, tracestate, baggage) of `ctx`, as a plain record. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** A context continuing the trace of the given W3C headers (ROOT when there is none). */
export function contextFromTraceHeaders(headers: { traceparent?: string | undefined; tracestate?: string | undefined }): Context {
  if (!headers.traceparent) return ROOT_CONTEXT;
  const carrier: Record<string, string> = { traceparent: headers.traceparent };
  if (headers.tracestate) carrier.tracestate = headers.tracestate;
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** Ends `span` with the outcome of `p` (error status and recorded exception on rejection). */
export function endSpanWith<T>(span: Span, p: Promise<T>): Promise<T> {
  return p.then(
    (v) => {
      span.end();
      return v;
    },
    (err: unknown) => {
      markSpanError(span, err);
      span.end();
      throw err;
    },
  );
}

export function markSpanError(span: Span, err: unknown): void {
  if (!span.isRecording()) return;
  const e = err instanceof Error ? err : new Error(String(err));
  span.recordException({ name: e.name, message: e.message });
  span.setStatus({ code: SpanStatusCode.ERROR, message: (err as { code?: string }).code ?? e.message });
}

/** Runs `fn` in a new span (child of `parent`, default the active context) and ends it with the outcome. */
export function inSpan<T>(
  name: string,
  opts: { kind?: SpanKind; attributes?: Record<string, string | number | boolean>; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = opts.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, ...(opts.attributes ? { attributes: opts.attributes } : {}) }, parent);
  return context.with(trace.setSpan(parent, span), () => endSpanWith(span, fn(span)));
}

export type { Span as TraceSpan } from '@opentelemetry/api';

/**
 * Runs `fn` in a SERVER span for an incoming request: a child of the active span when there is one
 * (the SDK's HTTP instrumentation), else of the W3C headers received. The span is ended after `fn`
 * settles; `fn` sets the final name, attributes and status.
 */
export function inServerSpan<T>(
  name: string,
  headers: Record<string, string | string[] | undefined>,
  attributes: Record<string, string | number | boolean>,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const active = context.active();
  const parent = trace.getSpan(active) ? active : propagation.extract(active, headers);
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return context.with(trace.setSpan(parent, span), () => fn(span)).finally(() => span.end());
}
