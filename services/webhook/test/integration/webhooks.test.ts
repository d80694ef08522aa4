import { randomUUID } from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';
import { metricsRegistry } from '@wallet/platform';
import { dispatched, eventually, failure, Receiver, startHarness, verify, type Harness, type Instance } from './harness.js';

const ALL_TRANSFER = ['transfer.created', 'transfer.completed', 'transfer.failed'];

describe('webhook service', () => {
  let h: Harness;
  let svc: Instance;

  beforeAll(async () => {
    h = await startHarness();
    svc = await h.start({ WEBHOOK_TIMEOUT_MS: '400' });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  async function endpoint(companyId: string, url: string, events: string[], extra: { enabled?: boolean } = {}) {
    return svc.client.createEndpoint({ url, events, ...extra }, h.ctx(companyId));
  }
  async function deliveriesOf(companyId: string, endpointId: string) {
    return (await svc.client.listDeliveries({ endpointId, limit: 200 }, h.ctx(companyId))).items;
  }

  it('signs each delivery (Webhook-Id, timestamped HMAC-SHA256 of `t.body`) with the API shape of the resource', async () => {
    const rx = new Receiver();
    await rx.up();
    const co = `co-${randomUUID()}`;
    const { endpoint: ep, secret } = await endpoint(co, rx.url, ['transfer.completed']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(ep!.id).toMatch(/^we_/);
    expect(ep!.enabled).toBe(true);
    // The secret is shown once: reads never carry it.
    expect(JSON.stringify(await svc.client.getEndpoint({ id: ep!.id }, h.ctx(co)))).not.toContain(secret);

    const transferId = randomUUID();
    const sourceId = await h.publishTransfer('transfer.completed', { transferId, companyId: co, reference: 'INV-1', completedAt: new Date() });
    const [got] = await eventually(async () => (rx.delivered().length === 1 ? rx.delivered() : undefined));
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['webhook-id']).toBe(got!.body.id);
    expect(got!.body.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(got!.headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verify(got!, secret)).toEqual({ ok: true });
    expect(verify({ ...got!, raw: got!.raw.replace('INV-1', 'INV-2') }, secret)).toEqual({ ok: false, reason: 'No matching signature found' });
    expect(verify({ ...got!, headers: { ...got!.headers, 'webhook-id': 'evt_other' } }, secret)).toEqual({ ok: false, reason: 'No matching signature found' });
    expect(got!.body.type).toBe('transfer.completed');
    expect(Object.keys(got!.body).sort()).toEqual(['createdAt', 'data', 'id', 'type']);
    expect(got!.body.data).toMatchObject({
      id: transferId,
      status: 'COMPLETED',
      amount: 1_000_000,
      totalFee: 5_000,
      ivaAmount: 950,
      netAmount: 1_000_000,
      currency: 'COP',
      rail: 'BREB',
      targetName: 'Ana Gómez',
      targetDocument: '1020304050',
      reference: 'INV-1',
    });
    expect(got!.body.data.createdAt).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));

    // The delivery log.
    const [d] = await deliveriesOf(co, ep!.id);
    await eventually(async () => (await svc.client.getDelivery({ id: d!.id }, h.ctx(co))).status === 'SUCCEEDED');
    const log = await svc.client.getDelivery({ id: d!.id }, h.ctx(co));
    expect(log).toMatchObject({
      eventId: got!.body.id,
      eventType: 'transfer.completed',
      resourceId: transferId,
      status: 'SUCCEEDED',
      attempts: 1,
      responseStatus: 200,
    });
    expect(log.latencyMs).toBeGreaterThanOrEqual(0);
    expect(log.deliveredAt).toBeInstanceOf(Date);

    // A redelivered source event (same id) creates nothing new: the inbox drops it.
    await h.publishTransfer('transfer.completed', { transferId, companyId: co }, sourceId);
    await dispatched(svc);
    expect(await deliveriesOf(co, ep!.id)).toHaveLength(1);
    await rx.down();
  });

  it("delivers only the subscribed types, only to the enabled endpoints of the event's company", async () => {
    const a = new Receiver();
    const b = new Receiver();
    const off = new Receiver();
    await a.up();
    await b.up();
    await off.up();
    const co = `co-${randomUUID()}`;
    const other = `co-${randomUUID()}`;
    const epA = (await endpoint(co, a.url, ['transfer.completed'])).endpoint!;
    const epB = (await endpoint(co, b.url, ['deposit.paid', 'collect_key.payment_received'])).endpoint!;
    const epOff = (await endpoint(co, off.url, ['transfer.completed', 'deposit.paid'], { enabled: false })).endpoint!;
    const otherRx = new Receiver();
    await otherRx.up();
    await endpoint(other, otherRx.url, ALL_TRANSFER);

    const t = randomUUID();
    await h.publishTransfer('transfer.created', { transferId: t, companyId: co, status: 'MOVEMENT_STATUS_PENDING' as never });
    await h.publishTransfer('transfer.dispatched', { transferId: t, companyId: co, status: 'MOVEMENT_STATUS_EXECUTING' as never });
    await h.publishTransfer('transfer.completed', { transferId: t, companyId: co });
    await h.publishDeposit('deposit.paid', co, { id: 'dep_pse1' });
    await h.publishDeposit('deposit.paid', co, {
      id: 'dep_breb1',
      source: 'BREB',
      brebKey: { id: 'bkey_1', externalId: 'cust-1', name: 'Cliente', value: '@abcdefghij' },
    });
    await h.publishDeposit('deposit.expired', co, { id: 'dep_pse2', status: 'EXPIRED' });
    await dispatched(svc);

    expect((await deliveriesOf(co, epA.id)).map((d) => d.eventType)).toEqual(['transfer.completed']);
    expect((await deliveriesOf(co, epB.id)).map((d) => `${d.eventType}:${d.resourceId}`).sort()).toEqual([
      'collect_key.payment_received:dep_breb1',
      'deposit.paid:dep_breb1',
      'deposit.paid:dep_pse1',
    ]);
    expect(await deliveriesOf(co, epOff.id)).toEqual([]);
    await eventually(async () => a.delivered().length === 1 && b.delivered().length === 3);
    expect(a.delivered()[0]!.body.data.id).toBe(t);
    const payment = b.ofType('collect_key.payment_received')[0]!;
    expect(payment.body.data).toMatchObject({
      id: 'dep_breb1',
      status: 'ASSIGNED',
      source: 'BREB',
      amountCents: '5000000',
      netAmountCents: '4988100',
      brebKey: { id: 'bkey_1', value: '@abcdefghij' },
    });
    expect(payment.body.id).not.toBe(b.ofType('deposit.paid').find((r) => r.body.data.id === 'dep_breb1')!.body.id);
    expect(otherRx.received).toEqual([]);
    expect(off.received).toEqual([]);

    // Enabled later: events from then on are delivered.
    await svc.client.updateEndpoint({ id: epOff.id, enabled: true, setEvents: false, events: [], clearDescription: false }, h.ctx(co));
    await h.publishTransfer('transfer.completed', { transferId: randomUUID(), companyId: co });
    await eventually(async () => off.delivered().length === 1);
    for (const r of [a, b, off, otherRx]) await r.down();
  });

  it('retries a 500 and a time-out with backoff, then succeeds with the same event id and body', async () => {
    const rx = new Receiver();
    await rx.up();
    rx.plan = [500, 'hang', 503];
    const co = `co-${randomUUID()}`;
    const { endpoint: ep, secret } = await endpoint(co, rx.url, ['deposit.paid']);
    await h.publishDeposit('deposit.paid', co, { id: `dep_${randomUUID().slice(0, 8)}` });
    await eventually(async () => rx.delivered().length === 1, 20_000);
    expect(rx.received.map((r) => r.status)).toEqual([500, 0, 503, 200]);
    expect(new Set(rx.received.map((r) => r.body.id)).size).toBe(1);
    expect(new Set(rx.received.map((r) => r.raw)).size).toBe(1);
    for (const r of rx.received) expect(verify(r, secret).ok).toBe(true);
    const [d] = await deliveriesOf(co, ep!.id);
    await eventually(async () => (await svc.client.getDelivery({ id: d!.id }, h.ctx(co))).status === 'SUCCEEDED');
    expect(await svc.client.getDelivery({ id: d!.id }, h.ctx(co))).toMatchObject({ attempts: 4, responseStatus: 200 });
    await rx.down();
  });

  it('reports the delivery queue at scrape time (pending, due, oldest due): the webhook backlog alert reads it', async () => {
    const value = async (name: string) => {
      const line = (await metricsRegistry.metrics()).split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? undefined : Number(line.slice(name.length + 1));
    };
    const rx = new Receiver();
    await rx.up();
    rx.plan = Array<number>(20).fill(500);
    const co = `co-${randomUUID()}`;
    await endpoint(co, rx.url, ['deposit.paid']);
    await h.publishDeposit('deposit.paid', co, { id: `dep_${randomUUID().slice(0, 8)}` });
    await eventually(async () => rx.received.length >= 1, 20_000);
    // Refused once, it waits for its retry: pending, and counted as such.
    expect(await eventually(async () => ((await value('wallet_webhook_pending_deliveries')) ?? 0) >= 1)).toBe(true);
    expect(await value('wallet_webhook_due_deliveries')).toBeGreaterThanOrEqual(0);
    expect(await value('wallet_webhook_oldest_due_seconds')).toBeGreaterThanOrEqual(0);
    rx.plan = [];
    await rx.down();
  });

  it('records a time-out in the log while retrying', async () => {
    const rx = new Receiver();
    await rx.up();
    rx.plan = ['hang', 'hang', 'hang', 'hang', 'hang', 'hang'];
    const co = `co-${randomUUID()}`;
    const { endpoint: ep } = await endpoint(co, rx.url, ['transfer.failed']);
    await h.publishTransfer('transfer.failed', {
      transferId: randomUUID(),
      companyId: co,
      status: 'MOVEMENT_STATUS_FAILED' as never,
      errorMessage: 'rail refused',
    });
    const d = await eventually(async () => {
      const [x] = await deliveriesOf(co, ep!.id);
      return x && x.attempts >= 1 ? x : undefined;
    });
    expect(d).toMatchObject({ status: 'PENDING', lastError: 'timeout after 400 ms' });
    expect(d.responseStatus).toBeUndefined();
    expect(d.nextAttemptAt).toBeInstanceOf(Date);
    expect(rx.received[0]!.body.data).toMatchObject({ status: 'FAILED', errorMessage: 'rail refused' });
    await svc.client.deleteEndpoint({ id: ep!.id }, h.ctx(co));
    await rx.down();
  });

  it('keeps sending per resource in order, and a receiver down for a while then back gets every event exactly once', async () => {
    const rx = new Receiver();
    await rx.up();
    const co = `co-${randomUUID()}`;
    await endpoint(co, rx.url, ALL_TRANSFER);
    await rx.down(); // connection refused from now on
    const transfers = Array.from({ length: 4 }, () => randomUUID());
    const expected: string[] = [];
    for (const t of transfers) {
      await h.publishTransfer('transfer.created', { transferId: t, companyId: co, status: 'MOVEMENT_STATUS_PENDING' as never });
      await h.publishTransfer('transfer.completed', { transferId: t, companyId: co });
    }
    await dispatched(svc);
    const ep = (await svc.client.listEndpoints({}, h.ctx(co))).items[0]!;
    // Every delivery was tried and refused at least once while the receiver was down.
    await eventually(async () => {
      const ds = await deliveriesOf(co, ep.id);
      return (
        ds.length === 8 &&
        ds
          .filter((d) => d.resourceId && d.eventType === 'transfer.created')
          .every((d) => d.attempts >= 1 && d.status === 'PENDING' && /ECONNREFUSED/.test(d.lastError ?? ''))
      );
    }, 20_000);
    for (const d of await deliveriesOf(co, ep.id)) expected.push(d.eventId);
    await rx.up(); // same port
    await eventually(async () => new Set(rx.delivered().map((r) => r.body.id)).size === 8, 30_000);
    await eventually(async () => (await deliveriesOf(co, ep.id)).every((d) => d.status === 'SUCCEEDED'), 15_000);
    const ids = rx.delivered().map((r) => r.body.id);
    expect(ids.sort()).toEqual([...expected].sort()); // each event id exactly once
    for (const t of transfers) {
      const types = rx
        .delivered()
        .filter((r) => r.body.data.id === t)
        .map((r) => r.body.type);
      expect(types).toEqual(['transfer.created', 'transfer.completed']);
    }
    await rx.down();
  });

  it('signs with both secrets during a rotation overlap, and with the new one only after', async () => {
    const rx = new Receiver();
    await rx.up();
    const co = `co-${randomUUID()}`;
    const { endpoint: ep, secret: first } = await endpoint(co, rx.url, ['transfer.completed']);
    const rotated = await svc.client.rotateSecret({ id: ep!.id, overlapSeconds: 3600 }, h.ctx(co));
    const second = rotated.secret;
    expect(second).not.toBe(first);
    expect(rotated.endpoint!.previousSecretExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 3_500_000);
    await h.publishTransfer('transfer.completed', { transferId: randomUUID(), companyId: co });
    await eventually(async () => rx.delivered().length === 1);
    const during = rx.delivered()[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(during, first).ok).toBe(true);
    expect(verify(during, second).ok).toBe(true);

    const third = (await svc.client.rotateSecret({ id: ep!.id, overlapSeconds: 0 }, h.ctx(co))).secret;
    expect((await svc.client.getEndpoint({ id: ep!.id }, h.ctx(co))).previousSecretExpiresAt).toBeUndefined();
    await h.publishTransfer('transfer.completed', { transferId: randomUUID(), companyId: co });
    await eventually(async () => rx.delivered().length === 2);
    const after = rx.delivered()[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verify(after, third).ok).toBe(true);
    expect(verify(after, second)).toEqual({ ok: false, reason: 'No matching signature found' });
    expect(verify(after, first)).toEqual({ ok: false, reason: 'No matching signature found' });

    const bad = await failure(svc.client.rotateSecret({ id: ep!.id, overlapSeconds: 8 * 86_400 }, h.ctx(co)));
    expect(bad.code).toBe('INVALID_REQUEST');
    await rx.down();
  });

  it('replays a delivery (same event id and body) and sends test pings', async () => {
    const rx = new Receiver();
    await rx.up();
    const co = `co-${randomUUID()}`;
    const { endpoint: ep, secret } = await endpoint(co, rx.url, ['deposit.paid']);
    await h.publishDeposit('deposit.paid', co, { id: 'dep_replay' });
    await eventually(async () => rx.delivered().length === 1);
    const [orig] = await deliveriesOf(co, ep!.id);
    const replay = await svc.client.replayDelivery({ id: orig!.id }, h.ctx(co));
    expect(replay).toMatchObject({ replayOf: orig!.id, eventId: orig!.eventId, status: 'PENDING', attempts: 0 });
    expect(replay.id).not.toBe(orig!.id);
    await eventually(async () => rx.delivered().length === 2);
    expect(rx.delivered()[1]!.raw).toBe(rx.delivered()[0]!.raw);
    expect(rx.delivered()[1]!.headers['webhook-id']).toBe(orig!.eventId);
    await eventually(async () => (await svc.client.getDelivery({ id: replay.id }, h.ctx(co))).status === 'SUCCEEDED');

    const ping = await svc.client.testEndpoint({ id: ep!.id }, h.ctx(co));
    expect(ping.eventType).toBe('webhook.ping');
    await eventually(async () => rx.ofType('webhook.ping').length === 1);
    const p = rx.ofType('webhook.ping')[0]!;
    expect(p.body.data).toEqual({ endpointId: ep!.id, url: rx.url });
    expect(verify(p, secret).ok).toBe(true);

    // Filters and pagination of the log.
    const page1 = await svc.client.listDeliveries({ endpointId: ep!.id, limit: 2 }, h.ctx(co));
    expect(page1.items.map((d) => d.id)).toEqual([ping.id, replay.id]);
    const page2 = await svc.client.listDeliveries({ endpointId: ep!.id, limit: 2, cursor: page1.nextCursor! }, h.ctx(co));
    expect(page2.items.map((d) => d.id)).toEqual([orig!.id]);
    expect(page2.nextCursor).toBeUndefined();
    expect((await svc.client.listDeliveries({ status: 'FAILED', limit: 50 }, h.ctx(co))).items).toEqual([]);
    await rx.down();
  });

  it("isolates companies: another company's endpoint or delivery reads as not found", async () => {
    const rx = new Receiver();
    await rx.up();
    const co = `co-${randomUUID()}`;
    const intruder = `co-${randomUUID()}`;
    const { endpoint: ep } = await endpoint(co, rx.url, ['transfer.completed']);
    const ping = await svc.client.testEndpoint({ id: ep!.id }, h.ctx(co));
    for (const call of [
      svc.client.getEndpoint({ id: ep!.id }, h.ctx(intruder)),
      svc.client.updateEndpoint({ id: ep!.id, enabled: false, setEvents: false, events: [], clearDescription: false }, h.ctx(intruder)),
      svc.client.deleteEndpoint({ id: ep!.id }, h.ctx(intruder)),
      svc.client.rotateSecret({ id: ep!.id }, h.ctx(intruder)),
      svc.client.testEndpoint({ id: ep!.id }, h.ctx(intruder)),
    ])
      expect((await failure(call)).code).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    for (const call of [svc.client.getDelivery({ id: ping.id }, h.ctx(intruder)), svc.client.replayDelivery({ id: ping.id }, h.ctx(intruder))]) {
      expect((await failure(call)).code).toBe('WEBHOOK_DELIVERY_NOT_FOUND');
    }
    expect((await svc.client.listEndpoints({}, h.ctx(intruder))).items).toEqual([]);
    expect((await svc.client.listDeliveries({ limit: 50 }, h.ctx(intruder))).items).toEqual([]);
    expect((await svc.client.getEndpoint({ id: ep!.id }, h.ctx(co))).id).toBe(ep!.id);
    // Without a company in the metadata nothing is answered.
    expect((await failure(svc.client.listEndpoints({}, { requestId: randomUUID() }))).code).toBe('CALLER_NOT_ALLOWED');
    await svc.client.deleteEndpoint({ id: ep!.id }, h.ctx(co));
    expect((await failure(svc.client.getEndpoint({ id: ep!.id }, h.ctx(co)))).code).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    await rx.down();
    void Metadata;
  });

  it('refuses bad input with field details', async () => {
    const co = `co-${randomUUID()}`;
    const e = await failure(svc.client.createEndpoint({ url: 'not a url', events: ['transfer.completed', 'nope.nope'] }, h.ctx(co)));
    expect(e.code).toBe('INVALID_REQUEST');
    expect((e.details as { fields: Array<{ path: string }> }).fields.map((f) => f.path).sort()).toEqual(['events.1', 'url']);
    const none = await failure(svc.client.createEndpoint({ url: 'http://127.0.0.1:9/x', events: [] }, h.ctx(co)));
    expect((none.details as { fields: Array<{ path: string }> }).fields.map((f) => f.path)).toEqual(['events']);
  });

  it('keeps at most 20 live endpoints per company: the 21st is a 409 WEBHOOK_ENDPOINT_LIMIT_REACHED (not a request error) until one is deleted', async () => {
    const co = `co-${randomUUID()}`;
    const create = (i: number) => svc.client.createEndpoint({ url: `http://127.0.0.1:9/limit/${i}`, events: ['transfer.completed'] }, h.ctx(co));
    const made = [];
    for (let i = 0; i < 20; i++) made.push((await create(i)).endpoint!);
    const full = await failure(create(20));
    expect(full.code).toBe('WEBHOOK_ENDPOINT_LIMIT_REACHED');
    expect(full.details).toEqual({ limit: 20 });
    expect(full.message).toBe('Se permiten como máximo 20 endpoints por empresa; elimine uno antes de crear otro.');
    // Another company is not affected by this one's endpoints.
    expect(
      (await svc.client.createEndpoint({ url: 'http://127.0.0.1:9/other', events: ['transfer.completed'] }, h.ctx(`co-${randomUUID()}`))).endpoint,
    ).toBeDefined();
    await svc.client.deleteEndpoint({ id: made[0]!.id }, h.ctx(co));
    expect((await create(21)).endpoint!.url).toBe('http://127.0.0.1:9/limit/21');
  });

  it('creations racing for the last places: exactly 20 live endpoints, the others 409 (each decided under a lock per company)', async () => {
    const co = `co-${randomUUID()}`;
    const tries = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => svc.client.createEndpoint({ url: `http://127.0.0.1:9/race/${i}`, events: ['transfer.completed'] }, h.ctx(co))),
    );
    expect(tries.filter((t) => t.status === 'fulfilled')).toHaveLength(20);
    const refused = tries.flatMap((t) => (t.status === 'rejected' ? [(t.reason as { code?: string }).code] : []));
    expect(refused).toEqual(Array(10).fill('WEBHOOK_ENDPOINT_LIMIT_REACHED'));
    expect((await svc.client.listEndpoints({}, h.ctx(co))).items).toHaveLength(20);
  });
});

