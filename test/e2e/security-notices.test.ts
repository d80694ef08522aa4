// The company is told (docs/security.md "The company is told"), through the whole product: an operator revokes a company's API
// key and changes its limits and status; the gateway records company.security_changed in its
// outbox and mails in its mail outbox in the same transaction; its relay publishes the event to
// JetStream, the webhook service delivers it to the company's subscribed endpoint (signed, checked
// with the Standard Webhooks library as an integrator would), and the gateway's mail sender sends
// the notice to the company's active dashboard ADMINs (read back from the sandbox's SMTP sink).
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { verifyWebhook, WebhookReceiver } from '../support/webhook-receiver.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/** The receiver's company.security_changed deliveries, by their `change`. */
const changes = (rx: WebhookReceiver): string[] => rx.ofType('company.security_changed').map((h) => h.body.data.change);

describe('company.security_changed end to end (issue 36)', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  let other: Awaited<ReturnType<Stack['provision']>>;
  const rx = new WebhookReceiver();
  const otherRx = new WebhookReceiver();
  let secret: string;
  const stamp = Date.now();
  const adminEmail = `admin.${stamp}@andina.example.co`;
  const operatorEmail = `operadora.${stamp}@andina.example.co`;
  const mails = async (to: string) => ((await (await fetch(`${stack.sandbox!.url}/sandbox/emails?to=${encodeURIComponent(to)}`)).json()) as any).items as any[];

  beforeAll(async () => {
    stack = await startStack({ transfers: true, webhooks: true });
    co = await stack.provision('Andina Notificada S.A.S.');
    other = await stack.provision('Otra Vecina S.A.S.');
    // Rate limits count per client IP; this suite is one IP. (The multiplier is no security notice.)
    for (const c of [co, other]) expect((await stack.admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1000 })).status).toBe(200);
    await rx.start();
    await otherRx.start();
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await rx.stop();
    await otherRx.stop();
  });

  it('a dashboard ADMIN and a subscribed endpoint are set up', async () => {
    for (const [email, role] of [
      [adminEmail, 'ADMIN'],
      [operatorEmail, 'OPERATOR'],
    ]) {
      const u = await stack.admin('POST', `/admin/companies/${co.id}/users`, { email, role, password: 'Una-clave-larga-2026' });
      expect(u.status).toBe(201);
    }
    const ep = await stack.http('POST', '/webhooks/endpoints', { token: co.writeKey, body: { url: rx.url, events: ['company.security_changed'] } });
    expect(ep.status).toBe(201);
    expect(ep.body.events).toEqual(['company.security_changed']);
    secret = ep.body.secret;
    const otherEp = await stack.http('POST', '/webhooks/endpoints', {
      token: other.writeKey,
      body: { url: otherRx.url, events: ['company.security_changed'] },
    });
    expect(otherEp.status).toBe(201);
  });

  it('revoking a key: the same answer as ever, a signed company.security_changed to the endpoint, an e-mail to the admin', async () => {
    const keys = await stack.admin('GET', `/admin/companies/${co.id}/api-keys`);
    const read = keys.body.items.find((k: any) => k.scope === 'READ');
    const r = await stack.admin('DELETE', `/admin/companies/${co.id}/api-keys/${read.id}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['apiVersion', 'createdAt', 'id', 'label', 'lastUsedAt', 'prefix', 'revokedAt', 'scope']);
    expect(r.body).toMatchObject({ id: read.id, scope: 'READ', revokedAt: expect.any(String) });

    const hit = await eventually(async () => rx.hits.find((h) => h.body.type === 'company.security_changed'), 30_000, 100);
    // Verified as docs/webhooks.md tells an integrator: the Standard Webhooks library, raw body and headers.
    expect(verifyWebhook(secret, hit)).toBe(true);
    expect(verifyWebhook(secret, { ...hit, raw: hit.raw.replace('API_KEY_REVOKED', 'API_KEY_ISSUED') })).toBe(false);
    expect(hit.body).toMatchObject({ id: expect.stringMatching(/^evt_/), type: 'company.security_changed' });
    expect(hit.body.data).toEqual({
      companyId: co.id,
      change: 'API_KEY_REVOKED',
      summary: expect.stringContaining(`Se revocó la clave de API ${read.prefix}`),
      // The shared admin token (development) has no operator id.
      actor: { kind: 'bootstrap-token', id: null },
      approvalRequestId: null,
      effectiveAt: null,
      details: { keyId: read.id, prefix: read.prefix, label: 'e2e-read', scope: 'READ', revokedAt: r.body.revokedAt },
      occurredAt: expect.any(String),
    });
    expect(hit.raw).not.toContain(co.readKey);

    const [mail] = await eventually(
      async () => {
        const m = await mails(adminEmail);
        return m.length > 0 ? m : undefined;
      },
      30_000,
      100,
    );
    expect(mail.subject).toBe('Clave de API revocada: Andina Notificada S.A.S.');
    expect(mail.text).toContain(`Se revocó la clave de API ${read.prefix}`);
    expect(mail.text).toContain('Si usted no reconoce este cambio');
    expect(mail.text).not.toContain(co.readKey);
    // Only ADMINs are told; and only this company's.
    expect(await mails(operatorEmail)).toEqual([]);
    expect(changes(otherRx)).toEqual([]);

    // A repeated revocation changes nothing and tells no one (checked below, once later notices arrived).
    expect((await stack.admin('DELETE', `/admin/companies/${co.id}/api-keys/${read.id}`)).status).toBe(200);
  });

  it('PATCH: changed limits and status are told (LIMITS_CHANGED, STATUS_CHANGED), the answer is the company as ever', async () => {
    const r = await stack.admin('PATCH', `/admin/companies/${co.id}`, { counterpartyDailyLimitCents: 1_000_000, status: 'SUSPENDED' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: co.id, status: 'SUSPENDED' });
    expect(String(r.body.counterpartyDailyLimitCents)).toBe('1000000');
    await eventually(async () => changes(rx).length >= 3, 30_000, 100);
    expect(changes(rx).sort()).toEqual(['API_KEY_REVOKED', 'LIMITS_CHANGED', 'STATUS_CHANGED']);
    const limits = rx.hits.find((h) => h.body.data?.change === 'LIMITS_CHANGED')!;
    expect(limits.body.data.details).toEqual({ counterpartyDailyLimitCents: { before: '5000000000', after: '1000000' } });
    expect(limits.body.data.summary).toMatch(/^Cambió el límite por contraparte: diario de \$ ?50\.000\.000(,00)? a \$ ?10\.000(,00)?\.$/);
    const status = rx.hits.find((h) => h.body.data?.change === 'STATUS_CHANGED')!;
    expect(status.body.data.details).toEqual({ status: { before: 'ACTIVE', after: 'SUSPENDED' } });
    for (const h of rx.hits) expect(verifyWebhook(secret, h)).toBe(true);

    const all = await eventually(
      async () => {
        const m = await mails(adminEmail);
        return m.length >= 3 ? m : undefined;
      },
      30_000,
      100,
    );
    expect(all.map((m) => m.subject).sort()).toEqual([
      'Cambio de estado de la empresa: Andina Notificada S.A.S.',
      'Cambio de límites: Andina Notificada S.A.S.',
      'Clave de API revocada: Andina Notificada S.A.S.',
    ]);
    // A PATCH that changes none of them tells no one; back to ACTIVE is told.
    expect((await stack.admin('PATCH', `/admin/companies/${co.id}`, { counterpartyDailyLimitCents: 1_000_000, status: 'ACTIVE' })).status).toBe(200);
    await eventually(async () => changes(rx).length >= 4, 30_000, 100);
    expect(changes(rx).sort()).toEqual(['API_KEY_REVOKED', 'LIMITS_CHANGED', 'STATUS_CHANGED', 'STATUS_CHANGED']);
    expect(changes(otherRx)).toEqual([]);
  });
});
