/**
 * OpenTelemetry bootstrap, loaded before the app with `node --import @wallet/platform/otel`.
 * Tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set; otherwise nothing
 * is started and the hot path pays nothing. W3C trace context crosses HTTP, gRPC and NATS headers.
 */
import { startTelemetry } from './telemetry.js';

await startTelemetry(process.env);
