import { context, propagation, trace } from '@opentelemetry/api';
import type { Sampler, TracerProvider } from '@opentelemetry/sdk-trace';
import { pathForLog } from '../logging/logger.js';

let provider: TracerProvider | undefined;

/** The OTLP protocols this bootstrap exports with (`OTEL_EXPORTER_OTLP_PROTOCOL`), the first the default. */
export const SUPPORTED_OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof SUPPORTED_OTLP_PROTOCOLS)[number];

/**
 * `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`.
 * `grpc` is refused: its exporter (and the second copy of the OTLP packages it pins) is not shipped;
 * a collector takes both HTTP encodings on its HTTP port (4318).
 */
export function otlpProtocolOf(envVars: Record<string, string | undefined>): OtlpProtocol {
  const raw = (envVars.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? envVars.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim();
  if (raw === '') return 'http/protobuf';
  if ((SUPPORTED_OTLP_PROTOCOLS as readonly string[]).includes(raw)) return raw as OtlpProtocol;
  const name = envVars.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  throw new Error(`${name}=${raw} is not supported: use one of ${SUPPORTED_OTLP_PROTOCOLS.join(', ')} (a collector receives both on its OTLP/HTTP port, 4318)`);
}

export const SUPPORTED_SAMPLERS = [
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
] as const;

/** What `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` ask for (the SDK this bootstrap assembles reads no environment itself). */
export function samplerSpecOf(envVars: Record<string, string | undefined>): {
  parentBased: boolean;
  root: 'always_on' | 'always_off' | 'traceidratio';
  ratio: number;
} {
  const name = (envVars.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() || 'parentbased_always_on';
  if (!(SUPPORTED_SAMPLERS as readonly string[]).includes(name)) {
    throw new Error(`OTEL_TRACES_SAMPLER=${envVars.OTEL_TRACES_SAMPLER} is not supported: use one of ${SUPPORTED_SAMPLERS.join(', ')}`);
  }
  const argRaw = envVars.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = argRaw === undefined || argRaw === '' ? 1 : Number(argRaw);
  if (name.endsWith('traceidratio') && !(Number.isFinite(ratio) && ratio >= 0 && ratio <= 1)) {
    throw new Error(`OTEL_TRACES_SAMPLER_ARG=${argRaw} must be a ratio from 0 to 1 for ${name}`);
  }
  const parentBased = name.startsWith('parentbased_');
  return { parentBased, root: (parentBased ? name.slice('parentbased_'.length) : name) as 'always_on' | 'always_off' | 'traceidratio', ratio };
}

const BSP_VARIABLES = {
  OTEL_BSP_SCHEDULE_DELAY: 'scheduledDelayMillis',
  OTEL_BSP_EXPORT_TIMEOUT: 'exportTimeoutMillis',
  OTEL_BSP_MAX_QUEUE_SIZE: 'maxQueueSize',
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 'maxExportBatchSize',
} as const;

/** The batch span processor's settings from the standard `OTEL_BSP_*` variables (the SDK's defaults for those unset). */
export function batchSettingsOf(envVars: Record<string, string | undefined>): Partial<Record<(typeof BSP_VARIABLES)[keyof typeof BSP_VARIABLES], number>> {
  const out: Partial<Record<(typeof BSP_VARIABLES)[keyof typeof BSP_VARIABLES], number>> = {};
  for (const [name, option] of Object.entries(BSP_VARIABLES)) {
    const raw = envVars[name]?.trim();
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name}=${raw} must be a positive whole number`);
    out[option] = n;
  }
  return out;
}

/**
 * Traces only, exported over OTLP/HTTP in batches: the pieces of the OpenTelemetry SDK this needs,
 * assembled here rather than through `@opentelemetry/sdk-node`, whose NodeSDK also brings the OTLP
 * exporters of metrics and logs in three protocols each, Zipkin, Prometheus and B3 (about 37 MB of
 * every image, none of it used). The SDK pieces read no environment, so the standard variables are
 * read here: OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL,
 * OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_*, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED. A value
 * it cannot honour stops the start with a message naming the supported ones.
 */
export async function startTelemetry(envVars: Record<string, string | undefined>): Promise<boolean> {
  const endpoint = envVars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? envVars.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || envVars.OTEL_SDK_DISABLED === 'true' || provider) return false;
  const protocol = otlpProtocolOf(envVars);
  const samplerSpec = samplerSpecOf(envVars);
  const batch = batchSettingsOf(envVars);
  // ioredis is imported as an ES module by the gateway, which require hooks never see: the
  // import-in-the-middle loader, limited to the modules instrumented below that need it, lets the
  // instrumentation patch it. In-thread (module.registerHooks) where this Node has it, else the
  // loader thread; registered before the app's own imports are resolved (this runs under --import).
  await registerEsmHook(['ioredis']);
  const [
    sdk,
    { OTLPExporterBase },
    { convertLegacyHttpOptions, createOtlpHttpExportDelegate },
    { JsonTraceSerializer, ProtobufTraceSerializer, TraceExporterMetricsHelper },
    { registerInstrumentations },
    { AsyncLocalStorageContextManager },
    { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator },
    { defaultResource, detectResources, envDetector, hostDetector, osDetector, processDetector, resourceFromAttributes, serviceInstanceIdDetector },
    { HttpInstrumentation },
    { UndiciInstrumentation },
    { PgInstrumentation },
    { IORedisInstrumentation },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/otlp-exporter-base'),
    import('@opentelemetry/otlp-exporter-base/node-http'),
    import('@opentelemetry/otlp-transformer'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);
  // As NodeSDK set them up: its default resource detectors (service instance, process, host, OS,
  // OTEL_RESOURCE_ATTRIBUTES), the service name, W3C trace context and baggage, AsyncLocalStorage
  // for the active context.
  const resource = defaultResource()
    .merge(detectResources({ detectors: [serviceInstanceIdDetector, processDetector, hostDetector, osDetector, envDetector] }))
    .merge(resourceFromAttributes({ 'service.name': envVars.OTEL_SERVICE_NAME ?? 'wallet' }));
  // The OTLP/HTTP trace exporter of @opentelemetry/exporter-trace-otlp-proto (or -http for JSON):
  // the same delegate with the serializer and content type of the protocol. Endpoint, headers and
  // time-out come from the OTEL_EXPORTER_OTLP_* variables, read by the delegate.
  const [serializer, contentType] = protocol === 'http/json' ? [JsonTraceSerializer, 'application/json'] : [ProtobufTraceSerializer, 'application/x-protobuf'];
  const exporter = new OTLPExporterBase(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': contentType }),
      serializer,
      'otlp_http_span_exporter',
      TraceExporterMetricsHelper,
      undefined,
    ),
  );
  const root: Sampler =
    samplerSpec.root === 'always_on'
      ? new sdk.AlwaysOnSampler()
      : samplerSpec.root === 'always_off'
        ? new sdk.AlwaysOffSampler()
        : new sdk.TraceIdRatioBasedSampler(samplerSpec.ratio);
  const sampler = samplerSpec.parentBased ? new sdk.ParentBasedSampler({ root }) : root;
  provider = new sdk.TracerProvider({ resource, sampler, spanProcessors: [new sdk.BatchSpanProcessor({ exporter, ...batch })] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(provider);
  // gRPC, Koa routes and NATS get explicit spans in the platform wrappers (telemetry/tracing.ts), so
  // only the libraries below are auto-instrumented (no duplicate gRPC/Koa spans). Postgres and Redis
  // spans only inside a span: the pollers' idle reads (outbox relays, sweepers, workers: dozens a
  // second on an idle stack) start no trace; a poll that finds work starts its own span.
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes are not traced.
        ignoreIncomingRequestHook: (req) => /^\/(healthz|readyz|metrics)\b/.test(req.url ?? ''),
        // The path as the logs would show it (the gateway's request span refines it with its route).
        startIncomingSpanHook: (req) => ({ 'url.path': pathForLog((req.url ?? '/').split('?')[0]!) }),
      }),
      // undici.request and the global fetch (both report through diagnostics_channel, so ES modules
      // need no loader hook): a CLIENT span per provider call, its context sent as `traceparent`.
      new UndiciInstrumentation({
        startSpanHook: (req) => {
          // The path masked as the logs mask it; a query string is not recorded (it may hold the same).
          const cut = req.path.indexOf('?');
          const path = pathForLog(cut < 0 ? req.path : req.path.slice(0, cut));
          const query = cut < 0 ? {} : { 'url.query': 'REDACTED' };
          return { 'url.full': `${req.origin}${path}${cut < 0 ? '' : '?REDACTED'}`, 'url.path': path, ...query };
        },
      }),
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  return true;
}

/**
 * Registers the import-in-the-middle loader for `modules` only (every other import stays untouched).
 * In-thread where this Node supports synchronous hooks (22.22.3+), else on the loader thread.
 */
async function registerEsmHook(modules: string[]): Promise<void> {
  const hooks = (await import('import-in-the-middle/register-hooks.mjs')) as {
    register(opts: { include: string[] }): void;
    supportsSyncHooks(): boolean;
  };
  if (hooks.supportsSyncHooks()) {
    hooks.register({ include: modules });
    return;
  }
  const { register } = await import('node:module');
  register('import-in-the-middle/hook.mjs', import.meta.url, { data: { include: modules } });
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
