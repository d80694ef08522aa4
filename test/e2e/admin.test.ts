import { randomUUID } from 'node:crypto';
import { signPayload } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { fetchDocumented } from '../support/openapi-check.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Company = Awaited<ReturnType<Stack['provision']>>;

/** The providers' signing secret outside production (the services' default). */
const PROVIDER_SECRET = 'dev-rail-callback-secret';

/**
 * The operator's reads under /admin (a company, its API keys and dashboard users, money exceptions)
 * and the resolution of an exception, through the real gateway, transfer and deposit services,
 * ledger and sandbox (CONTRACT §4, §10). Every answer is checked against GET /openapi.json (stack.http).
 */
describe('operator reads and money exceptions', () => {
  let stack: Stack;
  let co: Company;

  /** A provider's signed callback straight to the gateway, as the rail or the PSE gateway sends it. */
  const providerCallback = (path: string, body: unknown) => {
    const raw = JSON.stringify(body);
    return fetchDocumented(`${stack.gateway.url}${path}`, {
      method: 'POST',
      body: raw,
      headers: { 'content-type': 'application/json', 'x-provider-signature': signPayload(PROVIDER_SECRET, raw, Math.floor(Date.now() / 1000)) },
    });
  };
  const achAvailable = async () => {
    const r = await stack.http('GET', '/wallets/balance', { token: co.readKey });
    return BigInt(r.body.wallets.find((w: { rail: string }) => w.rail === 'ACH').availableCents);
  };

  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true });
    co = await stack.provision('Operaciones Ñandú S.A.S.', { taxRegime: 'COMMON' });
    expect((await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 })).status).toBe(200);
    expect((await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 5_000_000, reference: 'seed-breb' })).status).toBe(201);
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('GET /admin/companies/{id}: the company as provisioned and changed; unknown and malformed ids are 404 COMPANY_NOT_FOUND', async () => {
    const r = await stack.admin('GET', `/admin/companies/${co.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ...co.raw, rateLimitMultiplier: 1000, updatedAt: expect.any(String) });
    expect(Date.parse(r.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(r.body.createdAt));
    for (const id of [randomUUID(), 'not-a-company']) {
      const missing = await stack.admin('GET', `/admin/companies/${id}`);
      expect([missing.status, missing.body.error]).toEqual([404, 'COMPANY_NOT_FOUND']);
    }
    const byKey = await stack.http('GET', `/admin/companies/${co.id}`, { token: co.readKey });
    expect([byKey.status, byKey.body.error]).toEqual([403, 'API_KEY_AUTH_NOT_ALLOWED']);
  });

  it('GET /admin/companies/{id}/api-keys lists keys without their secrets; a revoked key shows revokedAt and stops working', async () => {
    const issued = await stack.admin('POST', `/admin/companies/${co.id}/api-keys`, { scope: 'READ', label: 'tablero-contable' });
    expect(issued.status).toBe(201);
    const list = await stack.admin('GET', `/admin/companies/${co.id}/api-keys`);
    expect(list.status).toBe(200);
    expect(list.body.items.find((k: { id: string }) => k.id === issued.body.id)).toEqual({
      id: issued.body.id,
      prefix: issued.body.prefix,
      scope: 'READ',
      label: 'tablero-contable',
      apiVersion: issued.body.apiVersion,
      createdAt: issued.body.createdAt,
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(list.body.items.map((k: { label: string }) => k.label)).toEqual(expect.arrayContaining(['e2e-write', 'e2e-read', 'tablero-contable']));
    expect(list.text).not.toContain(issued.body.key);

    expect((await stack.http('GET', '/wallets/balance', { token: issued.body.key })).status).toBe(200);
    const revoked = await stack.admin('DELETE', `/admin/companies/${co.id}/api-keys/${issued.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: issued.body.id, revokedAt: expect.any(String) });
    const refused = await stack.http('GET', '/wallets/balance', { token: issued.body.key });
    expect([refused.status, refused.body.error]).toEqual([401, 'INVALID_API_KEY']);
    const after = await stack.admin('GET', `/admin/companies/${co.id}/api-keys`);
    expect(after.body.items.find((k: { id: string }) => k.id === issued.body.id).revokedAt).toBe(revoked.body.revokedAt);
  });

  it('GET /admin/companies/{id}/users lists dashboard users without their secrets; a disabled one shows disabledAt', async () => {
    const u = await stack.admin('POST', `/admin/companies/${co.id}/users`, {
      email: `revisora.${co.id.slice(0, 8)}@empresa.co`,
      password: 'Clave-segura-2026!',
      role: 'VIEWER',
    });
    expect(u.status).toBe(201);
    const list = await stack.admin('GET', `/admin/companies/${co.id}/users`);
    expect(list.status).toBe(200);
    expect(list.body.items).toContainEqual({
      id: u.body.id,
      email: u.body.email,
      role: 'VIEWER',
      createdAt: u.body.createdAt,
      activatedAt: expect.any(String),
      disabledAt: null,
    });
    expect(list.text).not.toContain(u.body.totpSecret);
    await stack.admin('DELETE', `/admin/companies/${co.id}/users/${u.body.id}`);
    const after = await stack.admin('GET', `/admin/companies/${co.id}/users`);
    expect(after.body.items.find((x: { id: string }) => x.id === u.body.id).disabledAt).toEqual(expect.any(String));
  });

  it('outside production the shared token invites and disables an operator directly (no second operator exists to approve)', async () => {
    const email = `operadora.${co.id.slice(0, 8)}@billetera.co`;
    const invited = await stack.admin('POST', '/admin/operators', { name: 'Operadora de prueba', email });
    expect(invited.status).toBe(201);
    const off = await stack.admin('DELETE', `/admin/operators/${invited.body.id}`);
    expect(off).toMatchObject({ status: 200, body: { id: invited.body.id, email, status: 'DISABLED' } });
    expect((await stack.admin('DELETE', `/admin/operators/${invited.body.id}`)).status).toBe(200);
  });
  it('a rail outcome that contradicts a completed transfer opens a money exception; the operator lists, filters and dismisses it', async () => {
    const key = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3004445566' } });
    const sent = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: {
        amount: 120_000,
        destination: { brebKey: { type: key.body.keyType, value: key.body.keyValue } },
        targetName: key.body.recipient.fullName,
        targetDocument: key.body.recipient.idValue,
      },
    });
    expect(sent.status).toBe(201);
    await eventually(
      async () => (await stack.http('GET', `/wallets/transactions/${sent.body.id}`, { token: co.readKey })).body.status === 'COMPLETED',
      15_000,
      100,
    );

    // The rail, late and wrong, says the completed payout failed: acknowledged, nothing changes, an exception opens.
    const callback = await providerCallback('/webhooks/rails/breb', {
      eventId: `evt-${randomUUID()}`,
      transactionId: sent.body.id,
      providerTransferId: 'brb-late',
      rail: 'BREB',
      status: 'FAILED',
      errorMessage: 'Rechazada por el receptor',
      occurredAt: new Date().toISOString(),
    });
    expect(callback.status).toBe(200);
    expect(await callback.json()).toEqual({ received: true, duplicate: true });
    expect((await stack.http('GET', `/wallets/transactions/${sent.body.id}`, { token: co.readKey })).body.status).toBe('COMPLETED');

    const open = await eventually(
      async () => {
        const r = await stack.admin('GET', '/admin/exceptions?status=OPEN&kind=RAIL_FAILED_AFTER_COMPLETION');
        return r.body.items.find((e: { resourceId: string }) => e.resourceId === sent.body.id);
      },
      10_000,
      100,
    );
    expect(open).toMatchObject({
      id: expect.stringMatching(/^exc_[0-9a-f]{32}$/),
      kind: 'RAIL_FAILED_AFTER_COMPLETION',
      status: 'OPEN',
      rail: 'BREB',
      companyId: co.id,
      resolvedAt: null,
      resolvedBy: null,
      action: null,
      note: null,
      actions: ['dismiss'],
    });
    expect((await stack.admin('GET', '/admin/exceptions')).body.items.map((e: { id: string }) => e.id)).toContain(open.id);
    expect((await stack.admin('GET', '/admin/exceptions?kind=PAID_AFTER_EXPIRY')).body.items.map((e: { id: string }) => e.id)).not.toContain(open.id);
    const page = await stack.admin('GET', '/admin/exceptions?limit=1');
    expect(page.body.items).toHaveLength(1);

    const note = 'El riel corrigió su reporte: la transferencia sí se pagó.';
    const resolved = await stack.admin('POST', `/admin/exceptions/${open.id}/resolve`, { action: 'dismiss', note });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ id: open.id, status: 'RESOLVED', action: 'dismiss', note, resolvedBy: 'admin', resolvedAt: expect.any(String) });
    const again = await stack.admin('POST', `/admin/exceptions/${open.id}/resolve`, { action: 'dismiss', note });
    expect([again.status, again.body.error]).toEqual([409, 'EXCEPTION_NOT_OPEN']);
    const unknown = await stack.admin('POST', `/admin/exceptions/exc_${'0'.repeat(32)}/resolve`, { action: 'dismiss', note });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'EXCEPTION_NOT_FOUND']);
    expect((await stack.admin('GET', '/admin/exceptions?status=RESOLVED')).body.items.map((e: { id: string }) => e.id)).toContain(open.id);
  });

  it('a PSE payment confirmed after the link failed (signed provider callbacks) opens an exception; crediting it pays the company once', async () => {
    const dep = await stack.http('POST', '/deposits/pse', {
      token: co.writeKey,
      body: {
        amountCents: 200_000,
        payerDocumentTypeId: 1,
        payerDocumentNumber: '1020304050',
        payerFirstName: 'Ana',
        payerLastName: 'Ruiz',
        payerEmail: 'ana@example.com',
      },
    });
    expect(dep.status).toBe(201);
    const failed = {
      eventId: `pse-${randomUUID()}`,
      depositId: dep.body.id,
      providerTransferId: null,
      status: 'FAILED',
      errorMessage: 'Fondos insuficientes',
      occurredAt: new Date().toISOString(),
    };
    const first = await providerCallback('/webhooks/pse', failed);
    expect([first.status, await first.json()]).toEqual([200, { received: true, duplicate: false }]);
    const repeat = await providerCallback('/webhooks/pse', failed);
    expect([repeat.status, await repeat.json()]).toEqual([200, { received: true, duplicate: true }]);

    const before = await achAvailable();
    const paid = await providerCallback('/webhooks/pse', {
      eventId: `pse-${randomUUID()}`,
      depositId: dep.body.id,
      providerTransferId: 'pse-tx-late',
      status: 'PAID',
      payerBank: 'Bancolombia',
      paidAt: new Date().toISOString(),
    });
    expect(paid.status).toBe(200);
    const open = await eventually(
      async () => {
        const r = await stack.admin('GET', '/admin/exceptions?status=OPEN&kind=PAID_AFTER_FAILURE');
        return r.body.items.find((e: { resourceId: string }) => e.resourceId === dep.body.id);
      },
      10_000,
      100,
    );
    expect(open).toMatchObject({ rail: 'PSE', companyId: co.id, actions: ['credit', 'dismiss'] });
    expect(await achAvailable()).toBe(before); // nothing credited on a contradiction

    const resolved = await stack.admin('POST', `/admin/exceptions/${open.id}/resolve`, { action: 'credit', note: 'El pagador sí pagó: se abona.' });
    expect(resolved.body).toMatchObject({ status: 'RESOLVED', action: 'credit' });
    const listed = await eventually(
      async () => {
        const r = await stack.http('GET', '/deposits?rail=PSE&limit=100', { token: co.readKey });
        return r.body.deposits.find((d: { id: string; status: string }) => d.id === dep.body.id && d.status === 'ASSIGNED');
      },
      10_000,
      100,
    );
    expect(await achAvailable()).toBe(before + BigInt(listed.netAmountCents));
  });
});
