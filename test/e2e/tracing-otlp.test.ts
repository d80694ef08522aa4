import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@wallet/platform/testing';
import { startOtlpReceiver, spanTree, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startProcessStack, type ProcessStack } from '../support/process-stack.js';
import { PSE_PAYER } from '../support/fixtures.js';

/**
 * Tracing as it runs: every process `npm run up` starts, with the product's real start-up
 * (`--import @wallet/platform/otel`), exporting to a plain OTLP/HTTP receiver in this test with
 * `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`. One Bre-B send through the gateway to COMPLETED (the
 * sandbox rail confirms it by calling the gateway back) is one trace, joined by span links and
 * `wallet.transfer_id` where the saga resumes in another trace (the rail's callback): gateway,
 * transfer, ledger, the rail's HTTP call (its `traceparent` seen by the sandbox), Redis, the
 * receipt and webhook consumers. An idle stack exports nothing from its pollers. A PSE payment too.
 *
 * (test/e2e/tracing.test.ts checks the platform's explicit spans inside one Jest process; this one
 * what only the real processes show: the loader hooks, the exporter and its settings.)
 */
describe('tracing through the real processes, to an OTLP receiver', () => {
  let rx: OtlpReceiver;
  let stack: ProcessStack;
  let hooks: http.Server;
  let hookUrl = '';
  const hookBodies: { id: string; body: string }[] = [];
  let writeKey = '';
  let companyId = '';

  const gw = async (method: string, path: string, o: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const res = await fetch(`${stack.gatewayUrl}${path}`, {
      method,
      headers: {
        ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
        ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...o.headers,
      },
      ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const admin = (method: string, path: string, body?: unknown) => gw(method, path, { token: stack.adminToken, body });

  beforeAll(async () => {
    rx = await startOtlpReceiver();
    hooks = http.createServer((req, res) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        hookBodies.push({ id: String(req.headers['webhook-id'] ?? ''), body: b });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
    stack = await startProcessStack({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'parentbased_always_on',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      },
      // The transfer process exports last, so its spans arrive after those of the consumers of the
      // events it published: the checks must not depend on the order processes export in.
      envOf: { transfer: { OTEL_BSP_SCHEDULE_DELAY: '1000' } },
    });
    const co = await admin('POST', '/admin/companies', { name: 'Trazas Reales S.A.S.', nit: '900777888-1', taxRegime: 'COMMON', wallets: ['BREB', 'ACH'] });
    expect(co.status).toBe(201);
    companyId = co.body.id;
    writeKey = (await admin('POST', `/admin/companies/${companyId}/api-keys`, { scope: 'WRITE', label: 'trace' })).body.key;
    expect((await admin('POST', `/admin/companies/${companyId}/wallets/BREB/credit`, { amountCents: 10_000_000, reference: 'seed-trace' })).status).toBe(201);
    expect((await gw('POST', '/webhooks/endpoints', { token: writeKey, body: { url: hookUrl, events: ['transfer.completed'] } })).status).toBe(201);
    // The processes start one after another, each given 60 s to be ready (support/process-stack.ts):
    // beside the rest of the suite on 2 cores the whole start took past 120 s (CI, 2026-11-30).
  }, 600_000);

  afterAll(async () => {
    // E2E_TRACE_DUMP=<file>: every span received, as JSON lines, to look at a failure.
    if (process.env.E2E_TRACE_DUMP && rx)
      writeFileSync(
        process.env.E2E_TRACE_DUMP,
        rx
          .spans()
          .map((s) => JSON.stringify({ ...s, startNs: String(s.startNs) }))
          .join('\n'),
      );
    await stack?.stop();
    await rx?.close();
    hooks?.closeAllConnections();
    await new Promise((r) => hooks?.close(r));
  });

  const traceOf = (traceId: string) => rx.spans().filter((s) => s.traceId === traceId);
  const describeSpans = (spans: ReceivedSpan[]) => spans.map((s) => `${s.service} ${s.name} [${s.kind}]`).join('\n');
  /** The one span matching, with the spans looked at in the message when there is none or several. */
  const one = (spans: ReceivedSpan[], what: string, pred: (s: ReceivedSpan) => boolean): ReceivedSpan => {
    const found = spans.filter(pred);
    if (found.length !== 1) throw new Error(`${what}: expected one span, found ${found.length} among:\n${describeSpans(spans)}`);
    return found[0]!;
  };
  const some = (spans: ReceivedSpan[], what: string, pred: (s: ReceivedSpan) => boolean): ReceivedSpan[] => {
    const found = spans.filter(pred);
    if (found.length === 0) throw new Error(`${what}: no such span among:\n${describeSpans(spans)}`);
    return found;
  };
  const childOf = (parent: ReceivedSpan) => (s: ReceivedSpan) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId;
  const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
  /** Waits until `pred` holds over what was received (the processes export in batches, OTEL_BSP_SCHEDULE_DELAY apart). */
  const received = <T>(what: () => T | undefined) => eventually(async () => what(), 20_000, 100);
  /**
   * Runs `check` until it passes, and its last failure when it never does. Each process exports on
   * its own timer, so a span that ended first may arrive last: a consumer's span can be received
   * before the span of the request that published the event (CI, 2026-12-01: the transfer's Send
   * span after the consumers of transfer.dispatched).
   */
  const settled = async <T>(check: () => T): Promise<T> => {
    const until = Date.now() + 20_000;
    for (;;) {
      try {
        return check();
      } catch (e) {
        if (Date.now() > until) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  it('one Bre-B send is one trace, linked where the saga resumes (the rail callback), with the rail call, Redis and the consumers', async () => {
    const resolved = await gw('POST', '/transfers/resolve-key', { token: writeKey, body: { keyValue: '3001234567' } });
    expect(resolved.status).toBe(200);
    const send = await gw('POST', '/transfers/send', {
      token: writeKey,
      body: {
        amount: 120_000,
        destination: { brebKey: { type: resolved.body.keyType, value: resolved.body.keyValue } },
        targetName: resolved.body.recipient.fullName,
        targetDocument: resolved.body.recipient.idValue,
      },
    });
    expect(send.status).toBe(201);
    const transferId: string = send.body.id;
    // The sandbox rail completes it by calling the gateway back.
    const done = await eventually(
      async () => {
        const r = await gw('GET', `/wallets/transactions/${transferId}`, { token: writeKey });
        return r.body?.status === 'COMPLETED' ? r : undefined;
      },
      20_000,
      100,
    );
    expect(done.body.status).toBe('COMPLETED');
    const delivered = await eventually(async () => hookBodies.find((h) => h.body.includes(transferId) && h.body.includes('transfer.completed')), 20_000, 100);

    // --- The send's trace: the request, gRPC, ledger, Redis, the rail call, the consumers of the events it wrote.
    const sendRoot = await received(() => rx.spans().find((s) => s.service === 'gateway' && s.kind === 'SERVER' && s.name === 'POST /transfers/send'));
    // Every span the send's trace should hold, waited for as one: the processes export apart.
    const { send1, redis, reserve, railCall } = await settled(() => {
      const send1 = traceOf(sendRoot.traceId);
      // Redis (the rate limit, ioredis imported as an ES module) inside the request.
      const redis = some(send1, 'Redis span', (s) => s.service === 'gateway' && s.kind === 'CLIENT' && s.scope.includes('ioredis'));
      const rpcClient = one(
        send1,
        'gateway → transfer',
        (s) => s.service === 'gateway' && s.kind === 'CLIENT' && s.name === 'wallet.transfer.v1.TransferService/Send',
      );
      const rpcServer = one(send1, 'transfer Send', (s) => s.service === 'transfer' && s.kind === 'SERVER' && childOf(rpcClient)(s));
      const reserve = one(send1, 'ledger Reserve', (s) => s.service === 'ledger' && s.kind === 'SERVER' && s.name === 'wallet.ledger.v1.LedgerService/Reserve');
      // The rail call: a CLIENT span of undici's instrumentation, whose traceparent the sandbox continued.
      const railCall = one(
        send1,
        'transfer → rail (POST)',
        (s) =>
          s.service === 'transfer' &&
          s.kind === 'CLIENT' &&
          s.scope.includes('undici') &&
          s.attributes['http.request.method'] === 'POST' &&
          childOf(rpcServer)(s),
      );
      one(send1, 'the rail (sandbox) continuing the traceparent', (s) => s.service === 'sandbox' && s.kind === 'SERVER' && childOf(railCall)(s));
      // The events the send wrote, published from its outbox and consumed by receipt and webhook in the same trace.
      for (const subject of ['transfer.created', 'transfer.dispatched']) {
        const publish = one(send1, `${subject} publish`, (s) => s.kind === 'PRODUCER' && s.name === `${subject} publish`);
        for (const svc of ['receipt', 'webhook'])
          one(send1, `${svc} consumer of ${subject}`, (s) => s.service === svc && s.kind === 'CONSUMER' && childOf(publish)(s));
      }
      return { send1, redis, reserve, railCall };
    });
    expect(sendRoot.parentSpanId).toBe('');
    // One server span per request, named by its route, with the path as the access log shows it.
    expect(send1.filter((s) => s.service === 'gateway' && s.kind === 'SERVER')).toHaveLength(1);
    expect(sendRoot.attributes['http.route']).toBe('/transfers/send');
    expect(sendRoot.attributes['url.path']).toBe('/transfers/send');
    expect(sendRoot.attributes['http.response.status_code']).toBe(201);
    expect(redis.every((s) => s.traceId === sendRoot.traceId)).toBe(true);
    expect(send1.find((s) => s.spanId === reserve.parentSpanId)?.service).toBe('transfer');
    expect(String(railCall.attributes['url.full'])).toContain(stack.sandboxUrl);

    // --- The rail's callback: a trace of its own (the provider's request), linked to the send's.
    const callback = await received(() =>
      rx
        .spans()
        .find(
          (s) =>
            s.service === 'transfer' &&
            s.kind === 'SERVER' &&
            s.name === 'wallet.transfer.v1.TransferService/HandleRailCallback' &&
            s.attributes['wallet.transfer_id'] === transferId,
        ),
    );
    expect(callback.traceId).not.toBe(sendRoot.traceId);
    expect(callback.links.map((l) => l.traceId)).toEqual([sendRoot.traceId]);
    const { cb, cbServer } = await settled(() => {
      const cb = traceOf(callback.traceId);
      const cbServer = one(cb, 'gateway callback route', (s) => s.service === 'gateway' && s.kind === 'SERVER');
      one(cb, 'ledger commit in the callback trace', (s) => s.service === 'ledger' && s.kind === 'SERVER');
      for (const svc of ['receipt', 'webhook'])
        one(cb, `${svc} consumer of transfer.completed`, (s) => s.service === svc && s.kind === 'CONSUMER' && s.name === 'transfer.completed process');
      return { cb, cbServer };
    });
    expect(cbServer.name).toBe('POST /webhooks/rails/{rail}');
    // The webhook's delivery: a span of its own (the worker's), found by the id the receiver got (webhook-id).
    const deliver = await received(() => rx.spans().find((s) => s.name === 'webhook deliver' && s.attributes['wallet.webhook_event_id'] === delivered.id));
    expect(deliver.service).toBe('webhook');

    // No raw identifier in a span name; paths as the logs show them.
    const all = [...send1, ...cb];
    expect(all.filter((s) => UUID.test(s.name) || s.name.includes(transferId)).map((s) => s.name)).toEqual([]);
    expect(all.filter((s) => s.kind === 'SERVER' && String(s.attributes['url.path'] ?? '').includes('3001234567'))).toEqual([]);
    expect(rx.contentTypes()).toEqual(new Set(['application/json']));

    const tree = [...send1, ...cb, ...rx.spans().filter((s) => s.links.some((l) => l.traceId === sendRoot.traceId) && s.traceId !== callback.traceId)];
    process.stdout.write(`\nspan tree of one Bre-B send (${send1.length} spans in its trace, ${cb.length} in the callback's, linked):\n${spanTree(tree)}\n`);
  }, 90_000);

  it('one PSE payment: the provider confirmation is its own trace, linked to the deposit link and carrying the deposit id', async () => {
    const created = await gw('POST', '/deposits/pse', {
      token: writeKey,
      body: {
        amountCents: 500_000,
        ...PSE_PAYER,
      },
    });
    expect(created.status).toBe(201);
    const depositId: string = created.body.id;
    const paid = await fetch(`${stack.sandboxUrl}/sandbox/pse/${depositId}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'APPROVED', payerBank: 'Bancolombia' }),
    });
    expect(paid.status).toBe(200);
    const createRoot = await received(() => rx.spans().find((s) => s.service === 'gateway' && s.kind === 'SERVER' && s.name === 'POST /deposits/pse'));
    // The link creation called the PSE gateway (fetch) with the trace's context.
    const isPseCall = (s: ReceivedSpan) => s.service === 'pse-deposit' && s.kind === 'CLIENT' && s.scope.includes('undici');
    const pseCall = await received(() => traceOf(createRoot.traceId).find(isPseCall));
    await received(() => traceOf(createRoot.traceId).find((s) => s.service === 'sandbox' && childOf(pseCall)(s)));
    const create = traceOf(createRoot.traceId);
    one(create, 'pse-deposit → PSE gateway', isPseCall);
    one(create, 'the PSE gateway continuing the traceparent', (s) => s.service === 'sandbox' && s.kind === 'SERVER' && childOf(pseCall)(s));
    const confirmation = await received(() =>
      rx.spans().find((s) => s.service === 'pse-deposit' && s.kind === 'SERVER' && s.attributes['wallet.deposit_id'] === depositId),
    );
    expect(confirmation.traceId).not.toBe(createRoot.traceId);
    expect(confirmation.links.map((l) => l.traceId)).toEqual([createRoot.traceId]);
    // deposit.* events carry the confirmation's context: their consumers are in its trace.
    await received(() => traceOf(confirmation.traceId).find((s) => s.kind === 'CONSUMER' && s.name.startsWith('deposit.') && s.service === 'receipt'));
    const conf = traceOf(confirmation.traceId);
    expect(conf.filter((s) => UUID.test(s.name) || s.name.includes(depositId)).map((s) => s.name)).toEqual([]);
    process.stdout.write(`\nspan tree of one PSE payment (link creation, then the confirmation, linked):\n${spanTree([...create, ...conf])}\n`);
  }, 60_000);

  it('an idle stack exports no trace: its pollers record nothing while they find no work', async () => {
    // Let what the payments started finish and be exported, then watch a quiet stack.
    await new Promise((r) => setTimeout(r, 3000));
    const from = BigInt(Date.now()) * 1_000_000n;
    await new Promise((r) => setTimeout(r, 5000));
    const to = BigInt(Date.now()) * 1_000_000n;
    await new Promise((r) => setTimeout(r, 1500)); // the longest batch interval (OTEL_BSP_SCHEDULE_DELAY, transfer's) and more
    const idle = rx.spans().filter((s) => s.startNs >= from && s.startNs < to);
    expect(describeSpans(idle)).toBe('');
  }, 30_000);
});

describe('tracing settings the bootstrap cannot honour', () => {
  it('stop the process at start-up with one line naming the supported values (OTEL_EXPORTER_OTLP_PROTOCOL=grpc, an unknown sampler)', () => {
    const start = (env: Record<string, string>) =>
      spawnSync(process.execPath, ['--import', '@wallet/platform/otel', '-e', 'console.log("started")'], {
        env: { PATH: process.env.PATH ?? '', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', ...env },
        encoding: 'utf8',
        timeout: 20_000,
      });
    const grpc = start({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect([grpc.status, grpc.stdout]).toEqual([78, '']);
    expect(JSON.parse(grpc.stderr.trim()).msg).toBe(
      'telemetry not started: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use one of http/protobuf, http/json (a collector receives both on its OTLP/HTTP port, 4318)',
    );
    const sampler = start({ OTEL_TRACES_SAMPLER: 'sometimes' });
    expect(sampler.status).toBe(78);
    expect(sampler.stderr).toContain('OTEL_TRACES_SAMPLER=sometimes is not supported');
    // The supported values start it.
    const ok = start({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' });
    expect([ok.status, ok.stdout.trim()]).toEqual([0, 'started']);
  });
});
