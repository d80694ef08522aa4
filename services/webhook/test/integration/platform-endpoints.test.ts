import { randomUUID } from 'node:crypto';
import { meshClient } from '@wallet/platform/testing';
import { reconciliationEventsV1, webhookV1 } from '@wallet/proto';
import { dispatched, eventually, failure, Receiver, startHarness, verify, type Harness, type Instance } from './harness.js';

/**
 * Platform endpoints (docs/webhooks.md): an operator's endpoint receives the reconciliation's events
 * (reconciliation.completed, reconciliation.break) from the RECONCILIATION stream, delivered and
 * signed (Standard Webhooks) by the same worker as a company's; no company endpoint can subscribe to
 * them or receive them, and only the gateway acting for an operator manages them.
 */
describe('platform webhook endpoints (reconciliation events)', () => {
  let h: Harness;
  let svc: Instance;

  beforeAll(async () => {
    h = await startHarness();
    await h.bus.ensureStream('RECONCILIATION');
    svc = await h.start({ WEBHOOK_TIMEOUT_MS: '400' });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  const admin = () => h.ctx();
  const run = (over: Partial<import('@wallet/proto').reconciliationV1.Run> = {}) => ({
    id: `run_${randomUUID().replace(/-/g, '')}`,
    rail: 'breb',
    date: '2026-11-23',
    trigger: 'SCHEDULE',
    status: 'RECONCILED',
    requestedBy: 'scheduler',
    startedAt: new Date('2026-11-24T11:00:00Z'),
    finishedAt: new Date('2026-11-24T11:00:05Z'),
    reportLines: 3n,
    reportAmountCents: 150_000n,
    reportFeeCents: 0n,
    oursCount: 3n,
    oursAmountCents: 148_000n,
    matchedCount: 2n,
    matchedAmountCents: 100_000n,
    breaksTotal: 1n,
    breaksOpened: 1n,
    breaksByKind: { amount_mismatch: 1n },
    reportNetCents: 150_000n,
    oursNetCents: 148_000n,
    ...over,
  });
  const publishCompleted = async (r: ReturnType<typeof run>) => {
    const id = randomUUID();
    await h.bus.publish({
      id,
      subject: 'reconciliation.completed',
      payload: reconciliationEventsV1.ReconciliationCompleted.toJSON({ run: r }),
      time: new Date().toISOString(),
      source: 'test',
    });
    return id;
  };
  const publishBreak = async (key: string, runId: string) => {
    const id = randomUUID();
    await h.bus.publish({
      id,
      subject: 'reconciliation.break',
      source: 'test',
      time: new Date().toISOString(),
      payload: reconciliationEventsV1.ReconciliationBreak.toJSON({
        break: {
          key,
          kind: 'amount_mismatch',
          rail: 'breb',
          date: '2026-11-23',
          ourId: 'tr-1',
          providerId: 'p-1',
          oursJson: '{"amountCents":"48000"}',
          theirsJson: '{"amountCents":"50000"}',
          status: 'OPEN',
          runId,
          lastSeenRunId: runId,
          openedAt: new Date('2026-11-24T11:00:04Z'),
          exceptionId: `exc_${'a'.repeat(32)}`,
          differenceCents: 2_000n,
        },
      }),
    });
    return id;
  };

  it("an operator's endpoint receives reconciliation.completed and .break, signed, in the admin API shape; a redelivered event once", async () => {
    const rx = new Receiver();
    await rx.up();
    const { endpoint: ep, secret } = await svc.client.createPlatformEndpoint(
      { url: rx.url, events: ['reconciliation.completed', 'reconciliation.break'], description: 'ops' },
      admin(),
    );
    expect(ep!.id).toMatch(/^we_/);
    expect(secret).toMatch(/^whsec_/);
    expect((await svc.client.listPlatformEndpoints({}, admin())).items.map((e) => e.id)).toContain(ep!.id);

    const r = run();
    const source = await publishCompleted(r);
    await publishBreak(`breb:2026-11-23:amount_mismatch:tr-1`, r.id);
    await eventually(async () => (rx.delivered().length === 2 ? true : undefined));
    const completed = rx.ofType('reconciliation.completed')[0]!;
    const brk = rx.ofType('reconciliation.break')[0]!;
    expect(verify(completed, secret)).toEqual({ ok: true });
    expect(verify(brk, secret)).toEqual({ ok: true });
    expect(completed.body).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'reconciliation.completed',
      createdAt: '2026-11-24T11:00:05.000000Z',
      data: {
        id: r.id,
        rail: 'breb',
        date: '2026-11-23',
        trigger: 'SCHEDULE',
        status: 'RECONCILED',
        requestedBy: 'scheduler',
        startedAt: '2026-11-24T11:00:00.000000Z',
        finishedAt: '2026-11-24T11:00:05.000000Z',
        coversUntil: null,
        rejectReason: null,
        detail: null,
        report: { lines: 3, amountCents: '150000', feeCents: '0', netCents: '150000' },
        ours: { count: 3, amountCents: '148000', netCents: '148000' },
        matched: { count: 2, amountCents: '100000' },
        breaks: { total: 1, opened: 1, byKind: { amount_mismatch: 1 } },
      },
    });
    expect(brk.body.data).toEqual({
      key: 'breb:2026-11-23:amount_mismatch:tr-1',
      kind: 'amount_mismatch',
      rail: 'breb',
      date: '2026-11-23',
      ourId: 'tr-1',
      providerId: 'p-1',
      ours: { amountCents: '48000' },
      theirs: { amountCents: '50000' },
      status: 'OPEN',
      runId: r.id,
      lastSeenRunId: r.id,
      openedAt: '2026-11-24T11:00:04.000000Z',
      resolvedAt: null,
      resolution: null,
      exceptionId: `exc_${'a'.repeat(32)}`,
      differenceCents: '2000',
      movement: null,
      adjustmentState: null,
      linkedCase: null,
    });

    // The same source event again (a redelivery): no second delivery.
    await h.bus.publish({
      id: source,
      subject: 'reconciliation.completed',
      payload: reconciliationEventsV1.ReconciliationCompleted.toJSON({ run: r }),
      time: new Date().toISOString(),
      source: 'test',
    });
    await dispatched(svc);
    const log = (await svc.client.listPlatformDeliveries({ endpointId: ep!.id, limit: 50 }, admin())).items;
    expect(log.map((d) => d.eventType).sort()).toEqual(['reconciliation.break', 'reconciliation.completed']);
    await eventually(async () =>
      (await svc.client.listPlatformDeliveries({ endpointId: ep!.id, limit: 50 }, admin())).items.every((d) => d.status === 'SUCCEEDED') ? true : undefined,
    );
    expect(log.find((d) => d.eventType === 'reconciliation.completed')!.resourceId).toBe(r.id);

    // A test ping, and delete.
    const ping = await svc.client.testPlatformEndpoint({ id: ep!.id }, admin());
    expect(ping.eventType).toBe('webhook.ping');
    await eventually(async () => (rx.ofType('webhook.ping').length === 1 ? true : undefined));
    expect(await svc.client.deletePlatformEndpoint({ id: ep!.id }, admin())).toEqual({ id: ep!.id, deleted: true });
    expect((await svc.client.listPlatformEndpoints({}, admin())).items.map((e) => e.id)).not.toContain(ep!.id);
    expect((await failure(svc.client.deletePlatformEndpoint({ id: ep!.id }, admin()))).code).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    await rx.down();
  });

  it('subscriptions are kept apart: a platform endpoint takes only platform types, a company endpoint none of them', async () => {
    const e1 = await failure(svc.client.createPlatformEndpoint({ url: 'http://127.0.0.1:9/x', events: ['transfer.completed'] }, admin()));
    expect(e1.code).toBe('INVALID_REQUEST');
    const co = `co-${randomUUID()}`;
    const e2 = await failure(svc.client.createEndpoint({ url: 'http://127.0.0.1:9/x', events: ['reconciliation.completed'] }, h.ctx(co)));
    expect(e2.code).toBe('INVALID_REQUEST');
    expect((await failure(svc.client.createPlatformEndpoint({ url: 'http://127.0.0.1:9/x', events: [] }, admin()))).code).toBe('INVALID_REQUEST');
  });

  it('a company sees no platform endpoint or delivery, and receives no platform event', async () => {
    const rx = new Receiver();
    await rx.up();
    const co = `co-${randomUUID()}`;
    const { endpoint: mine } = await svc.client.createEndpoint({ url: rx.url, events: ['transfer.completed'] }, h.ctx(co));
    const { endpoint: ops } = await svc.client.createPlatformEndpoint({ url: rx.url, events: ['reconciliation.completed'] }, admin());
    await publishCompleted(run({ status: 'FAILED', detail: 'report unavailable' }));
    await eventually(async () => (rx.ofType('reconciliation.completed').length === 1 ? true : undefined));
    await dispatched(svc);
    expect((await svc.client.listDeliveries({ endpointId: mine!.id, limit: 50 }, h.ctx(co))).items).toEqual([]);
    expect((await svc.client.listEndpoints({}, h.ctx(co))).items.map((e) => e.id)).toEqual([mine!.id]);
    expect((await failure(svc.client.getEndpoint({ id: ops!.id }, h.ctx(co)))).code).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    expect((await failure(svc.client.deleteEndpoint({ id: ops!.id }, h.ctx(co)))).code).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    const [d] = (await svc.client.listPlatformDeliveries({ endpointId: ops!.id, limit: 5 }, admin())).items;
    expect((await failure(svc.client.getDelivery({ id: d!.id }, h.ctx(co)))).code).toBe('WEBHOOK_DELIVERY_NOT_FOUND');
    await svc.client.deletePlatformEndpoint({ id: ops!.id }, admin());
    await rx.down();
  });

  it("only the gateway acting for an operator manages them: an API key's call and other services are refused", async () => {
    const asGateway = meshClient<webhookV1.WebhookServiceServer>(webhookV1.WebhookServiceClient, svc.service.address, 'gateway', 'webhook', 10_000);
    const asRecon = meshClient<webhookV1.WebhookServiceServer>(webhookV1.WebhookServiceClient, svc.service.address, 'reconciliation', 'webhook', 10_000);
    try {
      const before = (await svc.client.listPlatformEndpoints({}, admin())).items.length;
      // The gateway for a company (an API key principal).
      expect(
        (await failure(asGateway.createPlatformEndpoint({ url: 'http://127.0.0.1:9/x', events: ['reconciliation.break'] }, h.ctx(`co-${randomUUID()}`)))).code,
      ).toBe('CALLER_NOT_ALLOWED');
      expect((await failure(asGateway.listPlatformEndpoints({}, h.ctx(`co-${randomUUID()}`)))).code).toBe('CALLER_NOT_ALLOWED');
      expect((await failure(asRecon.createPlatformEndpoint({ url: 'http://127.0.0.1:9/x', events: ['reconciliation.break'] }, h.ctx()))).code).toBe(
        'CALLER_NOT_ALLOWED',
      );
      expect((await svc.client.listPlatformEndpoints({}, admin())).items.length).toBe(before);
    } finally {
      asGateway.close();
      asRecon.close();
    }
  });
});
