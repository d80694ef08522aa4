import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { PSE_PAYER } from '../support/fixtures.js';
import { verifyWebhook, WebhookReceiver } from '../support/webhook-receiver.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/** Outgoing webhooks through the real gateway, webhook service, transfer and deposit services, ledger and sandbox. */
describe('webhooks end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  let other: Awaited<ReturnType<Stack['provision']>>;
  const rx = new WebhookReceiver();
  let endpoint: any;

  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true, webhooks: true });
    co = await stack.provision('Ganchos S.A.S.', { taxRegime: 'COMMON' });
    other = await stack.provision('Otra S.A.S.', { taxRegime: 'COMMON' });
    for (const c of [co, other]) await stack.admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 10_000_000, reference: 'seed-breb' });
    await rx.start();
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    await rx.stop();
  });

  it('registers an endpoint with a WRITE key; the secret is shown once', async () => {
    const byRead = await stack.http('POST', '/webhooks/endpoints', { token: co.readKey, body: { url: rx.url, events: ['transfer.completed'] } });
    expect(byRead.status).toBe(403);
    expect(byRead.body.error).toBe('INSUFFICIENT_SCOPE');

    const r = await stack.http('POST', '/webhooks/endpoints', {
      token: co.writeKey,
      body: { url: rx.url, events: ['transfer.completed', 'deposit.paid'], description: 'ERP' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^we_/),
      url: rx.url,
      description: 'ERP',
      events: ['transfer.completed', 'deposit.paid'],
      enabled: true,
      previousSecretExpiresAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    endpoint = r.body;
    const { secret: _secret, ...shown } = endpoint;
    const list = await stack.http('GET', '/webhooks/endpoints', { token: co.readKey });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ items: [shown] });
    const one = await stack.http('GET', `/webhooks/endpoints/${endpoint.id}`, { token: co.readKey });
    expect(one.body).toEqual(shown);
    expect(one.text).not.toContain(endpoint.secret);
  });

  it('a completed transfer reaches the receiver as transfer.completed, signed, in the API shape', async () => {
    const resolved = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3001112233' } });
    const sent = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: {
        amount: 250_000,
        destination: { brebKey: { type: resolved.body.keyType, value: resolved.body.keyValue } },
        targetName: resolved.body.recipient.fullName,
        targetDocument: resolved.body.recipient.idValue,
        reference: 'wh-1',
      },
    });
    expect(sent.status).toBe(201);
    const hit = await eventually(async () => rx.ofType('transfer.completed').find((h) => h.body.data.id === sent.body.id), 20_000, 100);
    expect(verifyWebhook(endpoint.secret, hit)).toBe(true);
    expect(verifyWebhook(endpoint.secret, { ...hit, raw: hit.raw.replace('wh-1', 'wh-2') })).toBe(false);
    expect(hit.headers['webhook-id']).toBe(hit.body.id);
    expect(hit.headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(Object.keys(hit.body).sort()).toEqual(['createdAt', 'data', 'id', 'type']);
    // Every field of the §2.5 send response, with the final status.
    expect(hit.body.data).toMatchObject({ ...sent.body, status: 'COMPLETED' });
    expect(hit.body.data.completedAt).toEqual(expect.any(String));
    // Not subscribed: no transfer.created.
    expect(rx.ofType('transfer.created')).toEqual([]);
  });

  it('a paid PSE deposit reaches the receiver as deposit.paid with the GET /deposits shape', async () => {
    const created = await stack.http('POST', '/deposits/pse', {
      token: co.writeKey,
      body: {
        amountCents: 500_000,
        ...PSE_PAYER,
        internalRef: 'pedido-wh',
      },
    });
    expect(created.status).toBe(201);
    const paid = await fetch(`${stack.sandbox!.url}/sandbox/pse/${created.body.id}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'APPROVED', payerBank: 'Bancolombia' }),
    });
    expect(paid.status).toBe(200);
    const hit = await eventually(async () => rx.ofType('deposit.paid').find((h) => h.body.data.id === created.body.id), 20_000, 100);
    expect(verifyWebhook(endpoint.secret, hit)).toBe(true);
    const listed = await eventually(
      async () => {
        const r = await stack.http('GET', '/deposits?limit=100', { token: co.readKey });
        return r.body.deposits.find((d: any) => d.id === created.body.id && d.status === 'ASSIGNED');
      },
      15_000,
      100,
    );
    expect(hit.body.data).toEqual(listed);
    expect(hit.body.data).toMatchObject({ status: 'ASSIGNED', amountCents: '500000', source: 'PSE', internalRef: 'pedido-wh', payerBank: 'Bancolombia' });
  });

  it('logs deliveries, replays one with the same event id, and sends a test ping', async () => {
    const log = await eventually(
      async () => {
        const r = await stack.http('GET', `/webhooks/deliveries?endpointId=${endpoint.id}&status=SUCCEEDED`, { token: co.readKey });
        return r.body.items.length >= 2 ? r : undefined;
      },
      15_000,
      100,
    );
    expect(log.status).toBe(200);
    const d = log.body.items.find((x: any) => x.eventType === 'transfer.completed');
    expect(d).toMatchObject({
      id: expect.stringMatching(/^whd_/),
      endpointId: endpoint.id,
      status: 'SUCCEEDED',
      attempts: 1,
      responseStatus: 204,
      lastError: null,
      replayOf: null,
    });
    expect(d.latencyMs).toEqual(expect.any(Number));
    expect((await stack.http('GET', `/webhooks/deliveries/${d.id}`, { token: co.readKey })).body).toEqual(d);

    const before = rx.hits.filter((h) => h.body.id === d.eventId).length;
    const replay = await stack.http('POST', `/webhooks/deliveries/${d.id}/replay`, { token: co.writeKey });
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({ replayOf: d.id, eventId: d.eventId, status: 'PENDING' });
    await eventually(async () => rx.hits.filter((h) => h.body.id === d.eventId).length === before + 1, 15_000, 100);

    const ping = await stack.http('POST', `/webhooks/endpoints/${endpoint.id}/test`, { token: co.writeKey });
    expect(ping.status).toBe(202);
    expect(ping.body.eventType).toBe('webhook.ping');
    const hit = await eventually(async () => rx.ofType('webhook.ping')[0], 15_000, 100);
    expect(hit.body.data).toEqual({ endpointId: endpoint.id, url: rx.url });
    expect(verifyWebhook(endpoint.secret, hit)).toBe(true);
  });

  it('rotates the secret: both sign during the overlap', async () => {
    const r = await stack.http('POST', `/webhooks/endpoints/${endpoint.id}/rotate-secret`, { token: co.writeKey, body: { overlapSeconds: 600 } });
    expect(r.status).toBe(200);
    expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(r.body.previousSecretExpiresAt).toEqual(expect.any(String));
    const n = rx.ofType('webhook.ping').length;
    await stack.http('POST', `/webhooks/endpoints/${endpoint.id}/test`, { token: co.writeKey });
    const hit = await eventually(async () => rx.ofType('webhook.ping')[n], 15_000, 100);
    expect(String(hit.headers['webhook-signature']).split(' ')).toEqual([expect.stringMatching(/^v1,/), expect.stringMatching(/^v1,/)]);
    expect(verifyWebhook(r.body.secret, hit)).toBe(true);
    expect(verifyWebhook(endpoint.secret, hit)).toBe(true);
    // No body: the default overlap (24 h); the rotated-from secret is the one just issued.
    const again = await stack.http('POST', `/webhooks/endpoints/${endpoint.id}/rotate-secret`, { token: co.writeKey });
    expect(again.status).toBe(200);
    expect(Date.parse(again.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(86_000_000);
    endpoint = { ...endpoint, secret: again.body.secret };
  });

  it("isolates companies: another company's endpoint and deliveries read as not found", async () => {
    const d = (await stack.http('GET', '/webhooks/deliveries', { token: co.readKey })).body.items[0];
    for (const [method, path, body] of [
      ['GET', `/webhooks/endpoints/${endpoint.id}`, undefined],
      ['PATCH', `/webhooks/endpoints/${endpoint.id}`, { enabled: false }],
      ['DELETE', `/webhooks/endpoints/${endpoint.id}`, undefined],
      ['POST', `/webhooks/endpoints/${endpoint.id}/rotate-secret`, {}],
      ['POST', `/webhooks/endpoints/${endpoint.id}/test`, undefined],
    ] as const) {
      const r = await stack.http(method, path, { token: other.writeKey, ...(body ? { body } : {}) });
      expect([method, path, r.status, r.body.error]).toEqual([method, path, 404, 'WEBHOOK_ENDPOINT_NOT_FOUND']);
      expect(r.body.message).toBe('El endpoint de webhook no existe.');
    }
    for (const [method, path] of [
      ['GET', `/webhooks/deliveries/${d.id}`],
      ['POST', `/webhooks/deliveries/${d.id}/replay`],
    ] as const) {
      const r = await stack.http(method, path, { token: other.writeKey });
      expect([path, r.status, r.body.error]).toEqual([path, 404, 'WEBHOOK_DELIVERY_NOT_FOUND']);
    }
    expect((await stack.http('GET', '/webhooks/endpoints', { token: other.readKey })).body).toEqual({ items: [] });
    expect((await stack.http('GET', '/webhooks/deliveries', { token: other.readKey })).body).toEqual({ items: [], nextCursor: null });
    // Still there for its owner.
    expect((await stack.http('GET', `/webhooks/endpoints/${endpoint.id}`, { token: co.readKey })).status).toBe(200);
  });

  it('refuses bad input with 400 INVALID_REQUEST and field details', async () => {
    const bad = async (method: string, path: string, body: unknown, token = co.writeKey) => {
      const r = await stack.http(method, path, { token, body });
      expect([path, r.status, r.body.error]).toEqual([path, 400, 'INVALID_REQUEST']);
      return (r.body.details.fields as Array<{ path: string }>).map((f) => f.path).sort();
    };
    expect(await bad('POST', '/webhooks/endpoints', { events: ['transfer.completed'] })).toEqual(['url']);
    expect(await bad('POST', '/webhooks/endpoints', { url: 'ftp://x.example/y', events: ['transfer.completed'] })).toEqual(['url']);
    expect(await bad('POST', '/webhooks/endpoints', { url: rx.url, events: ['transfer.teleported'] })).toEqual(['events.0']);
    expect(await bad('POST', '/webhooks/endpoints', { url: rx.url, events: [] })).toEqual(['events']);
    expect(await bad('POST', '/webhooks/endpoints', { url: rx.url, events: ['deposit.paid'], secret: 'mine' })).toEqual(['secret']);
    expect(await bad('PATCH', `/webhooks/endpoints/${endpoint.id}`, { enabled: 'yes' })).toEqual(['enabled']);
    expect(await bad('POST', `/webhooks/endpoints/${endpoint.id}/rotate-secret`, { overlapSeconds: 604_801 })).toEqual(['overlapSeconds']);
    const q = await stack.http('GET', '/webhooks/deliveries?status=LOST&limit=0', { token: co.readKey });
    expect(q.status).toBe(400);
    expect(q.body.details.fields.map((f: any) => f.path).sort()).toEqual(['query.limit', 'query.status']);
    const unknownId = await stack.http('GET', '/webhooks/endpoints/not-an-id', { token: co.readKey });
    expect([unknownId.status, unknownId.body.error]).toEqual([404, 'WEBHOOK_ENDPOINT_NOT_FOUND']);
  });

  it('disables and deletes an endpoint', async () => {
    const off = await stack.http('PATCH', `/webhooks/endpoints/${endpoint.id}`, { token: co.writeKey, body: { enabled: false, description: null } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ enabled: false, description: null });
    const ping = await stack.http('POST', `/webhooks/endpoints/${endpoint.id}/test`, { token: co.writeKey });
    expect([ping.status, ping.body.error]).toEqual([409, 'INVALID_STATE_TRANSITION']);
    expect((await stack.http('DELETE', `/webhooks/endpoints/${endpoint.id}`, { token: co.writeKey })).body).toEqual({ id: endpoint.id, deleted: true });
    expect((await stack.http('GET', `/webhooks/endpoints/${endpoint.id}`, { token: co.readKey })).status).toBe(404);
  });
});

/**
 * The webhook-endpoint API operation by operation, on its happy paths (each answer is checked
 * against GET /openapi.json by stack.http): create with an Idempotency-Key and its replay, list,
 * get, change every field, test pings, the delivery log page by page and by status, one delivery,
 * a replay, a rotation without overlap, delete.
 */
describe('webhook endpoints API, every operation as documented', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const rx = new WebhookReceiver();

  beforeAll(async () => {
    stack = await startStack({ webhooks: true });
    co = await stack.provision('Endpoints S.A.S.');
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await rx.start();
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await rx.stop();
  });

  it('create (idempotent), list, get, update, test, deliveries by page and status, get one, replay, rotate, delete', async () => {
    const body = { url: rx.url, events: ['transfer.completed'], enabled: true, description: 'ERP' };
    const created = await stack.http('POST', '/webhooks/endpoints', { token: co.writeKey, body, headers: { 'idempotency-key': 'we-create-1' } });
    expect(created.status).toBe(201);
    const replayed = await stack.http('POST', '/webhooks/endpoints', { token: co.writeKey, body, headers: { 'idempotency-key': 'we-create-1' } });
    expect([replayed.status, replayed.headers.get('idempotent-replayed'), replayed.body.id]).toEqual([201, 'true', created.body.id]);
    const id = created.body.id as string;

    expect((await stack.http('GET', '/webhooks/endpoints', { token: co.readKey })).body.items.map((e: { id: string }) => e.id)).toEqual([id]);
    const changed = await stack.http('PATCH', `/webhooks/endpoints/${id}`, {
      token: co.writeKey,
      body: { url: `${rx.url}?v=2`, events: ['deposit.paid', 'transfer.failed'], description: 'Contabilidad' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id, url: `${rx.url}?v=2`, events: ['deposit.paid', 'transfer.failed'], description: 'Contabilidad', enabled: true });
    expect(Date.parse(changed.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt));
    expect((await stack.http('GET', `/webhooks/endpoints/${id}`, { token: co.readKey })).body).toEqual(changed.body);

    for (let i = 0; i < 3; i++) expect((await stack.http('POST', `/webhooks/endpoints/${id}/test`, { token: co.writeKey })).status).toBe(202);
    await eventually(
      async () => {
        const r = await stack.http('GET', `/webhooks/deliveries?endpointId=${id}&status=SUCCEEDED`, { token: co.readKey });
        return r.body.items.length === 3;
      },
      15_000,
      100,
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<Stack['http']>> = await stack.http(
        'GET',
        `/webhooks/deliveries?endpointId=${id}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token: co.readKey },
      );
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((d: { id: string }) => d.id));
      cursor = page.body.nextCursor;
    } while (cursor && seen.length < 10);
    expect(new Set(seen).size).toBe(3);
    expect((await stack.http('GET', `/webhooks/deliveries?endpointId=${id}&status=FAILED`, { token: co.readKey })).body).toEqual({
      items: [],
      nextCursor: null,
    });

    const one = await stack.http('GET', `/webhooks/deliveries/${seen[0]}`, { token: co.readKey });
    expect(one.body).toMatchObject({ id: seen[0], endpointId: id, eventType: 'webhook.ping', status: 'SUCCEEDED', responseStatus: 204 });
    const replay = await stack.http('POST', `/webhooks/deliveries/${seen[0]}/replay`, { token: co.writeKey });
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({ replayOf: seen[0], eventId: one.body.eventId, endpointId: id });

    const rotated = await stack.http('POST', `/webhooks/endpoints/${id}/rotate-secret`, { token: co.writeKey, body: { overlapSeconds: 0 } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);

    expect((await stack.http('DELETE', `/webhooks/endpoints/${id}`, { token: co.writeKey })).body).toEqual({ id, deleted: true });
    expect((await stack.http('GET', '/webhooks/endpoints', { token: co.readKey })).body).toEqual({ items: [] });
  });
});
