import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { verifyWebhook, WebhookReceiver } from '../support/webhook-receiver.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * Counterparties (payees, docs/counterparties.md) end to end: the gateway, the transfer service, the
 * sandbox's Bre-B directory and ACH rail (its prenotes and their signed callbacks through the
 * gateway's /webhooks/rails/ach), and the webhook service, whose `counterparty.*` deliveries are
 * verified with the Standard Webhooks library. Every answer is checked against GET /openapi.json.
 */
describe('counterparties end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const rx = new WebhookReceiver('/counterparty-events');
  let secret = '';
  const post = (path: string, body: unknown) => stack.http('POST', path, { token: co.writeKey, body });
  const get = (path: string) => stack.http('GET', path, { token: co.readKey });

  /** A fresh account number for the sandbox's default prenote rules: ending in 17 → R17, else accepted. */
  const accountEndingIn = (suffix: string) => `6${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}${suffix}`;
  const bankAccount = (accountNumber: string) => ({
    bankId: 1,
    accountTypeId: 20,
    accountNumber,
    documentTypeId: 1,
    documentNumber: '1020304050',
    holderFirstName: 'Ana María',
    holderLastName: 'Pérez Gómez',
  });

  /** Polls GET /counterparties/{id} until its verification leaves PENDING (deadline 20 s). */
  async function decided(id: string): Promise<any> {
    return eventually(async () => {
      const r = await get(`/counterparties/${id}`);
      expect(r.status).toBe(200);
      return r.body.verification.status === 'PENDING' ? undefined : r.body;
    }, 20_000);
  }

  beforeAll(async () => {
    stack = await startStack({
      transfers: true,
      webhooks: true,
      // A prenote decided in 300 ms (2 s by default). The sweeper would ask the rail only after 10 minutes:
      // within the tests' deadlines only the rail's signed callback, through the gateway, can decide it.
      sandboxEnv: { SANDBOX_ACH_PRENOTE_MS: '300' },
      transferEnv: { COUNTERPARTY_PRENOTE_CHECK_SECONDS: '600' },
    });
    co = await stack.provision('Pagos a Proveedores S.A.S.');
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await rx.start();
    const ep = await post('/webhooks/endpoints', { url: rx.url, events: ['counterparty.verified', 'counterparty.verification_failed'] });
    expect(ep.status).toBe(201);
    secret = ep.body.secret;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await rx.stop();
  });

  it('a bank account the bank refuses (account ending in 17): PENDING, then FAILED with R17 and its reason; counterparty.verification_failed delivered and verified', async () => {
    const n = accountEndingIn('17');
    const created = await post('/counterparties', { name: 'Proveedor rechazado', bankAccount: bankAccount(n), tags: ['proveedores'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      rail: 'ACH',
      bankAccount: { bankName: 'Bancolombia', accountNumberMasked: `****${n.slice(-4)}` },
      verification: { status: 'PENDING', method: 'PRENOTE' },
    });
    expect(created.text).not.toContain(n);

    const c = await decided(created.body.id);
    expect(c.verification).toEqual({
      status: 'FAILED',
      method: 'PRENOTE',
      reasonCode: 'R17',
      reason: expect.stringMatching(/\S/),
      requestedAt: created.body.verification.requestedAt,
      decidedAt: expect.any(String),
    });

    const [hit] = await eventually(async () => {
      const hits = rx.hits.filter((h) => h.body.data?.id === c.id);
      return hits.length > 0 ? hits : undefined;
    }, 20_000);
    expect(verifyWebhook(secret, hit!)).toBe(true);
    expect(verifyWebhook(secret, { ...hit!, raw: hit!.raw.replace('R17', 'R03') })).toBe(false);
    expect(hit!.body.type).toBe('counterparty.verification_failed');
    // The payload is the counterparty as the API shows it.
    expect(hit!.body.data).toEqual(c);
    expect(hit!.raw).not.toContain(n);

    // Verified again: a new prenote (202 PENDING), refused again by the rail.
    const again = await post(`/counterparties/${c.id}/verify`, {});
    expect(again.status).toBe(202);
    expect(again.body.verification).toMatchObject({ status: 'PENDING', reasonCode: null, reason: null, decidedAt: null });
    expect((await decided(c.id)).verification).toMatchObject({ status: 'FAILED', reasonCode: 'R17' });
  });

  it('a normal bank account: its prenote accepted, VERIFIED; counterparty.verified delivered', async () => {
    const created = await post('/counterparties', { name: 'Proveedor aceptado', bankAccount: bankAccount(accountEndingIn('42')) });
    expect(created.status).toBe(201);
    expect(created.body.verification.status).toBe('PENDING');
    const c = await decided(created.body.id);
    expect(c.verification).toMatchObject({ status: 'VERIFIED', method: 'PRENOTE', reasonCode: null, reason: null, decidedAt: expect.any(String) });
    const [hit] = await eventually(async () => {
      const hits = rx.hits.filter((h) => h.body.data?.id === c.id);
      return hits.length > 0 ? hits : undefined;
    }, 20_000);
    expect(hit!.body.type).toBe('counterparty.verified');
    expect(verifyWebhook(secret, hit!)).toBe(true);
  });

  it('a Bre-B key verified by the directory lookup, listed by status, renamed, deleted', async () => {
    const resolved = await post('/transfers/resolve-key', { keyValue: '3005556677' });
    expect(resolved.status).toBe(200);
    const { fullName, idValue } = resolved.body.recipient;
    const created = await post('/counterparties', {
      name: 'Proveedor Bre-B',
      brebKey: { keyType: 'AUTO', keyValue: '3005556677' },
      documentTypeId: 1,
      documentNumber: idValue,
      holderName: fullName,
      tags: ['breb'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      rail: 'BREB',
      brebKey: { keyType: 'PHONE', keyValue: '3005556677' },
      bankAccount: null,
      holderName: fullName,
      verification: { status: 'VERIFIED', method: 'DIRECTORY', reasonCode: null, decidedAt: expect.any(String) },
    });
    const id = created.body.id;
    expect((await get('/counterparties?status=VERIFIED&rail=BREB')).body.items.map((c: { id: string }) => c.id)).toEqual([id]);

    // Verified again: the directory answers in the request (200, decided).
    const again = await post(`/counterparties/${id}/verify`, {});
    expect(again.status).toBe(200);
    expect(again.body.verification).toMatchObject({ status: 'VERIFIED', method: 'DIRECTORY' });
    expect(again.body.verification.requestedAt > created.body.verification.requestedAt).toBe(true);

    const renamed = await stack.http('PATCH', `/counterparties/${id}`, { token: co.writeKey, body: { name: 'Proveedor Bre-B (nuevo)' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Proveedor Bre-B (nuevo)', verification: again.body.verification });

    const deleted = await stack.http('DELETE', `/counterparties/${id}`, { token: co.writeKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body.id).toBe(id);
    const gone = await get(`/counterparties/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe('COUNTERPARTY_NOT_FOUND');

    // Its verified webhook was delivered when it was created.
    await eventually(async () => rx.hits.some((h) => h.body.type === 'counterparty.verified' && h.body.data?.id === id), 20_000);
  });
});
