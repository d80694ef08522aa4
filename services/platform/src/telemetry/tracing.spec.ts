import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { inSagaSpan, inSpan, linkActiveSpanToSagaOf } from './tracing.js';

describe('tying later steps to a saga begun in another trace', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const contextManager = new AsyncLocalStorageContextManager();
  const SAGA_TRACE = '0af7651916cd43dd8448eb211c80319c';
  const traceparent = `00-${SAGA_TRACE}-b7ad6b7169203331-01`;

  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(contextManager.enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });
  beforeEach(() => exporter.reset());

  it('links the active span to the stored context and names the saga, reading the saga only when the span is recorded', async () => {
    let reads = 0;
    const load = async () => {
      reads += 1;
      return traceparent;
    };
    await linkActiveSpanToSagaOf(load, { 'wallet.transfer_id': 't-1' }); // no active span: nothing read
    expect(reads).toBe(0);
    await inSpan('resolve exception', {}, () => linkActiveSpanToSagaOf(load, { 'wallet.transfer_id': 't-1', 'wallet.exception_id': 'exc_1' }));
    expect(reads).toBe(1);
    const [span] = exporter.getFinishedSpans();
    expect(span!.attributes).toMatchObject({ 'wallet.transfer_id': 't-1', 'wallet.exception_id': 'exc_1' });
    expect(span!.links.map((l) => l.context.traceId)).toEqual([SAGA_TRACE]);
    expect(span!.spanContext().traceId).not.toBe(SAGA_TRACE);
  });

  it('a sweeper step is a root span of its own, linked to the saga; a missing or malformed context gives no link', async () => {
    await inSpan('some request', {}, () =>
      inSagaSpan('transfer.sweep DISPATCHED', { traceparent, attributes: { 'wallet.transfer_id': 't-2' } }, async () => undefined),
    );
    await inSagaSpan('transfer.sweep RESERVED', { traceparent: 'not-a-traceparent', attributes: { 'wallet.transfer_id': 't-3' } }, async () => undefined);
    const sweep = exporter.getFinishedSpans().filter((s) => s.name.startsWith('transfer.sweep'));
    expect(sweep.map((s) => [s.name, s.parentSpanContext?.spanId, s.links.map((l) => l.context.traceId)])).toEqual([
      ['transfer.sweep DISPATCHED', undefined, [SAGA_TRACE]],
      ['transfer.sweep RESERVED', undefined, []],
    ]);
  });
});
