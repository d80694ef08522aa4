import type { NodeSDK } from '@opentelemetry/sdk-node';
import { context, propagation, trace } from '@opentelemetry/api';

let sdk: NodeSDK | undefined;

export async function startTelemetry(envVars: Record<string, string | undefined>): Promise<boolean> {
  const endpoint = envVars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? envVars.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || envVars.OTEL_SDK_DISABLED === 'true' || sdk) return false;
  const [{ NodeSDK: SDK }, { OTLPTraceExporter }, { HttpInstrumentation }, { GrpcInstrumentation }, { KoaInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/exporter-trace-otlp-proto'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-grpc'),
      import('@opentelemetry/instrumentation-koa'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-ioredis'),
    ]);
  sdk = new SDK({
    serviceName: envVars.OTEL_SERVICE_NAME ?? 'wallet',
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [new HttpInstrumentation(), new GrpcInstrumentation(), new KoaInstrumentation(), new PgInstrumentation(), new IORedisInstrumentation()],
  });
  sdk.start();
  return true;
}

/** Flushes spans at shutdown; a missing collector must not crash the exit (TOOLCHAIN note). */
export async function stopTelemetry(): Promise<void> {
  if (!sdk) return;
  try { await sdk.shutdown(); } catch { /* collector unreachable: nothing to flush to */ }
  sdk = undefined;
}

/** The active W3C traceparent, to store with an outbox row. */
export function currentTraceparent(): string | undefined {
  if (!trace.getActiveSpan()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}
