import {
  credentials,
  type ChannelCredentials,
  type Client,
  type ClientReadableStream,
  type handleServerStreamingCall,
  type handleUnaryCall,
  type Metadata,
  type ServiceError,
  type CallOptions,
} from '@grpc/grpc-js';
import { context, propagation, trace } from '@opentelemetry/api';
import { fromGrpcError } from '../errors/grpc.js';
import { contextToMetadata, type CallContext } from './context.js';
import { headerSetter, markSpanError, SpanKind, tracer } from '../telemetry/tracing.js';
import { identityOf, type MeshIdentity, type MeshTls } from '../mesh/identity.js';
import { CALLER_CONTEXT_METADATA, CallerContextSigner } from '../mesh/caller-context.js';

export type AsyncClient<S> = {
  [K in keyof S]: S[K] extends handleServerStreamingCall<infer Req, infer Res>
    ? (req: Req, ctx: CallContext, opts?: { deadlineMs?: number }) => AsyncIterable<Res>
    : S[K] extends handleUnaryCall<infer Req, infer Res>
      ? (req: Req, ctx: CallContext, opts?: { deadlineMs?: number }) => Promise<Res>
      : never;
};

/** A server stream's default deadline: a whole day's settlements may take minutes to read. */
const STREAM_DEADLINE_MS = 30 * 60_000;

/**
 * The messages of a server stream as an async iterable: grpc-js's object-mode Readable (so the
 * client's reading pace is the flow control), errors as AppError, the call cancelled if the
 * consumer stops early.
 */
async function* streamMessages(call: ClientReadableStream<unknown>, onEnd: (err?: unknown) => void): AsyncGenerator<unknown> {
  let finished = false;
  try {
    for await (const msg of call) yield msg;
    finished = true;
    onEnd();
  } catch (err) {
    finished = true;
    const appErr = fromGrpcError(err);
    onEnd(appErr);
    throw appErr;
  } finally {
    if (!finished) {
      call.cancel();
      onEnd();
    }
  }
}

type ClientCtor = new (address: string, creds: ChannelCredentials, options?: object) => Client;
type RawUnary = (req: unknown, md: Metadata, opts: CallOptions, cb: (err: ServiceError | null, res?: unknown) => void) => unknown;

export interface GrpcClientOptions {
  /** Per-call deadline unless the call gives its own. */
  deadlineMs?: number;
  /** This process's mesh credentials, and the identity the server must prove (mutual TLS). */
  mesh: { tls: MeshTls; server: MeshIdentity };
  /**
   * How calls are spread over the addresses the target names or resolves to: `round_robin` (the
   * default: every replica gets calls; behind a Kubernetes headless Service, HTTP/2 would otherwise
   * pin each client to one pod for the connection's life) or `pick_first` (one connection).
   */
  loadBalancing?: 'round_robin' | 'pick_first';
}

/**
 * The grpc-js target for a configured address:
 *  - `host:port` (one address): unchanged, resolved by DNS (every address the name resolves to is balanced over);
 *  - several IP addresses, `10.0.0.1:50051,10.0.0.2:50051` (or `[::1]:1,[::1]:2`): `ipv4:…` / `ipv6:…`;
 *  - a target with its scheme (`dns:///ledger-headless:50051`, `ipv4:…`, `ipv6:…`, `unix:…`): unchanged.
 * Several addresses must be IP literals of one family (grpc-js resolves lists only for those); a
 * list of names is refused with a reason instead of failing at the first call.
 */
export function grpcTarget(address: string): string {
  const target = address.trim();
  if (!target.includes(',')) return target;
  if (/^(dns|ipv4|ipv6|unix|unix-abstract):/.test(target)) return target;
  const parts = target
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  const family = (p: string): 4 | 6 | 0 => {
    if (/^(\d{1,3})(\.\d{1,3}){3}:\d{1,5}$/.test(p)) return 4;
    if (/^\[[0-9a-fA-F:.]+\]:\d{1,5}$/.test(p)) return 6;
    return 0;
  };
  const families = new Set(parts.map(family));
  if (families.size !== 1 || families.has(0)) {
    throw new Error(`gRPC target "${address}": several addresses must all be IPv4 "a.b.c.d:port" or all IPv6 "[addr]:port" (for a name, use dns:///host:port)`);
  }
  return `${families.has(4) ? 'ipv4' : 'ipv6'}:${parts.join(',')}`;
}

/**
 * Client credentials of the mesh: this process's certificate, the mesh CA, and a server check by
 * identity (the URI SAN) instead of by host name, so a client reaches the service it meant and
 * not merely some holder of a mesh certificate, whatever address it dialled.
 */
export function meshChannelCredentials(mesh: GrpcClientOptions['mesh']) {
  return credentials.createSsl(mesh.tls.ca, mesh.tls.key, mesh.tls.cert, {
    checkServerIdentity: (_host, cert) => {
      const got = identityOf(cert);
      return got === mesh.server ? undefined : new Error(`mesh: expected ${mesh.server}, the server is ${got ?? 'no mesh identity'}`);
    },
  });
}

/**
 * A promise client for a ts-proto grpc-js service: every call carries the caller's context as
 * metadata and a deadline; failures come back as AppError (catalogue code preserved).
 * `S` is the generated `<Name>Server` interface, used only for its types.
 */