describe('webhook service: giving up', () => {
  let h: Harness;
  let svc: Instance;
  beforeAll(async () => {
    h = await startHarness();
    svc = await h.start({ WEBHOOK_RETRY_HORIZON_SECONDS: '2', WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_RETRY_MAX_DELAY_MS: '300' });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('marks a delivery FAILED once its retry horizon has passed, after a last attempt', async () => {
    const rx = new Receiver();
    await rx.up();
    rx.plan = Array.from({ length: 200 }, () => 500);
    const co = `co-${randomUUID()}`;
    const { endpoint: ep } = await svc.client.createEndpoint({ url: rx.url, events: ['deposit.failed'] }, h.ctx(co));
    await h.publishDeposit('deposit.failed', co, { id: 'dep_fail', status: 'FAILED' });
    const d = await eventually(async () => {
      const [x] = (await svc.client.listDeliveries({ endpointId: ep!.id, limit: 10 }, h.ctx(co))).items;
      return x?.status === 'FAILED' ? x : undefined;
    }, 20_000);
    expect(d.attempts).toBeGreaterThanOrEqual(2);
    expect(d).toMatchObject({ responseStatus: 500, lastError: 'HTTP 500' });
    expect(d.nextAttemptAt).toBeUndefined();
    const tries = rx.received.length;
    expect(tries).toBe(d.attempts);
    // A replay of a failed delivery starts again.
    rx.plan = [];
    await svc.client.replayDelivery({ id: d.id }, h.ctx(co));
    await eventually(async () => rx.delivered().length === 1);
    await rx.down();
  });
});

describe('webhook service: production target rules (SSRF)', () => {
  let h: Harness;
  let svc: Instance;
  const lookups: string[] = [];
  beforeAll(async () => {
    h = await startHarness();
    // DNS stand-in: hooks.example.test first answers a public address, then rebinds to loopback.
    // No request ever leaves loopback: a refused target is never connected to.
    let calls = 0;
    svc = await h.start({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }, async (host) => {
      lookups.push(host);
      if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
      if (host === 'metadata.google.internal') return [{ address: '169.254.169.254', family: 4 }];
      if (host === 'hooks.example.test') return ++calls === 1 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
      throw new Error('ENOTFOUND');
    });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it.each([
    'http://hooks.example.test/x',
    'https://127.0.0.1/x',
    'https://localhost/x',
    'https://10.0.0.8/x',
    'https://172.20.1.1/x',
    'https://192.168.0.10/x',
    'https://169.254.169.254/latest/meta-data',
    'https://metadata.google.internal/x',
    'https://100.64.1.1/x',
    'https://[::1]/x',
    'https://[fe80::1]/x',
    'https://[fd00::5]/x',
    'https://[::ffff:127.0.0.1]/x',
    'https://0.0.0.0/x',
    'https://224.0.0.1/x',
    'https://nowhere.invalid/x',
  ])('refuses %s at creation', async (url) => {
    const e = await failure(svc.client.createEndpoint({ url, events: ['transfer.completed'] }, h.ctx('co-ssrf')));
    expect(e.code).toBe('INVALID_REQUEST');
    expect((e.details as { fields: Array<{ path: string }> }).fields.map((f) => f.path)).toEqual(['url']);
  });

  it('refuses a private target on update, and re-checks at delivery time (DNS rebinding) without connecting', async () => {
    const co = `co-${randomUUID()}`;
    const { endpoint: ep } = await svc.client.createEndpoint({ url: 'https://hooks.example.test/in', events: ['transfer.completed'] }, h.ctx(co));
    expect(ep!.url).toBe('https://hooks.example.test/in');
    const upd = await failure(
      svc.client.updateEndpoint({ id: ep!.id, url: 'https://10.1.1.1/x', setEvents: false, events: [], clearDescription: false }, h.ctx(co)),
    );
    expect(upd.code).toBe('INVALID_REQUEST');
    await svc.client.testEndpoint({ id: ep!.id }, h.ctx(co));
    const d = await eventually(async () => {
      const [x] = (await svc.client.listDeliveries({ endpointId: ep!.id, limit: 5 }, h.ctx(co))).items;
      return x && x.attempts >= 1 ? x : undefined;
    });
    expect(d.status).toBe('PENDING');
    expect(d.lastError).toMatch(/^target refused: /);
    expect(d.responseStatus).toBeUndefined();
    expect(lookups.filter((l) => l === 'hooks.example.test').length).toBeGreaterThanOrEqual(2);
    await svc.client.deleteEndpoint({ id: ep!.id }, h.ctx(co));
  });
});
