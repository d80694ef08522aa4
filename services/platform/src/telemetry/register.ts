/**
 * OpenTelemetry bootstrap, loaded before the app with `node --import @wallet/platform/otel`.
 * Tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set; otherwise nothing
 * is started and the hot path pays nothing. W3C trace context crosses HTTP, gRPC and NATS headers.
 * A tracing variable it cannot honour (an unsupported protocol or sampler) stops the process at
 * start-up with one log line naming the supported values, rather than running untraced unnoticed.
 */
import { startTelemetry } from './telemetry.js';

try {
  await startTelemetry(process.env);
} catch (err) {
  process.stderr.write(`${JSON.stringify({ level: 60, time: Date.now(), msg: `telemetry not started: ${(err as Error).message}` })}\n`);
  process.exit(78); // EX_CONFIG
}
