import {
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type handleUnaryCall,
  type ServiceDefinition,
  type UntypedServiceImplementation,
  type ServerUnaryCall,
  type sendUnaryData,
  type ServiceError,
  type handleServerStreamingCall,
  type ServerWritableStream,
} from '@grpc/grpc-js';
import { context, propagation, trace, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram } from 'prom-client';
import { AppError } from '../errors/catalogue.js';
import { toGrpcError } from '../errors/grpc.js';
import { contextFromMetadata, type CallContext } from './context.js';
import { metricsRegistry } from '../ops/metrics.js';
import { runWithLogContext } from '../logging/log-context.js';
import { headerGetter, SpanKind, SpanStatusCode, tracer } from '../telemetry/tracing.js';
import { entryIdentity, principalKinds, type AccessEntry, type AccessPolicy } from '../mesh/access.js';
import { CALLER_CONTEXT_METADATA, CallerContextVerifier } from '../mesh/caller-context.js';
import { identityOf, type MeshIdentity, type MeshTls } from '../mesh/identity.js';
import { TLSSocket, type PeerCertificate } from 'node:tls';

/** A handler written as an async function of the request and the caller's context. */
export type AsyncUnary<Req, Res> = (req: Req, ctx: CallContext) => Promise<Res>;
/** One async handler per RPC of a generated `<Name>Server` (its string index signature is dropped). */
export type AsyncService<S> = {
  [K in keyof S as string extends K ? never : K]: S[K] extends handleServerStreamingCall<infer Req, infer Res>
    ? AsyncServerStream<Req, Res>
    : S[K] extends handleUnaryCall<infer Req, infer Res>
      ? AsyncUnary<Req, Res>
      : never;
};
/**
 * A server-streaming handler: an async iterable of the messages to send. Each is written when the
 * client's flow control allows (back-pressure reaches the iterable), and the iterable is closed
 * (its `return()`, so a database cursor is released) when the client cancels or the call fails.
 */
export type AsyncServerStream<Req, Res> = (req: Req, ctx: CallContext) => AsyncIterable<Res>;

/** Writes an async iterable to a server stream with back-pressure; stops (closing the iterable) when the call is cancelled. */
async function pipeToStream(items: AsyncIterable<unknown>, call: ServerWritableStream<unknown, unknown>): Promise<void> {
  const it = items[Symbol.asyncIterator]();
  let done = false;
  try {
    for (;;) {
      if (call.cancelled) return;
      const next = await it.next();
      if (next.done) {
        done = true;
        break;
      }
      if (!call.write(next.value)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            call.off('drain', go);
            call.off('cancelled', go);
            resolve();
          };
          call.on('drain', go);
          call.on('cancelled', go);
        });
      }
    }
    call.end();
  } finally {
    if (!done) await it.return?.();
  }
}

const grpcDuration = new Histogram({
  name: 'grpc_server_handling_seconds',
  help: 'gRPC unary handling time by service, method and outcome (catalogue error code or OK)',
  labelNames: ['service', 'method', 'code'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [metricsRegistry],
});
const grpcHandled = new Counter({
  name: 'grpc_server_handled_total',
  help: 'gRPC unary calls completed by service, method and outcome (catalogue error code or OK)',
  labelNames: ['service', 'method', 'code'],
  registers: [metricsRegistry],
});
const grpcInFlight = new Gauge({
  name: 'grpc_server_in_flight',
  help: 'gRPC unary calls being handled',
  labelNames: ['service'],
  registers: [metricsRegistry],
});

const ERROR_CODE_KEY = 'x-error-code';
const STATUS_NAMES = Object.fromEntries(
  Object.entries(GrpcStatus)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => [v, k]),
) as Record<number, string>;

/** The outcome label: OK, the catalogue code carried in the trailers, or the gRPC status name. */
function outcomeOf(err: Partial<ServiceError> | null | undefined): string {
  if (!err) return 'OK';
  const code = err.metadata?.get?.(ERROR_CODE_KEY)?.[0];
  if (typeof code === 'string' && code) return code;
  return STATUS_NAMES[err.code ?? GrpcStatus.UNKNOWN] ?? 'UNKNOWN';
}

const callsRefused = new Counter({
  name: 'grpc_server_calls_refused_total',
  help: 'gRPC calls refused before their handler: no mesh identity, or an identity the method does not allow',
  labelNames: ['method', 'caller', 'reason'],
  registers: [metricsRegistry],
});

/**
 * Adapts async handlers to grpc-js: the caller's mesh identity (its client certificate) checked
 * against the method's allow-list before anything else, context from metadata (and in the log
 * context), errors mapped once.
 */
