import pg from 'pg';
import { Secret, TOTP } from 'otpauth';
import { ERRORS } from '@wallet/platform';
import { startGateway, type StartedGateway } from '@wallet/gateway/testing';
import { fetchDocumented } from '../support/openapi-check.js';
import { mailed as mailbox } from '../support/mailbox.js';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Company = Awaited<ReturnType<Stack['provision']>>;
type Answer = { status: number; headers: Headers; body: any };

/**
 * Self-enrolment of dashboard users (CONTRACT §10): the operator receives a single-use invitation,
 * never a password or a TOTP secret; the user chooses the password, enrols the secret and proves
 * it with a first code before the account works. Through the real gateway and Postgres.
 */
describe('dashboard invitations (self-enrolment)', () => {
  let stack: Stack;
  let co: Company;
  let db: pg.Pool;
  /** Another replica on the same database whose invitations live 2 s. */
  let shortLived: StartedGateway;
  let seq = 0;

  /** `documentFrom`: the listener serving the document the answer is checked against (the admin listener serves /admin only). */
  async function call(base: string, method: string, path: string, opts: { token?: string; body?: unknown; documentFrom?: string } = {}): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetchDocumented(
      `${base}${path}`,
      { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) },
      { documentFrom: opts.documentFrom ?? base },
    );
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }
  const http = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => call(stack.gateway.url, method, path, opts);
  const lookup = (token: string, base = stack.gateway.url) => call(base, 'POST', '/auth/invitations/lookup', { body: { token } });
  const accept = (token: string, password: string, base = stack.gateway.url) => call(base, 'POST', '/auth/invitations/accept', { body: { token, password } });
  const confirm = (token: string, totpCode: string, base = stack.gateway.url) => call(base, 'POST', '/auth/invitations/confirm', { body: { token, totpCode } });
  const login = (email: string, password: string, base = stack.gateway.url) => call(base, 'POST', '/auth/login', { body: { email, password } });

  const totp = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' });
  const code = (secret: string, stepOffset = 0) => totp(secret).generate({ timestamp: Date.now() + stepOffset * 30_000 });
  function wrongCode(secret: string): string {
    const valid = new Set([-2, -1, 0, 1, 2].map((o) => code(secret, o)));
    for (let n = 0; ; n++) if (!valid.has(String(n).padStart(6, '0'))) return String(n).padStart(6, '0');
  }
  /** The token of an invitation link: in the fragment, never in the path or query. */
  function tokenOf(invitationUrl: string): string {
    const url = new URL(invitationUrl, 'http://gateway.invalid');
    expect(url.pathname).toBe('/dashboard');
    expect(url.search).toBe('');
    const m = /^#invitation=(winv_[0-9A-Za-z]{43})$/.exec(url.hash);
    expect(m).not.toBeNull();
    return m![1]!;
  }
  const expectError = (r: Answer, status: number, code: keyof typeof ERRORS) => {
    expect({ status: r.status, body: r.body }).toEqual({ status, body: { error: code, message: ERRORS[code].message } });
  };
  /** The gateway's tables, row by row: to show a refused request wrote nothing. */
  async function gatewayRows(): Promise<string> {
    const tables = ['dashboard_users', 'dashboard_invitations', 'dashboard_sessions', 'dashboard_lockouts'];
    const out: unknown[] = [];
    for (const t of tables) out.push((await db.query(`select to_jsonb(x)::text as j from gateway.${t} x order by 1`)).rows.map((r) => r.j));
    return JSON.stringify(out);
  }

  async function invite(role: 'ADMIN' | 'OPERATOR' | 'VIEWER' = 'OPERATOR', base = stack.gateway.url, adminToken = stack.gateway.adminToken, company = co) {
    const email = `invitado${++seq}.${company.id.slice(0, 6)}@empresa.co`;
    const r = await call(base, 'POST', `/admin/companies/${company.id}/users`, { token: adminToken, body: { email, role, invite: true } });
    expect(r.status).toBe(201);
    return { ...r.body, token: tokenOf(r.body.invitationUrl) } as {
      id: string;
      email: string;
      invitationUrl: string;
      invitationExpiresAt: string;
      token: string;
    };
  }

  beforeAll(async () => {
    stack = await startStack({
      transfers: true,
      gatewayEnv: { RATE_LIMIT_AUTHENTICATION: '1000', RATE_LIMIT_FINANCIAL: '1000', RATE_LIMIT_READS: '10000', RATE_LIMIT_RESOLVE_KEY: '1000' },
    });
    db = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    shortLived = await startGateway({
      databaseUrl: stack.databaseUrl,
      ledgerAddress: stack.ledger.address,
      namespace: `${stack.namespace}-short`,
      env: {
        LOG_LEVEL: 'silent',
        GATEWAY_MIGRATE_ON_START: 'false',
        DASHBOARD_INVITATION_TTL_SECONDS: '2',
        RATE_LIMIT_PREFIX: `${stack.namespace}-short`,
        RATE_LIMIT_AUTHENTICATION: '1000',
      },
    });
    co = await stack.provision('Invitaciones S.A.S.');
    expect((await stack.admin('PATCH', `/admin/companies/${co.id}`, { multiSigThreshold: 2 })).status).toBe(200);
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 1_000_000, reference: 'seed' });
  }, 60_000);
  afterAll(async () => {
    await shortLived?.stop();
    await db?.end();
    await stack?.stop();
  });

  it('invite → accept (password, secret) → confirm a real code → log in and sign; the operator never sees a credential', async () => {
    const email = `ana.${co.id.slice(0, 6)}@empresa.co`;
    const created = await stack.admin('POST', `/admin/companies/${co.id}/users`, { email, role: 'ADMIN', invite: true });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      email,
      role: 'ADMIN',
      createdAt: expect.any(String),
      activatedAt: null,
      disabledAt: null,
      invitationUrl: expect.stringMatching(/^\/dashboard#invitation=winv_[0-9A-Za-z]{43}$/),
      invitationExpiresAt: expect.any(String),
    });
    const ttl = Date.parse(created.body.invitationExpiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(71.9 * 3600_000);
    expect(ttl).toBeLessThanOrEqual(72 * 3600_000);
    const token = tokenOf(created.body.invitationUrl);
    // Stored only as a hash: the token is nowhere in the database.
    expect(await gatewayRows()).not.toContain(token.slice(5));
    // Listed, not active; no password works before enrolment.
    const listed = (await stack.admin('GET', `/admin/companies/${co.id}/users`)).body.items.find((u: any) => u.id === created.body.id);
    expect(listed).toEqual({ id: created.body.id, email, role: 'ADMIN', createdAt: expect.any(String), activatedAt: null, disabledAt: null });
    expectError(await login(email, 'cualquier-clave-123'), 401, 'INVALID_CREDENTIALS');

    const seen = await lookup(token);
    expect(seen.status).toBe(200);
    expect(seen.body).toEqual({ email, role: 'ADMIN', companyName: 'Invitaciones S.A.S.', status: 'PENDING', expiresAt: created.body.invitationExpiresAt });
    expect((await http('POST', '/auth/invitations/confirm', { body: { token, totpCode: '123456' } })).body.error).toBe('INVALID_STATE_TRANSITION');

    const password = 'Mi-clave-elegida-2026';
    const enrol = await accept(token, password);
    expect(enrol.status).toBe(200);
    expect(enrol.body).toEqual({
      email,
      totpSecret: expect.stringMatching(/^[A-Z2-7]{32}$/),
      otpauthUrl: expect.stringMatching(/^otpauth:\/\/totp\//),
      expiresAt: created.body.invitationExpiresAt,
    });
    expect(new URL(enrol.body.otpauthUrl).searchParams.get('secret')).toBe(enrol.body.totpSecret);
    const secret = enrol.body.totpSecret as string;
    expect((await lookup(token)).body.status).toBe('ACCEPTED');
    // Password chosen, but not active until a code proves the secret is enrolled.
    expectError(await login(email, password), 401, 'INVALID_CREDENTIALS');
    expectError(await confirm(token, wrongCode(secret)), 401, 'INVALID_TOTP_CODE');

    const first = code(secret);
    const done = await confirm(token, first);
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ id: created.body.id, email, role: 'ADMIN', createdAt: expect.any(String), activatedAt: expect.any(String), disabledAt: null });

    const session = await login(email, password);
    expect(session.status).toBe(200);
    expect((await http('GET', '/auth/me', { token: session.body.token })).body).toMatchObject({ id: created.body.id, email, role: 'ADMIN', companyId: co.id });
    // The enrolled secret signs; the code spent on the confirmation does not sign again.
    const k = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3007770001' } });
    const t = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: {
        amount: 1_000,
        destination: { brebKey: { type: k.body.keyType, value: k.body.keyValue } },
        targetName: k.body.recipient.fullName,
        targetDocument: k.body.recipient.idValue,
      },
    });
    expect(t.body.status).toBe('AWAITING_APPROVAL');
    const signAs = (totpCode: string) => http('POST', `/dashboard/approvals/${t.body.approvalId}/sign`, { token: session.body.token, body: { totpCode } });
    expect((await signAs(first)).body.error).toBe('INVALID_TOTP_CODE');
    const signed = await signAs(code(secret, 1));
    expect(signed.status).toBe(200);
    expect(signed.body.signatures).toEqual([expect.objectContaining({ userId: created.body.id, email })]);
  });

  it('a used invitation is refused (410 INVITATION_USED) at every step and nothing is written; a second acceptance cannot replace the password', async () => {
    const inv = await invite();
    const password = 'Primera-clave-elegida-1';
    const enrol = await accept(inv.token, password);
    expect(enrol.status).toBe(200);
    // Accepted once: the same link again (a replay, or someone else holding it) changes nothing.
    let before = await gatewayRows();
    expectError(await accept(inv.token, 'Clave-del-intruso-2026'), 410, 'INVITATION_USED');
    expect(await gatewayRows()).toBe(before);
    expect((await confirm(inv.token, code(enrol.body.totpSecret))).status).toBe(200);
    expect((await login(inv.email, 'Clave-del-intruso-2026')).status).toBe(401);
    expect((await login(inv.email, password)).status).toBe(200);

    before = await gatewayRows();
    expectError(await lookup(inv.token), 410, 'INVITATION_USED');
    expectError(await accept(inv.token, 'Otra-clave-mas-2026'), 410, 'INVITATION_USED');
    expectError(await confirm(inv.token, code(enrol.body.totpSecret, 1)), 410, 'INVITATION_USED');
    expect(await gatewayRows()).toBe(before);
  });

  it('an expired invitation is refused (410 INVITATION_EXPIRED), accepted or not, with nothing written; a new invitation revokes the old one', async () => {
    const fresh = await invite('VIEWER', shortLived.url);
    const accepted = await invite('VIEWER', shortLived.url);
    const enrol = await accept(accepted.token, 'Clave-que-expira-2026', shortLived.url);
    expect(enrol.status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_300));
    const before = await gatewayRows();
    expectError(await lookup(fresh.token), 410, 'INVITATION_EXPIRED');
    expectError(await accept(fresh.token, 'Clave-demasiado-tarde-1'), 410, 'INVITATION_EXPIRED');
    expectError(await confirm(accepted.token, code(enrol.body.totpSecret)), 410, 'INVITATION_EXPIRED');
    expect(await gatewayRows()).toBe(before);
    expect((await login(accepted.email, 'Clave-que-expira-2026')).status).toBe(401);

    // The operator re-invites: the old link stays dead, the new one enrols (72 h on this replica).
    const again = await stack.admin('POST', `/admin/companies/${co.id}/users/${accepted.id}/invitations`);
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: accepted.id, email: accepted.email, activatedAt: null, invitationExpiresAt: expect.any(String) });
    expect(again.body).not.toHaveProperty('totpSecret');
    const token = tokenOf(again.body.invitationUrl);
    expectError(await lookup(accepted.token), 410, 'INVITATION_EXPIRED');
    const second = await accept(token, 'Clave-nueva-elegida-2026');
    expect((await confirm(token, code(second.body.totpSecret))).status).toBe(200);
    expect((await login(accepted.email, 'Clave-que-expira-2026')).status).toBe(401);
    expect((await login(accepted.email, 'Clave-nueva-elegida-2026')).status).toBe(200);
    expectError(await stack.admin('POST', `/admin/companies/${co.id}/users/${accepted.id}/invitations`), 409, 'USER_ALREADY_ACTIVE');
  });

  it('unknown, malformed and revoked tokens; wrong confirmation codes lock the enrolment like any TOTP code', async () => {
    expectError(await lookup(`winv_${'A'.repeat(43)}`), 404, 'INVITATION_NOT_FOUND');
    for (const token of ['winv_corto', 'wsess_' + 'A'.repeat(43), '', 'x'.repeat(300)]) {
      expect((await lookup(token)).body.error).toBe('INVALID_REQUEST');
    }
    expect((await accept(`winv_${'A'.repeat(43)}`, 'corta')).body.error).toBe('INVALID_REQUEST');

    // Disabling an invited user revokes the link.
    const disabled = await invite();
    expect((await stack.admin('DELETE', `/admin/companies/${co.id}/users/${disabled.id}`)).status).toBe(200);
    expectError(await accept(disabled.token, 'Clave-de-deshabilitado-1'), 410, 'INVITATION_EXPIRED');

    const inv = await invite();
    const enrol = await accept(inv.token, 'Clave-bloqueable-2026');
    const secret = enrol.body.totpSecret as string;
    for (let i = 0; i < 5; i++) expectError(await confirm(inv.token, wrongCode(secret)), 401, 'INVALID_TOTP_CODE');
    const locked = await confirm(inv.token, code(secret));
    expect([locked.status, locked.body.error]).toEqual([423, 'ACCOUNT_LOCKED']);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await lookup(inv.token)).body.status).toBe('ACCEPTED'); // still not active
  });

  it('invitation enrolment refuses an operator-chosen password; direct enrolment still needs one', async () => {
    const r = await stack.admin('POST', `/admin/companies/${co.id}/users`, {
      email: `x${Date.now()}@empresa.co`,
      role: 'VIEWER',
      invite: true,
      password: 'Clave-del-operador-1',
    });
    expect([r.status, r.body.error, r.body.details.fields[0].path]).toEqual([400, 'INVALID_REQUEST', 'password']);
    const d = await stack.admin('POST', `/admin/companies/${co.id}/users`, { email: `y${Date.now()}@empresa.co`, role: 'VIEWER' });
    expect([d.status, d.body.error, d.body.details.fields[0].path]).toEqual([400, 'INVALID_REQUEST', 'password']);
  });

  it('production: a user is an invitation asked by one operator, approved by another, e-mailed to the user; no answer holds a credential', async () => {
    const prod = await startGateway({
      databaseUrl: stack.databaseUrl,
      ledgerAddress: stack.ledger.address,
      namespace: `${stack.namespace}-prod`,
      natsUrl: process.env.NATS_URL,
      busNamespace: stack.namespace,
      smtpUrl: `smtp://127.0.0.1:${stack.sandbox!.smtpPort}`,
      env: {
        NODE_ENV: 'production',
        LOG_LEVEL: 'silent',
        GATEWAY_MIGRATE_ON_START: 'false',
        RATE_LIMIT_PREFIX: `${stack.namespace}-prod`,
        RATE_LIMIT_AUTHENTICATION: '1000',
        ADMIN_TOKEN: 'e2e-production-operator-token',
        API_KEY_PEPPER: 'e2e-production-pepper-0123456789',
        GATEWAY_ENCRYPTION_KEY: 'e2e-production-encryption-key-0123456789',
        DASHBOARD_PUBLIC_URL: 'https://pagos.example.co',
      },
    });
    const mailed = (to: string, re: RegExp) => mailbox(stack.sandbox!.url, to, re);
    try {
      // Production: /admin only on the admin listener, and only for named operators (the shared
      // token may only invite the first two): they enrol from the token e-mailed to each.
      const admin = prod.adminUrl!;
      const operators: string[] = [];
      for (const name of ['turno', 'revisora']) {
        const opEmail = `${name}.${co.id.slice(0, 6)}@billetera.co`;
        const invited = await call(admin, 'POST', '/admin/operators', { documentFrom: prod.url, token: prod.adminToken, body: { name, email: opEmail } });
        expect(invited.status).toBe(201);
        expect(invited.body).not.toHaveProperty('enrollmentToken');
        const [enrollmentToken] = await mailed(opEmail, /wenr_[0-9A-Za-z]{43}/);
        const enrolled = await call(admin, 'POST', '/admin/auth/enroll', {
          documentFrom: prod.url,
          body: { enrollmentToken, password: 'Clave-operadora-2026!' },
        });
        const session = await call(admin, 'POST', '/admin/auth/login', {
          documentFrom: prod.url,
          body: { email: opEmail, password: 'Clave-operadora-2026!', totpCode: code(enrolled.body.totpSecret) },
        });
        expect(session.status).toBe(200);
        operators.push(session.body.token as string);
      }
      const [operator, checker] = operators as [string, string];
      const email = `produccion.${co.id.slice(0, 6)}@empresa.co`;
      expect((await call(prod.url, 'POST', `/admin/companies/${co.id}/users`, { token: operator, body: { email, role: 'OPERATOR' } })).status).toBe(404);
      const r = await call(admin, 'POST', `/admin/companies/${co.id}/users`, { documentFrom: prod.url, token: operator, body: { email, role: 'OPERATOR' } });
      expect(r.status).toBe(202);
      expect(JSON.stringify(r.body)).not.toMatch(/winv_|password|totp|secret|otpauth/i);
      // Not even on request: `invite: false` is still an invitation asked for, an operator-chosen password refused.
      const asked = await call(admin, 'POST', `/admin/companies/${co.id}/users`, {
        documentFrom: prod.url,
        token: operator,
        body: { email: `otro.${email}`, role: 'OPERATOR', invite: false },
      });
      expect(asked.status).toBe(202);
      const withPassword = await call(admin, 'POST', `/admin/companies/${co.id}/users`, {
        documentFrom: prod.url,
        token: operator,
        body: { email: `mas.${email}`, role: 'OPERATOR', password: 'Clave-del-operador-1' },
      });
      expect([withPassword.status, withPassword.body.error]).toEqual([400, 'INVALID_REQUEST']);
      // The notice delay passes; the second operator approves: the answer holds no link, the user's mailbox does.
      await db.query('update gateway.approval_requests set not_before = now() where id = $1', [r.body.id]);
      const approved = await call(admin, 'POST', `/admin/approval-requests/${r.body.id}/approve`, { documentFrom: prod.url, token: checker });
      expect(approved.status).toBe(200);
      expect(JSON.stringify(approved.body)).not.toMatch(/winv_/);
      const [link, token] = await mailed(email, /https:\/\/pagos\.example\.co\/dashboard#invitation=(winv_[0-9A-Za-z]{43})/);
      expect(link).toMatch(/^https:\/\/pagos\.example\.co\/dashboard#invitation=winv_/);
      // The production link enrols on the production gateway.
      const enrol = await accept(token!, 'Clave-de-produccion-2026', prod.url);
      expect((await confirm(token!, code(enrol.body.totpSecret), prod.url)).status).toBe(200);
      expect((await login(email, 'Clave-de-produccion-2026', prod.url)).status).toBe(200);
    } finally {
      await prod.stop();
    }
  });
});
