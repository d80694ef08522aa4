import {
  Server, ServerCredentials, type handleUnaryCall, type ServiceDefinition, type UntypedServiceImplementation,
  type ServerUnaryCall, type sendUnaryData,
} from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { Histogram } from 'prom-client';
import { AppError } from '../errors/catalogue.js';
import { toGrpcError } from '../errors/grpc.js';
import { contextFromMetadata, type CallContext } from './context.js';
import { metricsRegistry } from '../ops/metrics.js';

/** A handler written as an async function of the request and the caller's context. */
export type AsyncUnary<Req, Res> = (req: Req, ctx: CallContext) => Promise<Res>;
/** One async handler per RPC of a generated `<Name>Server` (its string index signature is dropped). */
export type AsyncService<S> = {
  [K in keyof S as string extends K ? never : K]: S[K] extends handleUnaryCall<infer Req, infer Res> ? AsyncUnary<Req, Res> : never;
};

const grpcDuration = new Histogram({
  name: 'grpc_server_handling_seconds',
  help: 'gRPC unary handling time',
  labelNames: ['method', 'code'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [metricsRegistry],
});

/** Adapts async handlers to grpc-js: context from metadata, errors mapped once, every call timed. */
export function asyncService<S extends UntypedServiceImplementation>(impl: AsyncService<S>, log: Logger): S {
  const out: Record<string, handleUnaryCall<unknown, unknown>> = {};
  for (const [name, fn] of Object.entries(impl as Record<string, AsyncUnary<unknown, unknown>>)) {
    out[name] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const ctx = contextFromMetadata(call.metadata);
      const end = grpcDuration.startTimer({ method: name });
      fn(call.request, ctx).then(
        (res) => { end({ code: 'OK' }); callback(null, res); },
        (err: unknown) => {
          if (err instanceof AppError) {
            end({ code: err.code });
          } else {
            end({ code: 'INTERNAL_ERROR' });
            log.error({ err, method: name, requestId: ctx.requestId }, 'unhandled error in gRPC handler');
          }
          callback(toGrpcError(err) as never, null);
        },
      );
    };
  }
  return out as S;
}

export interface GrpcServerHandle {
  server: Server;
  port: number;
  /** Stops taking calls, waits for in-flight ones up to `graceMs`, then forces. */
  stop(graceMs?: number): Promise<void>;
}

export async function startGrpcServer(
  host: string, port: number,
  services: Array<{ definition: ServiceDefinition; implementation: UntypedServiceImplementation }>,
): Promise<GrpcServerHandle> {
  const server = new Server({ 'grpc.max_receive_message_length': 4 * 1024 * 1024, 'grpc.keepalive_permit_without_calls': 1 });
  for (const s of services) server.addService(s.definition, s.implementation);
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return {
    server,
    port: bound,
    stop: (graceMs = 10_000) => new Promise<void>((resolve) => {
      const timer = setTimeout(() => { server.forceShutdown(); resolve(); }, graceMs);
      timer.unref();
      server.tryShutdown(() => { clearTimeout(timer); resolve(); });
    }),
  };
}
