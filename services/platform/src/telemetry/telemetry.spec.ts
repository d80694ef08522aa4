import { pathForLog } from '../logging/logger.js';
import { batchSettingsOf, otlpProtocolOf, samplerSpecOf } from './telemetry.js';

describe('the standard OpenTelemetry variables, read by the bootstrap', () => {
  it('OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL: http/protobuf by default, http/json on request, anything else refused naming the supported values', () => {
    expect(otlpProtocolOf({})).toBe('http/protobuf');
    expect(otlpProtocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe('http/json');
    expect(otlpProtocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toBe('http/protobuf');
    expect(() => otlpProtocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      'OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use one of http/protobuf, http/json',
    );
    expect(() => otlpProtocolOf({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/xml' })).toThrow(/^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http\/xml/);
  });

  it('OTEL_TRACES_SAMPLER / _ARG: parent-based always-on by default; ratios checked; unknown samplers refused', () => {
    expect(samplerSpecOf({})).toEqual({ parentBased: true, root: 'always_on', ratio: 1 });
    expect(samplerSpecOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.05' })).toEqual({
      parentBased: true,
      root: 'traceidratio',
      ratio: 0.05,
    });
    expect(samplerSpecOf({ OTEL_TRACES_SAMPLER: 'always_off' })).toEqual({ parentBased: false, root: 'always_off', ratio: 1 });
    expect(samplerSpecOf({ OTEL_TRACES_SAMPLER: 'TraceIdRatio', OTEL_TRACES_SAMPLER_ARG: '1' })).toEqual({
      parentBased: false,
      root: 'traceidratio',
      ratio: 1,
    });
    expect(() => samplerSpecOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(/must be a ratio from 0 to 1/);
    expect(() => samplerSpecOf({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(
      /OTEL_TRACES_SAMPLER=jaeger_remote is not supported: use one of parentbased_always_on/,
    );
  });

  it('OTEL_BSP_*: positive whole numbers only', () => {
    expect(batchSettingsOf({})).toEqual({});
    expect(batchSettingsOf({ OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_BSP_MAX_QUEUE_SIZE: '4096' })).toEqual({ scheduledDelayMillis: 200, maxQueueSize: 4096 });
    expect(() => batchSettingsOf({ OTEL_BSP_EXPORT_TIMEOUT: '-1' })).toThrow('OTEL_BSP_EXPORT_TIMEOUT=-1 must be a positive whole number');
  });

  it('paths on spans: phone and document numbers and e-mails masked as the logs mask them; ids kept', () => {
    expect(pathForLog('/breb/directory/registrations/3001234567')).toBe('/breb/directory/registrations/******4567');
    expect(pathForLog('/keys/ana%40correo.com')).toBe('/keys/a***@correo.com');
    expect(pathForLog('/transfers/0198f5c2-6a1e-7c3b-9d2e-1f2a3b4c5d6e/status')).toBe('/transfers/0198f5c2-6a1e-7c3b-9d2e-1f2a3b4c5d6e/status');
  });
});