export function asyncService<S extends UntypedServiceImplementation>(
  impl: AsyncService<S>,
  log: Logger,
  access: AccessPolicy<AsyncService<S>>,
  mesh: MeshTls,
): S {
  const out: Record<string, (call: ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>, callback?: sendUnaryData<unknown>) => void> = {};
  const policy = access as unknown as Record<string, readonly AccessEntry[] | undefined>;
  const verifier = mesh.callerVerifyKey ? new CallerContextVerifier(mesh.callerVerifyKey) : undefined;
  for (const [name, fn] of Object.entries(impl as Record<string, (req: unknown, ctx: CallContext) => Promise<unknown> | AsyncIterable<unknown>>)) {
    const entries = policy[name];
    if (!entries) throw new Error(`gRPC method ${name} has no access policy`);
    const callers = new Set(entries.map(entryIdentity));
    const kinds = principalKinds(entries);
    const refuse = (
      callback: (err: unknown, res: null) => void,
      caller: string | undefined,
      reason: string,
      code: 'CALLER_NOT_AUTHENTICATED' | 'CALLER_NOT_ALLOWED',
    ) => {
      callsRefused.inc({ method: name, caller: caller ?? 'none', reason });
      log.warn({ method: name, caller: caller ?? null, reason }, 'gRPC call refused by the mesh access policy');
      callback(toGrpcError(new AppError(code)) as never, null);
    };
    // grpc-js calls a unary handler with (call, callback), a server-streaming one with (call) alone.
    out[name] = (call, unaryCallback) => {
      const callback: (err: unknown, res: unknown) => void = unaryCallback
        ? (err, res) => unaryCallback(err as ServiceError | null, res)
        : (err) => {
            if (err) (call as ServerWritableStream<unknown, unknown>).emit('error', err);
          };
      const caller = peerIdentity(call);
      if (!caller) return refuse(callback, undefined, 'no_identity', 'CALLER_NOT_AUTHENTICATED');
      if (!callers.has(caller)) return refuse(callback, caller, 'not_allowed', 'CALLER_NOT_ALLOWED');
      const ctx = contextFromMetadata(call.metadata);
      ctx.caller = caller;
      const handle = (): Promise<unknown> => {
        if (unaryCallback) return fn(call.request, ctx) as Promise<unknown>;
        return pipeToStream(fn(call.request, ctx) as AsyncIterable<unknown>, call as ServerWritableStream<unknown, unknown>);
      };
      const run = () =>
        runWithLogContext({ requestId: ctx.requestId, companyId: ctx.companyId }, handle).then(
          (res) => {
            if (unaryCallback) callback(null, res);
          },
          (err: unknown) => {
            if (!(err instanceof AppError)) {
              log.error({ err, method: name, requestId: ctx.requestId }, 'unhandled error in gRPC handler');
            }
            callback(toGrpcError(err) as never, null);
          },
        );
      if (caller !== 'gateway') {
        // Another service: authenticated by its certificate and allowed this method; it names the company.
        return void run();
      }
      // The gateway: the principal only from the signed caller context; the company only from it.
      const token = call.metadata.get(CALLER_CONTEXT_METADATA)[0];
      if (typeof token !== 'string' || !verifier) return refuse(callback, caller, 'no_caller_context', 'CALLER_NOT_AUTHENTICATED');
      verifier.verify(token).then(
        (principal) => {
          if (!kinds.has(principal.kind)) return refuse(callback, caller, `principal_${principal.kind}`, 'CALLER_NOT_ALLOWED');
          ctx.principal = principal;
          delete ctx.companyId;
          delete ctx.apiKeyId;
          if (principal.companyId) ctx.companyId = principal.companyId;
          if (principal.kind === 'apikey') {
            ctx.apiKeyId = principal.keyId;
            ctx.actor = `apikey:${principal.keyId}`;
          } else if (principal.kind === 'user') ctx.actor = `user:${principal.userId}`;
          else if (principal.kind === 'admin') ctx.actor = `admin:${principal.operator}`;
          else ctx.actor = 'provider-callback';
          return void run();
        },
        () => refuse(callback, caller, 'bad_caller_context', 'CALLER_NOT_AUTHENTICATED'),
      );
    };
  }
  return out as S;
}

/** The mesh identity of each TLS 1.3 connection's client certificate, read once per connection. */
const sessionIdentities = new WeakMap<object, MeshIdentity | null>();

/**
 * The caller's mesh identity, from its client certificate. grpc-js reads the certificate afresh on
 * every call (`getPeerCertificate` builds a new object with three fingerprints: ~80 µs of CPU on our
 * nodes, 8% of the ledger's busy time). A TLS 1.3 connection's peer certificate cannot change (1.3
 * has no renegotiation), so the identity is remembered per HTTP/2 session; any other connection, or
 * a call whose session grpc-js does not expose where we look, reads it per call as before.
 */
