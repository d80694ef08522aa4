import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Bus, createLogger } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { reconciliationEventsV1 } from '@wallet/proto';
import { Webhook } from 'standardwebhooks';
import { NATS_URL, startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
interface Hit {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

/**
 * Operators' webhooks (docs/webhooks.md "Operators' webhooks: the reconciliation's events") through the real gateway and webhook service: an operator registers
 * a platform endpoint at /admin/webhooks/endpoints and receives the reconciliation's events, signed as
 * Standard Webhooks (verified with the reference library); companies cannot reach those routes.
 */
describe("operators' webhooks for the reconciliation (admin)", () => {
  let stack: Stack;
  let bus: Bus;
  let server: Server;
  const hits: Hit[] = [];
  let url = '';

  beforeAll(async () => {
    stack = await startStack({ webhooks: true });
    bus = await Bus.connect({ url: NATS_URL, namespace: stack.namespace, name: 'e2e-recon-events', logger: createLogger('test', 'silent') });
    await bus.ensureStream('RECONCILIATION');
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        hits.push({ headers: req.headers, raw, body: JSON.parse(raw) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops-events`;
  }, 90_000);
  afterAll(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await bus?.close();
    await stack?.stop();
  });

  it('registers, delivers reconciliation.completed signed, lists deliveries, pings, deletes; audited', async () => {
    const created = await stack.admin('POST', '/admin/webhooks/endpoints', { url, events: ['reconciliation.completed'], description: 'Tesorería' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url, events: ['reconciliation.completed'], enabled: true, description: 'Tesorería' });
    const { id, secret } = created.body as { id: string; secret: string };

    const listed = await stack.admin('GET', '/admin/webhooks/endpoints');
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((e: { id: string }) => e.id)).toEqual([id]);
    expect(listed.text).not.toContain(secret);

    const runId = `run_${randomUUID().replace(/-/g, '')}`;
    await bus.publish({
      id: randomUUID(),
      subject: 'reconciliation.completed',
      source: 'test',
      time: new Date().toISOString(),
      payload: reconciliationEventsV1.ReconciliationCompleted.toJSON({
        run: {
          id: runId,
          rail: 'ach',
          date: '2026-11-23',
          trigger: 'ON_DEMAND',
          status: 'REJECTED',
          requestedBy: 'operator:op-1',
          startedAt: new Date(),
          finishedAt: new Date(),
          rejectReason: 'TRAILER_MISMATCH',
          detail: 'the trailer counts 4 lines, the file has 3',
          reportLines: 0n,
          reportAmountCents: 0n,
          reportFeeCents: 0n,
          oursCount: 0n,
          oursAmountCents: 0n,
          matchedCount: 0n,
          matchedAmountCents: 0n,
          breaksTotal: 0n,
          breaksOpened: 0n,
          breaksByKind: {},
          reportNetCents: 0n,
          oursNetCents: 0n,
        },
      }),
    });
    const hit = await eventually(async () => hits.find((h) => h.body.type === 'reconciliation.completed'), 20_000, 50);
    new Webhook(secret).verify(hit.raw, hit.headers as Record<string, string>); // throws when the signature does not match
    expect(hit.body.data).toMatchObject({ id: runId, rail: 'ach', status: 'REJECTED', rejectReason: 'TRAILER_MISMATCH', report: { lines: 0, netCents: '0' } });

    const deliveries = await eventually(
      async () => {
        const r = await stack.admin('GET', `/admin/webhooks/deliveries?endpointId=${id}`);
        return r.body.items.length === 1 && r.body.items[0].status === 'SUCCEEDED' ? r : undefined;
      },
      10_000,
      100,
    );
    expect(deliveries.body.items[0]).toMatchObject({ endpointId: id, eventType: 'reconciliation.completed', resourceId: runId, status: 'SUCCEEDED' });

    const ping = await stack.admin('POST', `/admin/webhooks/endpoints/${id}/test`);
    expect(ping.status).toBe(202);
    await eventually(async () => hits.some((h) => h.body.type === 'webhook.ping'), 10_000, 50);

    expect(await stack.admin('DELETE', `/admin/webhooks/endpoints/${id}`)).toMatchObject({ status: 200, body: { id, deleted: true } });
    expect((await stack.admin('DELETE', `/admin/webhooks/endpoints/${id}`)).status).toBe(404);

    // Audited (the signing secret never reaches the audit log).
    const audit = await stack.admin('GET', '/admin/audit?limit=100');
    expect(audit.status).toBe(200);
    expect(audit.text).toContain('adminCreatePlatformWebhookEndpoint');
    expect(audit.text).toContain('adminDeletePlatformWebhookEndpoint');
    expect(audit.text).not.toContain(secret);
  });

  it("refuses company event types, bad input, and companies' credentials", async () => {
    expect((await stack.admin('POST', '/admin/webhooks/endpoints', { url, events: ['transfer.completed'] })).status).toBe(400);
    expect((await stack.admin('POST', '/admin/webhooks/endpoints', { url, events: [] })).status).toBe(400);
    expect((await stack.admin('POST', '/admin/webhooks/endpoints', { url: 'ftp://x', events: ['reconciliation.break'] })).status).toBe(400);
    const co = await stack.provision('Sin Operador S.A.S.');
    const asCompany = await stack.http('POST', '/admin/webhooks/endpoints', { token: co.writeKey, body: { url, events: ['reconciliation.break'] } });
    expect([401, 403]).toContain(asCompany.status);
    expect([401, 403]).toContain((await stack.http('GET', '/admin/webhooks/endpoints', { token: co.readKey })).status);
    // And a company's own endpoints cannot subscribe to the platform's events.
    const own = await stack.http('POST', '/webhooks/endpoints', { token: co.writeKey, body: { url, events: ['reconciliation.completed'] } });
    expect(own.status).toBe(400);
  });
});
