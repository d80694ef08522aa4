import type { NodeSDK } from '@opentelemetry/sdk-node';
import { context, propagation, trace } from '@opentelemetry/api';

let sdk: NodeSDK | undefined;

export async function startTelemetry(envVars: Record<string, string | undefined>): Promise<boolean> {
  const endpoint = envVars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? envVars.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || envVars.OTEL_SDK_DISABLED === 'true' || sdk) return false;
  // gRPC, Koa routes and NATS get explicit spans in the platform wrappers (telemetry/tracing.ts), so
  // only the libraries below are auto-instrumented (no duplicate gRPC/Koa spans).
  const [{ NodeSDK: SDK }, { OTLPTraceExporter }, { HttpInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/exporter-trace-otlp-proto'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-ioredis'),
    ]);
  sdk = new SDK({
    serviceName: envVars.OTEL_SERVICE_NAME ?? 'wallet',
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      // Probes and scrapes are not traced.
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => /^\/(healthz|readyz|metrics)\b/.test(req.url ?? '') }),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
  return true;
}

/** Flushes spans at shutdown; a missing collector must not crash the exit (TOOLCHAIN note). */
export async function stopTelemetry(): Promise<void> {
  if (!sdk) return;
  // Bounded: an unreachable collector must not eat the shutdown grace period.
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, 3_000).unref());
  try { await Promise.race([sdk.shutdown(), timeout]); } catch { /* collector unreachable: nothing to flush to */ }
  sdk = undefined;
}

/** The active W3C traceparent, to store with an outbox row. */
export function currentTraceparent(): string | undefined {
  if (!trace.getActiveSpan()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}