export function createAsyncClient<S>(Ctor: ClientCtor, address: string, opts: GrpcClientOptions): AsyncClient<S> & { close(): void; raw: Client } {
  const client = new Ctor(grpcTarget(address), meshChannelCredentials(opts.mesh), {
    // SNI names the identity expected (never an IP address, which RFC 6066 forbids); the server's
    // certificate is checked by its URI SAN in meshChannelCredentials, not by this name: the same
    // check holds for every address of the target.
    'grpc.ssl_target_name_override': opts.mesh.server,
    'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ [opts.loadBalancing ?? 'round_robin']: {} }] }),
    // A connection that stops answering without closing (a partition that drops packets, a node gone) is
    // declared dead after a ping unanswered for 5 s, at most 10 s after the last one: round robin then sends
    // to the other replicas (the fault suite's long link hang, docs/operations.md "Partitions"). Our servers
    // (grpc-js) do not police ping rates; a ping every 10 s while calls are active costs nothing.
    'grpc.keepalive_time_ms': 10_000,
    'grpc.keepalive_timeout_ms': 5_000,
    'grpc.max_receive_message_length': 16 * 1024 * 1024, // bulk payouts (docs/batches.md)
    'grpc.max_send_message_length': 16 * 1024 * 1024,
    'grpc.enable_channelz': 0, // no per-call channelz bookkeeping (no channelz service is exposed)
  });
  const defaultDeadline = opts.deadlineMs ?? 5_000;
  const signer = opts.mesh.tls.callerSigningKey ? new CallerContextSigner(opts.mesh.tls.callerSigningKey) : undefined;
  /** The gateway's signed context of the call's principal (the signer reuses a principal's token for 30 s). */
  const withCallerContext = async (md: Metadata, ctx: CallContext): Promise<void> => {
    if (!signer || !ctx.principal) return;
    md.set(CALLER_CONTEXT_METADATA, await signer.sign(ctx.principal));
  };
  const cache = new Map<string, unknown>();
  return new Proxy({} as AsyncClient<S> & { close(): void; raw: Client }, {
    get(_t, prop: string) {
      if (prop === 'close') return () => client.close();
      if (prop === 'raw') return client;
      if (prop === 'then') return undefined;
      let fn = cache.get(prop);
      if (!fn) {
        const method = (client as unknown as Record<string, RawUnary>)[prop];
        if (typeof method !== 'function') return undefined;
        const path = (method as unknown as { path?: string }).path ?? prop;
        const [service, rpc] = splitPath(path, prop);
        if ((method as unknown as { responseStream?: boolean }).responseStream) {
          fn = (req: unknown, ctx: CallContext, o?: { deadlineMs?: number }) => {
            const parent = context.active();
            const span = tracer().startSpan(
              `${service}/${rpc}`,
              {
                kind: SpanKind.CLIENT,
                attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': rpc },
              },
              parent,
            );
            const md = contextToMetadata(ctx);
            propagation.inject(trace.setSpan(parent, span), md, headerSetter);
            const end = (err?: unknown) => {
              if (err) markSpanError(span, err);
              span.end();
            };
            const deadline = new Date(Date.now() + (o?.deadlineMs ?? STREAM_DEADLINE_MS));
            // A stream carries the gateway's signed caller context too (a company's statement read
            // through the gateway); a service-level read (no principal) carries none.
            return (async function* () {
              try {
                await withCallerContext(md, ctx);
              } catch (err) {
                end(err);
                throw err;
              }
              const call = (method as unknown as (req: unknown, md: Metadata, opts: CallOptions) => ClientReadableStream<unknown>).call(client, req, md, {
                deadline,
              });
              yield* streamMessages(call, end);
            })();
          };
          cache.set(prop, fn);
          return fn;
        }
        fn = (req: unknown, ctx: CallContext, o?: { deadlineMs?: number }) => {
          // Client span (no-op without a tracer provider); its context travels as traceparent metadata.
          const parent = context.active();
          const span = tracer().startSpan(
            `${service}/${rpc}`,
            {
              kind: SpanKind.CLIENT,
              attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': rpc },
            },
            parent,
          );
          const md = contextToMetadata(ctx);
          propagation.inject(trace.setSpan(parent, span), md, headerSetter);
          return withCallerContext(md, ctx).then(
            () =>
              new Promise((resolve, reject) => {
                const deadline = new Date(Date.now() + (o?.deadlineMs ?? defaultDeadline));
                method.call(client, req, md, { deadline }, (err, res) => {
                  if (err) {
                    const appErr = fromGrpcError(err);
                    span.setAttribute('rpc.grpc.status_code', err.code ?? 2);
                    markSpanError(span, appErr);
                    span.end();
                    reject(appErr);
                  } else {
                    span.setAttribute('rpc.grpc.status_code', 0);
                    span.end();
                    resolve(res);
                  }
                });
              }),
          );
        };
        cache.set(prop, fn);
      }
      return fn;
    },
  });
}

/** `/pkg.Service/Method` → [`pkg.Service`, `Method`] (span names and labels). */
function splitPath(path: string, fallback: string): [string, string] {
  const m = /^\/([^/]+)\/([^/]+)$/.exec(path);
  return m ? [m[1]!, m[2]!] : ['grpc', fallback];
}
