import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import {
  context,
  propagation,
  trace,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Context,
  type Link,
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
 * Runs `fn` in the SERVER span of an incoming request. With the SDK loaded, the HTTP
 * instrumentation has opened that span already (its RPC metadata is in the active context): `fn`
 * gets that one, so a request has one server span, not two. Without it (tests with a provider but
 * no instrumentation), a new SERVER span continuing the W3C headers received. `fn` sets the final
 * name (`setServerRoute`), attributes and status; a span opened here is ended after `fn` settles.
 */
export function inServerSpan<T>(
  name: string,
  headers: Record<string, string | string[] | undefined>,
  attributes: Record<string, string | number | boolean>,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const active = context.active();
  const rpc = getRPCMetadata(active);
  if (rpc?.type === RPCType.HTTP && rpc.span.spanContext().spanId === trace.getSpan(active)?.spanContext().spanId) {
    rpc.span.setAttributes(attributes);
    return fn(rpc.span);
  }
  const parent = trace.getSpan(active) ? active : propagation.extract(active, headers);
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return context.with(trace.setSpan(parent, span), () => fn(span)).finally(() => span.end());
}

/**
 * Names the request's server span by its route template (`POST /transfers/{id}`, never a raw path)
 * and tells the HTTP instrumentation the route, which it would otherwise rename the span without.
 */
export function setServerRoute(span: Span, method: string, route: string): void {
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
  const rpc = getRPCMetadata(context.active());
  if (rpc?.type === RPCType.HTTP) rpc.route = route;
}

/** A span link to the context of a stored W3C `traceparent` (the trace that started a saga), or none when it is absent or malformed. */
export function linkTo(traceparent: string | null | undefined, attributes?: Record<string, string>): Link[] {
  if (!traceparent) return [];
  const sc = trace.getSpanContext(contextFromTraceHeaders({ traceparent }));
  if (!sc || !trace.isSpanContextValid(sc)) return [];
  return [{ context: sc, ...(attributes ? { attributes } : {}) }];
}

/**
 * Ties the active span (a gRPC call or message handler working on a saga begun in another trace:
 * a rail callback, a status lookup) to that saga: a link to the trace stored with it and its id as
 * an attribute (`wallet.transfer_id` and the like), so the two traces are found from each other.
 */
export function linkActiveSpanToSaga(traceparent: string | null | undefined, attributes: Record<string, string>): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  span.setAttributes(attributes);
  addSagaLink(traceparent);
}

/**
 * Adds to the active span a link to a saga's stored context, the link itself carrying what it is about
 * (for a span about many sagas, such as a reconciliation run and the payments of its breaks).
 */
export function addSagaLink(traceparent: string | null | undefined, linkAttributes?: Record<string, string>): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  const links = linkTo(traceparent, linkAttributes);
  if (links.length > 0) span.addLinks(links);
}

/**
 * linkActiveSpanToSaga for a saga still to be read: `load` (its stored traceparent) runs only when the
 * active span is recorded, so an untraced or unsampled call pays no read for it.
 */
export async function linkActiveSpanToSagaOf(load: () => Promise<string | null | undefined>, attributes: Record<string, string>): Promise<void> {
  if (!trace.getActiveSpan()?.isRecording()) return;
  linkActiveSpanToSaga(await load(), attributes);
}

/**
 * Runs `fn` in a new ROOT span (its own trace) linked to the saga's stored context, for work a
 * background task (a sweeper, a worker) does on one saga: sampled on its own, found from the
 * payment's trace by the link and the id attribute.
 */
export function inSagaSpan<T>(
  name: string,
  saga: { traceparent: string | null | undefined; attributes: Record<string, string> },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const span = tracer().startSpan(name, { kind: SpanKind.INTERNAL, root: true, attributes: saga.attributes, links: linkTo(saga.traceparent) }, ROOT_CONTEXT);
  return context.with(trace.setSpan(ROOT_CONTEXT, span), () => endSpanWith(span, fn(span)));
}

/**
 * `fn` bound to no trace: for a poller's timer, which would otherwise run every later poll in the
 * context of whatever request or message happened to wake it (AsyncLocalStorage follows timers),
 * recording idle polls as part of a finished trace. Work the poll finds starts its own span.
 */
export function outsideTrace<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return context.bind(ROOT_CONTEXT, fn);
}
