import { signPayload } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { fetchDocumented } from '../support/openapi-check.js';
import { crc16, decodeQrPng } from '../support/qr.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/** Aggregator collect keys through the gateway, collect-key service, sandbox network and deposit listing. */
describe('collect keys end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const post = (path: string, body: unknown, key = co.writeKey) => stack.http('POST', path, { token: key, body });
  const incoming = (keyValue: string, amountCents: number) =>
    fetch(`${stack.sandbox!.url}/sandbox/breb/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ keyValue, amountCents, payerName: 'Pedro Pérez', payerDocument: 'CC 79123456', payerBank: 'Nequi' }),
    });
  const brebAvailable = async () => {
    const r = await stack.http('GET', '/wallets/balance', { token: co.readKey });
    return BigInt(r.body.wallets.find((w: any) => w.rail === 'BREB').availableCents);
  };

  beforeAll(async () => {
    stack = await startStack({ collectKeys: true });
    co = await stack.provision('Agregador S.A.S.');
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('issues a key per customer, idempotently, and finds it by ext:', async () => {
    const r = await post('/breb/collect-keys', { externalId: 'cliente-1', name: 'Tienda Uno' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^bkey_/),
      externalId: 'cliente-1',
      name: 'Tienda Uno',
      key: { type: 'ALPHANUM', value: expect.stringMatching(/^@[a-z0-9]{10}$/) },
      state: 'ACTIVE',
      createdAt: expect.any(String),
      deletedAt: null,
    });
    const again = await post('/breb/collect-keys', { externalId: 'cliente-1', name: 'Tienda Uno' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(r.body.id);
    expect((await stack.http('GET', '/breb/collect-keys/ext:cliente-1', { token: co.readKey })).body.id).toBe(r.body.id);
    const other = await stack.provision('Otro Agregador S.A.S.');
    const taken = await post('/breb/collect-keys', { externalId: 'x', name: 'X', keyValue: r.body.key.value }, other.writeKey);
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe('KEY_ALREADY_REGISTERED');
    const foreign = await stack.http('GET', `/breb/collect-keys/${r.body.id}`, { token: other.readKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('KEY_NOT_FOUND');
    for (const bad of [
      { externalId: '', name: 'x' },
      { externalId: 'a b', name: 'x' },
      { externalId: 'ok', name: '' },
      { externalId: 'ok', name: 'x', keyValue: '@a' },
      { externalId: 'ok', name: 'x', keyType: 'PHONE' },
    ]) {
      expect((await post('/breb/collect-keys', bad)).status).toBe(400);
    }
  });

  it('issues one static QR per key whose PNG decodes to an EMVCo payload with a valid CRC', async () => {
    const k = (await post('/breb/collect-keys', { externalId: 'cliente-qr', name: 'Panadería QR' })).body;
    const q1 = await post(`/breb/collect-keys/${k.id}/qr`, undefined);
    expect(q1.status).toBe(201);
    expect(q1.body).toEqual({
      qr: { id: expect.stringMatching(/^qr_/), type: 'STATIC', reference: expect.any(String), isPaid: false, createdAt: expect.any(String) },
      reused: false,
    });
    const q2 = await post(`/breb/collect-keys/${k.id}/qr`, undefined);
    expect(q2.status).toBe(200);
    expect(q2.body.reused).toBe(true);
    expect(q2.body.qr.id).toBe(q1.body.qr.id);
    const res = await fetchDocumented(`${stack.gateway.url}/breb/collect-keys/qr/${q1.body.qr.id}.png`, { headers: { authorization: `Bearer ${co.readKey}` } });
    // The error body with the status when it is not 200 (a 503 was seen once on a loaded machine).
    expect([res.status, res.status === 200 ? '' : await res.clone().text()]).toEqual([200, '']);
    expect(res.headers.get('content-type')).toBe('image/png');
    const decoded = decodeQrPng(Buffer.from(await res.arrayBuffer()));
    expect(decoded).not.toBeNull();
    const payload = decoded!;
    expect(payload.startsWith('000201')).toBe(true);
    expect(payload).toContain(k.key.value);
    expect(payload.slice(-8, -4)).toBe('6304');
    expect(payload.slice(-4)).toBe(crc16(payload.slice(0, -4)));
    const other = await stack.provision('Sin QR S.A.S.');
    const foreignPng = await stack.http('GET', `/breb/collect-keys/qr/${q1.body.qr.id}.png`, { token: other.readKey });
    expect(foreignPng.status).toBe(404);
    expect(foreignPng.body.error).toBe('QR_NOT_FOUND');
  });

  it('credits an inbound payment once even when notified three times, and lists it with the key', async () => {
    const k = (await post('/breb/collect-keys', { externalId: 'cliente-pago', name: 'Frutería' })).body;
    const before = await brebAvailable();
    const sent = await incoming(k.key.value, 250_000);
    expect(sent.status).toBe(202);
    const { providerTransferId } = (await sent.json()) as { providerTransferId: string };
    for (let i = 0; i < 2; i++) await fetch(`${stack.sandbox!.url}/sandbox/callbacks/${providerTransferId}/redeliver`, { method: 'POST' });
    const dep = await eventually(
      async () => {
        const r = await stack.http('GET', `/deposits?rail=BREB&externalId=cliente-pago`, { token: co.readKey });
        return r.body.deposits?.[0];
      },
      15_000,
      100,
    );
    expect(dep).toMatchObject({
      status: 'ASSIGNED',
      source: 'BREB',
      amountCents: '250000',
      providerTransferId,
      brebKey: { id: k.id, externalId: 'cliente-pago', name: 'Frutería', value: k.key.value },
      payerName: 'Pedro Pérez',
      payerBank: 'Nequi',
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(await brebAvailable()).toBe(before + BigInt(dep.netAmountCents));
    const byKey = await stack.http('GET', `/deposits?brebKeyId=${k.id}`, { token: co.readKey });
    expect(byKey.body.deposits).toHaveLength(1);
  });

  it('charges BREB_INFLOW fees with IVA for a company in the common regime', async () => {
    const c = await stack.provision('Régimen Común S.A.S.', { taxRegime: 'COMMON' });
    await stack.admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('PUT', '/admin/fees/BREB_INFLOW', { fixedFeeCents: 1_000, variableBps: 0, companyId: c.id });
    const k = (await post('/breb/collect-keys', { externalId: 'iva-1', name: 'Con IVA' }, c.writeKey)).body;
    expect((await incoming(k.key.value, 100_000)).status).toBe(202);
    const dep = await eventually(async () => (await stack.http('GET', '/deposits?rail=BREB', { token: c.readKey })).body.deposits?.[0], 15_000, 100);
    // fee 1,000 + IVA 19% = 190 → net 98,810
    expect(dep).toMatchObject({ status: 'ASSIGNED', amountCents: '100000', feeAmountCents: '1000', ivaAmountCents: '190', netAmountCents: '98810' });
    const bal = await stack.http('GET', '/wallets/balance', { token: c.readKey });
    expect(bal.body.wallets.find((w: any) => w.rail === 'BREB').availableCents).toBe('98810');
  });

  it('a payment to a deleted key is UNASSIGNED and not credited; delete is idempotent', async () => {
    const k = (await post('/breb/collect-keys', { externalId: 'cliente-baja', name: 'Cerrado' })).body;
    const d1 = await stack.http('DELETE', `/breb/collect-keys/${k.id}`, { token: co.writeKey });
    expect(d1.status).toBe(200);
    expect(d1.body).toMatchObject({ state: 'DELETED', deletedAt: expect.any(String) });
    const d2 = await stack.http('DELETE', `/breb/collect-keys/${k.id}`, { token: co.writeKey });
    expect(d2.body).toEqual(d1.body);
    expect((await post(`/breb/collect-keys/${k.id}/qr`, undefined)).body.error).toBe('KEY_NOT_ACTIVE');
    const before = await brebAvailable();
    expect((await incoming(k.key.value, 90_000)).status).toBe(202);
    const dep = await eventually(
      async () => {
        const r = await stack.http('GET', `/deposits?status=UNASSIGNED&externalId=cliente-baja`, { token: co.readKey });
        return r.body.deposits?.[0];
      },
      15_000,
      100,
    );
    expect(dep).toMatchObject({ status: 'UNASSIGNED', brebKey: { id: k.id } });
    expect(await brebAvailable()).toBe(before);
    // The customer gets a new key; ext: finds it.
    const fresh = await post('/breb/collect-keys', { externalId: 'cliente-baja', name: 'Reabierto' });
    expect(fresh.status).toBe(201);
    expect((await stack.http('GET', '/breb/collect-keys/ext:cliente-baja', { token: co.readKey })).body.id).toBe(fresh.body.id);
  });

  it('admin suspends a key (its payments go UNASSIGNED) and reactivates it; errors and credentials', async () => {
    const k = (await post('/breb/collect-keys', { externalId: 'cliente-susp', name: 'Suspendida' })).body;
    const patch = (id: string, body: unknown, token = stack.gateway.adminToken) => stack.http('PATCH', `/admin/collect-keys/${id}`, { token, body });
    const s1 = await patch(k.id, { state: 'SUSPENDED' });
    expect(s1.status).toBe(200);
    expect(s1.body).toMatchObject({ id: k.id, state: 'SUSPENDED' });
    expect((await post(`/breb/collect-keys/${k.id}/qr`, undefined)).body.error).toBe('KEY_NOT_ACTIVE');
    const before = await brebAvailable();
    expect((await incoming(k.key.value, 40_000)).status).toBe(202);
    await eventually(
      async () => (await stack.http('GET', '/deposits?status=UNASSIGNED&externalId=cliente-susp', { token: co.readKey })).body.deposits?.[0],
      15_000,
      100,
    );
    expect(await brebAvailable()).toBe(before);
    expect((await patch(k.id, { state: 'ACTIVE' })).body.state).toBe('ACTIVE');
    for (const [body, status] of [
      [{ state: 'DELETED' }, 400],
      [{}, 400],
      [{ state: 'ACTIVE', x: 1 }, 400],
    ] as const) {
      expect((await patch(k.id, body)).status).toBe(status);
    }
    expect((await patch('bkey_doesnotexist000000000000', { state: 'ACTIVE' })).body.error).toBe('KEY_NOT_FOUND');
    expect((await patch('not-a-key', { state: 'ACTIVE' })).body.error).toBe('KEY_NOT_FOUND');
    expect((await patch(k.id, { state: 'ACTIVE' }, co.writeKey)).body.error).toBe('API_KEY_AUTH_NOT_ALLOWED');
    expect((await patch(k.id, { state: 'ACTIVE' }, 'wrong-admin-token')).status).toBe(401);
  });

  it("the network's signed inbound-payment notification, posted straight to the gateway, credits once; its repeat is a duplicate", async () => {
    const k = await post('/breb/collect-keys', { externalId: 'cliente-directo', name: 'Directo' });
    expect(k.status).toBe(201);
    const before = await brebAvailable();
    const raw = JSON.stringify({
      eventId: `net-${Date.now()}`,
      providerTransferId: `brb_in_direct_${Date.now()}`,
      keyValue: k.body.key.value,
      amountCents: 70_000,
      payerName: 'Pedro Pérez',
      payerDocument: 'CC 79123456',
      payerBank: 'Nequi',
      receivedAt: new Date().toISOString(),
    });
    const notify = () =>
      fetchDocumented(`${stack.gateway.url}/webhooks/breb/incoming`, {
        method: 'POST',
        body: raw,
        headers: { 'content-type': 'application/json', 'x-provider-signature': signPayload('dev-rail-callback-secret', raw, Math.floor(Date.now() / 1000)) },
      });
    const first = await notify();
    expect([first.status, await first.json()]).toEqual([200, { received: true, duplicate: false }]);
    const again = await notify();
    expect([again.status, await again.json()]).toEqual([200, { received: true, duplicate: true }]);
    const listed = await eventually(
      async () => (await stack.http('GET', '/deposits?externalId=cliente-directo', { token: co.readKey })).body.deposits?.[0],
      15_000,
      100,
    );
    expect(listed).toMatchObject({ status: 'ASSIGNED', source: 'BREB', amountCents: '70000', brebKey: { id: k.body.id, externalId: 'cliente-directo' } });
    expect(await brebAvailable()).toBe(before + BigInt(listed.netAmountCents));
  });

  it('refuses a forged inbound-payment notification at the gateway', async () => {
    const r = await fetchDocumented(`${stack.gateway.url}/webhooks/breb/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
      body: JSON.stringify({ eventId: 'e', providerTransferId: 'brb_in_forged', keyValue: '@x', amountCents: 1 }),
    });
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: string }).error).toBe('INVALID_SIGNATURE');
  });

  it('pages through keys with a cursor and filters by state', async () => {
    for (let i = 0; i < 5; i++) await post('/breb/collect-keys', { externalId: `pag-${i}`, name: `Cliente ${i}` });
    const seen = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = await stack.http('GET', `/breb/collect-keys?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: co.readKey });
      expect(r.status).toBe(200);
      for (const k of r.body.items) seen.add(k.id);
      cursor = r.body.nextCursor;
      pages++;
    } while (cursor && pages < 20);
    expect(pages).toBeGreaterThan(2);
    expect(seen.size).toBeGreaterThanOrEqual(8);
    const deleted = await stack.http('GET', '/breb/collect-keys?state=DELETED', { token: co.readKey });
    expect(deleted.body.items.every((k: any) => k.state === 'DELETED')).toBe(true);
    expect((await stack.http('GET', '/breb/collect-keys?limit=201', { token: co.readKey })).status).toBe(400);
  });
});