function peerIdentity(call: { getAuthContext?: () => { sslPeerCertificate?: PeerCertificate | undefined } | undefined }): MeshIdentity | undefined {
  // grpc-js 1.14: the call's `call` is the base intercepting call (`stream`), or with interceptors one wrapping it (`nextCall`).
  type Stream = { stream?: { session?: { socket?: unknown } } };
  const inner = (call as unknown as { call?: Stream & { nextCall?: Stream } }).call;
  const session = (inner?.stream ?? inner?.nextCall?.stream)?.session;
  const socket = session?.socket;
  if (!session || !(socket instanceof TLSSocket) || socket.getProtocol() !== 'TLSv1.3') {
    return identityOf(call.getAuthContext?.()?.sslPeerCertificate);
  }
  let id = sessionIdentities.get(session);
  if (id === undefined) {
    id = identityOf(call.getAuthContext?.()?.sslPeerCertificate) ?? null;
    sessionIdentities.set(session, id);
  }
  return id ?? undefined;
}

/**
 * Wraps a unary handler with the server side of observability: a SERVER span continuing the
 * caller's trace (traceparent/tracestate metadata), RED metrics by service/method/outcome.
 */
function instrumentUnary(path: string, handler: handleUnaryCall<unknown, unknown>, self: unknown): handleUnaryCall<unknown, unknown> {
  const m = /^\/([^/]+)\/([^/]+)$/.exec(path);
  const service = m?.[1] ?? 'grpc';
  const method = m?.[2] ?? path;
  return (call, callback) => {
    const parent = propagation.extract(ROOT_CONTEXT, call.metadata, headerGetter);
    const span = tracer().startSpan(
      `${service}/${method}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method },
      },
      parent,
    );
    const start = performance.now();
    grpcInFlight.inc({ service });
    let finished = false;
    const done: sendUnaryData<unknown> = (err, value, trailer, flags) => {
      if (!finished) {
        finished = true;
        const code = outcomeOf(err as Partial<ServiceError> | null);
        const seconds = (performance.now() - start) / 1000;
        grpcHandled.inc({ service, method, code });
        grpcDuration.observe({ service, method, code }, seconds);
        grpcInFlight.dec({ service });
        if (span.isRecording()) {
          span.setAttribute('rpc.grpc.status_code', (err as Partial<ServiceError> | null)?.code ?? 0);
          if (err) {
            span.setAttribute('error.type', code);
            // Client mistakes (validation, not found, …) are not server errors; INTERNAL and unavailable are.
            const ec = (err as Partial<ServiceError>).code;
            if (ec === GrpcStatus.INTERNAL || ec === GrpcStatus.UNKNOWN || ec === GrpcStatus.UNAVAILABLE || ec === GrpcStatus.DEADLINE_EXCEEDED) {
              span.setStatus({ code: SpanStatusCode.ERROR, message: code });
            }
          }
        }
        span.end();
      }
      callback(err, value, trailer, flags);
    };
    context.with(trace.setSpan(parent, span), () => {
      try {
        handler.call(self, call, done);
      } catch (err) {
        done(toGrpcError(err) as ServiceError, null);
      }
    });
  };
}

function instrumentService(definition: ServiceDefinition, implementation: UntypedServiceImplementation): UntypedServiceImplementation {
  const out: UntypedServiceImplementation = { ...implementation };
  for (const [name, attrs] of Object.entries(definition)) {
    const h = implementation[name];
    if (typeof h !== 'function' || attrs.requestStream || attrs.responseStream) continue;
    out[name] = instrumentUnary(attrs.path, h as handleUnaryCall<unknown, unknown>, implementation);
  }
  return out;
}

export interface GrpcServerHandle {
  server: Server;
  port: number;
  /** Stops taking calls, waits for in-flight ones up to `graceMs`, then forces. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Serves over mutual TLS only: the server presents its mesh certificate and requires a client
 * certificate from the same CA (a caller without one fails the handshake); asyncService then
 * authorises the caller's identity per method.
 */
export async function startGrpcServer(
  host: string,
  port: number,
  services: Array<{ definition: ServiceDefinition; implementation: UntypedServiceImplementation }>,
  tls: MeshTls,
): Promise<GrpcServerHandle> {
  // channelz off: grpc-js otherwise keeps per-call counters and timestamps for a channelz service we do not expose.
  const server = new Server({
    // 16 MiB: a bulk payout of 10,000 items travels in one CreateBatch / ReserveBatch (docs/batches.md).
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.enable_channelz': 0,
    // A connection lives at most ~5 min (calls in flight get 30 s more): clients then reconnect and
    // re-resolve their target, so replicas the autoscaler adds get calls (round robin over DNS).
    'grpc.max_connection_age_ms': 5 * 60_000,
    'grpc.max_connection_age_grace_ms': 30_000,
  });
  for (const s of services) server.addService(s.definition, instrumentService(s.definition, s.implementation));
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], true), (err, p) =>
      err ? reject(err) : resolve(p),
    );
  });
  return {
    server,
    port: bound,
    stop: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        timer.unref();
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
