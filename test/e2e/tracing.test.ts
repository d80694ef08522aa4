import { randomBytes } from 'node:crypto';
import { context, propagation, trace, SpanKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { eventually } from '@wallet/platform/testing';
import pg from 'pg';
import { SANDBOX_ACH_ACCOUNT } from '../support/fixtures.js';
import { NATS_URL, startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * One trace from the HTTP request to the consumer of the event it caused: gateway (HTTP server span)
 * → transfer (gRPC client + server) → ledger (gRPC client + server) → outbox relay (NATS publish, the
 * `traceparent` header) → receipt's durable consumer. The platform's explicit spans, recorded by an
 * in-memory exporter (no `--import` hook: Jest's VM modules are not auto-instrumented).
 */
describe('tracing end to end', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;

  beforeAll(async () => {
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(contextManager);
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    stack = await startStack({ transfers: true, receipts: true });
    co = await stack.provision('Trazas S.A.S.', { taxRegime: 'COMMON' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 10_000_000, reference: 'seed-trace' });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  const ofTrace = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
  const one = (spans: ReadableSpan[], what: string, pred: (s: ReadableSpan) => boolean): ReadableSpan => {
    const found = spans.filter(pred);
    if (found.length !== 1)
      throw new Error(`${what}: expected one span, found ${found.length}: ${spans.map((s) => `${s.name}[${SpanKind[s.kind]}]`).join(', ')}`);
    return found[0]!;
  };

  it('one trace id from the HTTP request through gRPC and NATS to the receipt consumer, with parent links', async () => {
    // The caller's own trace: the gateway continues it.
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const send = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
      body: {
        amount: 250_000,
        description: 'Traza',
        destination: {
          bankAccount: {
            bankId: 1,
            accountTypeId: 20,
            accountNumber: '12345678901',
            documentTypeId: 1,
            documentNumber: '1020304050',
            holderFirstName: 'Ana',
            holderLastName: 'Pérez',
          },
        },
      },
    });
    expect(send.status).toBe(201);

    // The receipt service's consumer span for transfer.created arrives asynchronously.
    const spans = await eventually(
      async () => {
        const s = ofTrace(traceId);
        return s.some(
          (x) => x.kind === SpanKind.CONSUMER && x.name === 'transfer.created process' && x.attributes['messaging.consumer.group.name'] === 'receipt-transfers',
        )
          ? s
          : undefined;
      },
      20_000,
      100,
    );

    const gateway = one(spans, 'gateway HTTP span', (s) => s.kind === SpanKind.SERVER && s.name === 'POST /transfers/send');
    expect(parentOf(gateway)).toBe(callerSpanId);
    expect(gateway.attributes['http.route']).toBe('/transfers/send');
    expect(gateway.attributes['http.response.status_code']).toBe(201);

    const isRpc = (kind: SpanKind, service: string, method?: string) => (s: ReadableSpan) =>
      s.kind === kind && s.attributes['rpc.service'] === service && (method === undefined || s.attributes['rpc.method'] === method);
    const transferClient = one(spans, 'gateway → transfer client span', isRpc(SpanKind.CLIENT, 'wallet.transfer.v1.TransferService', 'Send'));
    expect(parentOf(transferClient)).toBe(gateway.spanContext().spanId);
    const transferServer = one(spans, 'transfer server span', isRpc(SpanKind.SERVER, 'wallet.transfer.v1.TransferService', 'Send'));
    expect(parentOf(transferServer)).toBe(transferClient.spanContext().spanId);

    // The transfer service reserves the amount in the ledger within the same call.
    const ledgerClients = spans
      .filter(isRpc(SpanKind.CLIENT, 'wallet.ledger.v1.LedgerService'))
      .filter((s) => parentOf(s) === transferServer.spanContext().spanId);
    expect(ledgerClients.length).toBeGreaterThan(0);
    for (const lc of ledgerClients) {
      const ls = one(spans, `ledger server span of ${lc.name}`, (s) => s.kind === SpanKind.SERVER && parentOf(s) === lc.spanContext().spanId);
      expect(ls.attributes['rpc.service']).toBe('wallet.ledger.v1.LedgerService');
    }

    // The outbox row written in the transfer call is published as a child of that call …
    const publish = one(spans, 'NATS publish span', (s) => s.kind === SpanKind.PRODUCER && s.name === 'transfer.created publish');
    expect(parentOf(publish)).toBe(transferServer.spanContext().spanId);
    expect(publish.attributes['messaging.system']).toBe('nats');
    // … and the receipt consumer continues from the publish span's traceparent header.
    const consumer = one(
      spans,
      'receipt consumer span',
      (s) => s.kind === SpanKind.CONSUMER && s.name === 'transfer.created process' && s.attributes['messaging.consumer.group.name'] === 'receipt-transfers',
    );
    expect(parentOf(consumer)).toBe(publish.spanContext().spanId);
    expect(consumer.attributes['messaging.message.id']).toBe(publish.attributes['messaging.message.id']);

    // No span of this send started a trace of its own (the only Send calls recorded are in this trace).
    const sendSpans = exporter.getFinishedSpans().filter((s) => s.attributes['rpc.method'] === 'Send' || s.name.startsWith('transfer.created'));
    expect(new Set(sendSpans.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));

    // The message on the stream carries the W3C header of the publish span.
    const nc = await connect({ servers: NATS_URL });
    try {
      const jsm = await jetstreamManager(nc);
      const msg = await jsm.streams.getMessage(`${stack.namespace.toUpperCase()}_TRANSFERS`, { last_by_subj: `${stack.namespace}.transfer.created` });
      expect(msg?.header.get('ce-id')).toBe(publish.attributes['messaging.message.id']);
      expect(msg?.header.get('traceparent')).toBe(`00-${traceId}-${publish.spanContext().spanId}-01`);
    } finally {
      await nc.close();
    }
  });

  it("a bulk payout's transfers continue the trace of the execution that made them (each saga stores it)", async () => {
    const createTrace = randomBytes(16).toString('hex');
    const executeTrace = randomBytes(16).toString('hex');
    const traced = (t: string) => ({ traceparent: `00-${t}-${randomBytes(8).toString('hex')}-01` });
    const item = (reference: string) => ({ amount: 100_000, destination: { bankAccount: { ...SANDBOX_ACH_ACCOUNT } }, reference });
    const created = await stack.http('POST', '/transfers/batches', {
      token: co.writeKey,
      headers: traced(createTrace),
      body: { reference: 'LOTE-TRAZA', items: [item('TR-1'), item('TR-2')] },
    });
    expect(created.status).toBe(201);
    const executed = await stack.http('POST', `/transfers/batches/${created.body.id}/execute`, { token: co.writeKey, headers: traced(executeTrace) });
    expect(executed.status).toBe(202);
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const stored = async () =>
        (await db.query<{ traceparent: string | null }>('select traceparent from transfer.transfers where batch_id = $1', [created.body.id])).rows;
      const rows = await eventually(async () => ((await stored()).length === 2 ? stored() : undefined), 20_000, 100);
      expect(rows.map((r) => r.traceparent?.split('-')[1])).toEqual([executeTrace, executeTrace]);
      const batch = await db.query<{ traceparent: string }>('select traceparent from transfer.batches where id = $1', [created.body.id]);
      expect(batch.rows[0]!.traceparent.split('-')[1]).toBe(createTrace);
    } finally {
      await db.end();
    }
  });

  it('spans and trace headers cost nothing when tracing is off: no provider, no traceparent on new messages', async () => {
    trace.disable();
    propagation.disable();
    // A span started before this point (a consumer still finishing the previous test's events) may
    // end, and be exported, after it; none may start after it.
    const offAt = Date.now();
    exporter.reset();
    const send = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      headers: { traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01` },
      body: {
        amount: 150_000,
        description: 'Sin traza',
        destination: {
          bankAccount: {
            bankId: 1,
            accountTypeId: 20,
            accountNumber: '12345678901',
            documentTypeId: 1,
            documentNumber: '1020304050',
            holderFirstName: 'Ana',
            holderLastName: 'Pérez',
          },
        },
      },
    });
    expect(send.status).toBe(201);
    const nc = await connect({ servers: NATS_URL });
    try {
      const jsm = await jetstreamManager(nc);
      const msg = await eventually(
        async () => {
          const m = await jsm.streams.getMessage(`${stack.namespace.toUpperCase()}_TRANSFERS`, { last_by_subj: `${stack.namespace}.transfer.created` });
          return m && JSON.parse(new TextDecoder().decode(m.data)).transferId === send.body.id ? m : undefined;
        },
        15_000,
        100,
      );
      expect(msg.header.get('traceparent')).toBe('');
    } finally {
      await nc.close();
    }
    const startedAfter = exporter.getFinishedSpans().filter((sp) => sp.startTime[0] * 1000 + sp.startTime[1] / 1e6 >= offAt);
    expect(startedAfter.map((sp) => sp.name)).toEqual([]);
  });
});
