import { context, propagation, trace } from '@opentelemetry/api';
import type { TracerProvider } from '@opentelemetry/sdk-trace';

let provider: TracerProvider | undefined;

/**
 * Traces only, exported over OTLP (protobuf over HTTP) in batches: the pieces of the OpenTelemetry
 * SDK this needs, assembled here rather than through `@opentelemetry/sdk-node`, whose NodeSDK also
 * brings the OTLP exporters of metrics and logs in three protocols each, Zipkin, Prometheus and B3
 * (about 37 MB of every image, none of it used).
 */
export async function startTelemetry(envVars: Record<string, string | undefined>): Promise<boolean> {
  const endpoint = envVars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? envVars.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || envVars.OTEL_SDK_DISABLED === 'true' || provider) return false;
  const [
    { TracerProvider: Provider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { registerInstrumentations },
    { AsyncLocalStorageContextManager },
    { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator },
    { defaultResource, detectResources, envDetector, hostDetector, osDetector, processDetector, resourceFromAttributes, serviceInstanceIdDetector },
    { HttpInstrumentation },
    { PgInstrumentation },
    { IORedisInstrumentation },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-proto'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);
  // As NodeSDK set them up: its default resource detectors (service instance, process, host, OS,
  // OTEL_RESOURCE_ATTRIBUTES), the service name, W3C trace context and baggage, AsyncLocalStorage
  // for the active context.
  const resource = defaultResource()
    .merge(detectResources({ detectors: [serviceInstanceIdDetector, processDetector, hostDetector, osDetector, envDetector] }))
    .merge(resourceFromAttributes({ 'service.name': envVars.OTEL_SERVICE_NAME ?? 'wallet' }));
  provider = new Provider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(provider);
  // gRPC, Koa routes and NATS get explicit spans in the platform wrappers (telemetry/tracing.ts), so
  // only the libraries below are auto-instrumented (no duplicate gRPC/Koa spans).
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // Probes and scrapes are not traced.
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => /^\/(healthz|readyz|metrics)\b/.test(req.url ?? '') }),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
    ],
  });
  return true;
}

/** Flushes spans at shutdown; a missing collector must not crash the exit (TOOLCHAIN note). */
export async function stopTelemetry(): Promise<void> {
  if (!provider) return;
  // Bounded: an unreachable collector must not eat the shutdown grace period.
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, 3_000).unref());
  try {
    await Promise.race([provider.shutdown(), timeout]);
  } catch {
    /* collector unreachable: nothing to flush to */
  }
  provider = undefined;
}

/** The active W3C traceparent, to store with an outbox row. */
export function currentTraceparent(): string | undefined {
  if (!trace.getActiveSpan()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}
