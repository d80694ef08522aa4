import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';

export interface RecordedSpans {
  /** The spans ended so far. */
  finished(): ReadableSpan[];
  reset(): void;
  /** Unregisters the provider, the context manager and the propagator. */
  stop(): Promise<void>;
}

/**
 * Records this process's spans in memory (the global provider, AsyncLocalStorage context, W3C
 * propagation), for a test of what a service's code puts on its spans (names, attributes, links).
 */
export function recordSpans(): RecordedSpans {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    finished: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    async stop() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
