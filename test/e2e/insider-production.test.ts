import { Secret, TOTP } from 'otpauth';
import pg from 'pg';
import { fetchDocumented } from '../support/openapi-check.js';
import { mailed } from '../support/mailbox.js';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * No single insider moves money (docs/security.md "The insider"), the production-only controls, end to end: a
 * production-mode gateway (admin listener, default 24 h notice delay) with the whole product behind
 * it. Findings I1 (credentials in an operator's response) and I4 (the bootstrap token comes back),
 * tried as an attacker would, are refused.
 */
describe('insider attacks (production)', () => {
  const ADMIN_TOKEN = 'e2e-insider-bootstrap-token-0123456789';
  let stack: Stack;
  let adminUrl: string;
  let db: pg.Client;

  const call = async (base: string, method: string, path: string, opts: { token?: string; body?: unknown } = {}) => {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetchDocumented(
      `${base}${path}`,
      { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) },
      { documentFrom: stack.gateway.url },
    );
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
  };
  const adm = (method: string, path: string, token?: string, body?: unknown) => call(adminUrl, method, path, { token, body });
  const pub = (method: string, path: string, token?: string, body?: unknown) => call(stack.gateway.url, method, path, { token, body });
  const code = (secret: string, steps = 0) =>
    new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + steps * 30_000 });

  const mailMatching = (to: string, re: RegExp) => mailed(stack.sandbox!.url, to, re);
  /** The notice delay passes (moved in the database: the gateway reads Postgres's clock). */
  const delayPassed = (id: string) => db.query(`update gateway.approval_requests set not_before = now() where id = $1`, [id]);

  async function enrollFromMail(email: string, password: string): Promise<{ session: string; secret: string }> {
    const [, token] = await mailMatching(email, /(wenr_[0-9A-Za-z]{43})/);
    const en = await adm('POST', '/admin/auth/enroll', undefined, { enrollmentToken: token, password });
    expect(en.status).toBe(200);
    const login = await adm('POST', '/admin/auth/login', undefined, { email, password, totpCode: code(en.body.totpSecret) });
    expect(login.status).toBe(200);
    return { session: login.body.token, secret: en.body.totpSecret };
  }

  beforeAll(async () => {
    stack = await startStack({
      transfers: true,
      gatewayEnv: {
        NODE_ENV: 'production',
        ADMIN_TOKEN,
        API_KEY_PEPPER: 'e2e-insider-pepper-0123456789',
        GATEWAY_ENCRYPTION_KEY: 'e2e-insider-encryption-key-0123456789',
        DASHBOARD_PUBLIC_URL: 'https://pagos.example.co',
        RATE_LIMIT_ADMIN: '10000',
        RATE_LIMIT_ADMIN_LOGIN: '1000',
        RATE_LIMIT_AUTHENTICATION: '1000',
      },
    });
    adminUrl = stack.gateway.adminUrl!;
    db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('credentials reach only their owner; one operator cannot add users or keys; the bootstrap token is spent for ever', async () => {
    // Bootstrap: the token invites two operators; their enrolment tokens go to them, not to the caller.
    const ana = await adm('POST', '/admin/operators', ADMIN_TOKEN, { name: 'Ana', email: 'ana.insider@billetera.co' });
    const beto = await adm('POST', '/admin/operators', ADMIN_TOKEN, { name: 'Beto', email: 'beto.insider@billetera.co' });
    expect([ana.status, beto.status]).toEqual([201, 201]);
    for (const r of [ana, beto]) {
      expect(r.body).not.toHaveProperty('enrollmentToken');
      expect(r.text).not.toMatch(/wenr_/);
    }
    const a = await enrollFromMail('ana.insider@billetera.co', 'Clave-de-Ana-produccion');
    const b = await enrollFromMail('beto.insider@billetera.co', 'Clave-de-Beto-produccion');
    const [mark] = (await db.query('select operator_ids::text[] as ids from gateway.bootstrap_state')).rows;
    expect(mark.ids.sort()).toEqual([ana.body.id, beto.body.id].sort());

    // Finding I1 (docs/security.md "The insider"), production: one operator tries to make the company's signers and receive their links.
    const co = await adm('POST', '/admin/companies', a.session, { name: 'Multifirma S.A.S.', nit: '900777888-1', taxRegime: 'COMMON', multiSigThreshold: 2 });
    expect(co.status).toBe(201);
    const signers: Array<{ email: string; role: string; id?: string }> = [
      { email: 'firmante.admin@multifirma.co', role: 'ADMIN' },
      { email: 'firmante.operador@multifirma.co', role: 'OPERATOR' },
    ];
    for (const s of signers) {
      const asked = await adm('POST', `/admin/companies/${co.body.id}/users`, a.session, { email: s.email, role: s.role });
      expect(asked.status).toBe(202);
      expect(asked.text).not.toMatch(/winv_/);
      // The production notice delay (24 h) holds even for an independent operator…
      const early = await adm('POST', `/admin/approval-requests/${asked.body.id}/approve`, b.session);
      expect([early.status, early.body.error]).toEqual([409, 'APPROVAL_DELAY_PENDING']);
      await delayPassed(asked.body.id);
      expect((await adm('POST', `/admin/approval-requests/${asked.body.id}/approve`, a.session)).body.error).toBe('SAME_OPERATOR');
      // …then Beto approves: the invitation goes to the user; neither operator's answer holds the link.
      const ok = await adm('POST', `/admin/approval-requests/${asked.body.id}/approve`, b.session);
      expect(ok.status).toBe(200);
      expect(ok.body).not.toHaveProperty('credentials');
      expect(ok.text).not.toMatch(/winv_/);
      s.id = ok.body.result.user.id;
    }
    // A key before the company has an active administrator: nobody could receive it → refused, nothing issued.
    const early = await adm('POST', `/admin/companies/${co.body.id}/api-keys`, a.session, { scope: 'READ', label: 'lectura' });
    expect([early.status, early.body.error]).toEqual([409, 'COMPANY_ADMIN_REQUIRED']);
    // The administrator enrols from the e-mailed link.
    const [, invitation] = await mailMatching(signers[0]!.email, /https:\/\/pagos\.example\.co\/dashboard#invitation=(winv_[0-9A-Za-z]{43})/);
    const accepted = await pub('POST', '/auth/invitations/accept', undefined, { token: invitation, password: 'Clave-del-firmante-2026' });
    expect(accepted.status).toBe(200);
    expect((await pub('POST', '/auth/invitations/confirm', undefined, { token: invitation, totpCode: code(accepted.body.totpSecret) })).status).toBe(200);

    // A READ key by one operator: issued, and only the company's administrator receives it.
    const read = await adm('POST', `/admin/companies/${co.body.id}/api-keys`, a.session, { scope: 'READ', label: 'lectura' });
    expect(read.status).toBe(201);
    expect(read.body).not.toHaveProperty('key');
    expect(read.text).not.toMatch(/wk_live_[0-9A-Za-z]{20}/);
    const [key] = await mailMatching(signers[0]!.email, /wk_live_[0-9A-Za-z_-]+/);
    expect((await pub('GET', '/wallets/balance', key)).status).toBe(200);
    // A WRITE key: two operators, and still only the company sees it.
    const write = await adm('POST', `/admin/companies/${co.body.id}/api-keys`, a.session, { scope: 'WRITE', label: 'pagos' });
    expect(write.status).toBe(202);
    await delayPassed(write.body.id);
    const issued = await adm('POST', `/admin/approval-requests/${write.body.id}/approve`, b.session);
    expect(issued.body).toMatchObject({ status: 'APPLIED', result: { apiKey: { scope: 'WRITE' } } });
    expect(issued.text).not.toMatch(/wk_live_[0-9A-Za-z]{20}/);

    // Finding I4: one operator disables the other alone → a request; the token cannot bring a third.
    const off = await adm('DELETE', `/admin/operators/${beto.body.id}`, a.session);
    expect(off.status).toBe(202);
    expect((await adm('GET', '/admin/auth/me', b.session)).status).toBe(200);
    const third = await adm('POST', '/admin/operators', ADMIN_TOKEN, { name: 'Ciro', email: 'ciro.insider@billetera.co' });
    expect([third.status, third.body.error, third.body.details]).toEqual([403, 'ADMIN_TOKEN_NOT_ALLOWED', { reason: 'BOOTSTRAPPED' }]);
    // Even once Beto is disabled (he agrees), fewer than two live operators do not revive the token.
    expect((await adm('POST', `/admin/approval-requests/${off.body.id}/approve`, b.session)).body.status).toBe('APPLIED');
    expect((await adm('GET', '/admin/auth/me', b.session)).body.error).toBe('SESSION_EXPIRED');
    const again = await adm('POST', '/admin/operators', ADMIN_TOKEN, { name: 'Ciro', email: 'ciro.insider@billetera.co' });
    expect([again.status, again.body.error]).toEqual([403, 'ADMIN_TOKEN_NOT_ALLOWED']);
    // Ana alone: her large credit waits for an approver who no longer exists; nothing moved.
    const credit = await adm('POST', `/admin/companies/${co.body.id}/wallets/BREB/credit`, a.session, { amountCents: 5_000_000_000, reference: 'sola' });
    expect(credit.status).toBe(202);
    expect((await adm('POST', `/admin/credit-requests/${credit.body.id}/approve`, a.session)).body.error).toBe('SAME_OPERATOR');
    const wallets = (await pub('GET', '/wallets/balance', key)).body.wallets;
    expect(wallets.map((w: any) => w.availableCents)).toEqual(['0', '0']);
    // The mark cannot be taken back but by the database owner.
    await expect(db.query('delete from gateway.bootstrap_state')).rejects.toThrow(/permanent/);
    await expect(db.query('truncate gateway.bootstrap_state')).rejects.toThrow(/permanent/);
  });
});
