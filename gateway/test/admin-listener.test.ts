import { ERRORS } from '@wallet/platform';
import { startStack, type Stack } from './support/stack.js';
import { client, expectNoInternals, type Client } from './support/http.js';
import { mailed, totpCode } from './support/operators.js';
import { sql } from './support/sql.js';

/**
 * Production mode: /admin is served only on the admin listener, by named operators; the shared
 * ADMIN_TOKEN only bootstraps the first two operators.
 */
const ADMIN_TOKEN = 'prod-admin-token-for-tests-0123456789';

let stack: Stack;
let pub: Client;
let adm: Client;
/** The two invitations the shared token made (kept for the end-to-end test). */
const bootstrapInvites: Array<{ id: string; email: string; enrollmentToken: string }> = [];

beforeAll(async () => {
  stack = await startStack({
    NODE_ENV: 'production',
    ADMIN_TOKEN,
    API_KEY_PEPPER: 'pepper-for-production-tests-0123456789',
    GATEWAY_ENCRYPTION_KEY: 'encryption-key-for-production-tests-0123456789',
    RATE_LIMIT_ADMIN_LOGIN: '1000',
  });
  pub = client(stack.gw.url);
  expect(stack.gw.adminUrl).toBeDefined();
  adm = client(stack.gw.adminUrl!);
}, 60_000);
afterAll(() => stack?.stop());

const notFound = { error: 'ROUTE_NOT_FOUND', message: ERRORS.ROUTE_NOT_FOUND.message };

/** An operator's invitation (asked by `inviter`, approved by `approver`), enrolled from the token the invitee received by e-mail. */
async function enroll(api: Client, inviter: string, approver: string, name: string) {
  const email = `${name.toLowerCase()}.${Date.now()}@billetera.co`;
  const password = `Clave-${name}-produccion-2026`;
  const asked = await api.post('/admin/operators', { token: inviter, body: { name, email } });
  expect(asked.status).toBe(202);
  await sql(stack.db.url, `update gateway.approval_requests set not_before = now() where id = $1`, [asked.body.id]);
  const inv = await api.post(`/admin/approval-requests/${asked.body.id}/approve`, { token: approver });
  expect(inv.status).toBe(200);
  expect(inv.body).not.toHaveProperty('credentials');
  const [enrollmentToken] = await mailed(stack.sandboxUrl, email, /wenr_[0-9A-Za-z]{43}/);
  const en = await api.post('/admin/auth/enroll', { body: { enrollmentToken, password } });
  expect(en.status).toBe(200);
  const login = await api.post('/admin/auth/login', { body: { email, password, totpCode: totpCode(en.body.totpSecret) } });
  expect(login.status).toBe(200);
  return { id: inv.body.result.operator.id as string, session: login.body.token as string };
}

describe('production: the admin listener', () => {
  it('the public port answers every /admin path 404, whatever the spelling or credential', async () => {
    const paths = [
      '/admin',
      '/admin/',
      '/admin/operators',
      '/admin/companies',
      '/admin/auth/login',
      '/ADMIN/operators',
      '/Admin/companies',
      '/admin/audit?limit=1',
      '/%61dmin/operators',
      '/admin/reconciliations',
      '/admin/conciliaciones',
      '/admin/conciliaciones/assets/conciliaciones.js',
    ];
    for (const path of paths) {
      for (const token of [undefined, ADMIN_TOKEN, `wk_live_${'A'.repeat(40)}`, `wadm_${'A'.repeat(43)}`]) {
        for (const method of ['GET', 'POST']) {
          const r = await pub.call(method, path, { token, body: method === 'POST' ? { email: 'x@y.co', password: 'p', totpCode: '123456' } : undefined });
          expect({ path, method, status: r.status, body: r.body }).toEqual({ path, method, status: 404, body: notFound });
        }
      }
    }
    // The public API itself is there.
    expect((await pub.get('/wallets/balance')).body.error).toBe('AUTH_REQUIRED');
    expect((await pub.get('/openapi.json')).status).toBe(200);
  });

  it('the admin port serves /admin only', async () => {
    for (const path of ['/wallets/balance', '/openapi.json', '/docs', '/auth/login', '/dashboard', '/webhooks/pse']) {
      const r = await adm.get(path);
      expect({ path, status: r.status, body: r.body }).toEqual({ path, status: 404, body: notFound });
    }
    expect((await adm.get('/admin/operators')).body.error).toBe('AUTH_REQUIRED');
    // The operators' reconciliation page is served here (it holds no data; its API calls need a session).
    const page = await adm.get('/admin/conciliaciones');
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect((await adm.get('/admin/reconciliations')).body.error).toBe('AUTH_REQUIRED');
  });

  it('refuses the shared token for everything but bootstrapping two operators (concurrent tries included); nothing written', async () => {
    const counts = async () =>
      (
        await sql(
          stack.db.url,
          'select (select count(*) from gateway.companies) as c, (select count(*) from gateway.operators) as o, (select count(*) from gateway.admin_audit) as a',
        )
      )[0];
    const before = await counts();
    const refusals: Array<[string, string, unknown]> = [
      ['GET', '/admin/operators', undefined],
      ['GET', '/admin/audit', undefined],
      ['GET', '/admin/auth/me', undefined],
      ['POST', '/admin/companies', { name: 'Token S.A.S.', nit: '900111222-3', taxRegime: 'COMMON' }],
      ['PUT', '/admin/fees/BREB_OUTFLOW', { fixedFeeCents: 1, variableBps: 0 }],
      ['GET', '/admin/credit-requests', undefined],
    ];
    for (const [method, path, body] of refusals) {
      const r = await adm.call(method, path, { token: ADMIN_TOKEN, body });
      expect({ path, status: r.status, body: r.body }).toEqual({
        path,
        status: 403,
        body: { error: 'ADMIN_TOKEN_NOT_ALLOWED', message: ERRORS.ADMIN_TOKEN_NOT_ALLOWED.message },
      });
      expectNoInternals(r.text);
    }
    expect(await counts()).toEqual(before);

    const invites = await Promise.all(
      [1, 2, 3].map((i) =>
        adm.post('/admin/operators', { token: ADMIN_TOKEN, body: { name: `Fundador ${i}`, email: `fundador${i}.${Date.now()}@billetera.co` } }),
      ),
    );
    expect(invites.map((r) => r.status).sort()).toEqual([201, 201, 403]);
    expect(invites.find((r) => r.status === 403)!.body.error).toBe('ADMIN_TOKEN_NOT_ALLOWED');
    for (const r of invites.filter((x) => x.status === 201)) {
      // Production: the enrolment token goes to the invitee, never into the bootstrap token's answer.
      expect(r.body).not.toHaveProperty('enrollmentToken');
      const [enrollmentToken] = await mailed(stack.sandboxUrl, r.body.email, /wenr_[0-9A-Za-z]{43}/);
      bootstrapInvites.push({ id: r.body.id, email: r.body.email, enrollmentToken });
    }
    const again = await adm.post('/admin/operators', { token: ADMIN_TOKEN, body: { name: 'Cuarto', email: `cuarto.${Date.now()}@billetera.co` } });
    expect(again.status).toBe(403);
    const rows = await sql(
      stack.db.url,
      `select principal_kind, outcome, error_code from gateway.admin_audit where action = 'adminInviteOperator' order by seq`,
    );
    expect(rows.filter((r) => r.outcome === 'SUCCEEDED')).toEqual([
      { principal_kind: 'bootstrap-token', outcome: 'SUCCEEDED', error_code: null },
      { principal_kind: 'bootstrap-token', outcome: 'SUCCEEDED', error_code: null },
    ]);
    expect(rows.filter((r) => r.outcome === 'FAILED').map((r) => r.error_code)).toEqual(['ADMIN_TOKEN_NOT_ALLOWED', 'ADMIN_TOKEN_NOT_ALLOWED']);
  });

  it('operators provision, and a large credit needs a second operator, end to end', async () => {
    // The two operators the shared token invited enroll and log in (on the admin port).
    const [one, two] = await Promise.all(
      bootstrapInvites.map(async (inv, i) => {
        const password = `Clave-fundador-${i}-produccion`;
        const en = await adm.post('/admin/auth/enroll', { body: { enrollmentToken: inv.enrollmentToken, password } });
        expect(en.status).toBe(200);
        const login = await adm.post('/admin/auth/login', { body: { email: inv.email, password, totpCode: totpCode(en.body.totpSecret) } });
        expect(login.status).toBe(200);
        return { id: inv.id as string, session: login.body.token as string };
      }),
    );
    // Operators may invite more operators, two of them.
    const third = await enroll(adm, one!.session, two!.session, 'Tercera');
    const co = await adm.post('/admin/companies', { token: one!.session, body: { name: 'Producción S.A.S.', nit: '900777888-1', taxRegime: 'COMMON' } });
    expect(co.status).toBe(201);
    // Keys go to the company's dashboard administrator: there must be one first (asked by one operator, approved by another).
    expect((await adm.post(`/admin/companies/${co.body.id}/api-keys`, { token: one!.session, body: { scope: 'READ', label: 'prod' } })).body.error).toBe(
      'COMPANY_ADMIN_REQUIRED',
    );
    const adminEmail = `admin.${Date.now()}@produccion.co`;
    const user = await adm.post(`/admin/companies/${co.body.id}/users`, { token: one!.session, body: { email: adminEmail, role: 'ADMIN' } });
    expect(user.status).toBe(202);
    await sql(stack.db.url, `update gateway.approval_requests set not_before = now() where id = $1`, [user.body.id]);
    expect((await adm.post(`/admin/approval-requests/${user.body.id}/approve`, { token: two!.session })).status).toBe(200);
    const [, invitation] = await mailed(stack.sandboxUrl, adminEmail, /#invitation=(winv_[0-9A-Za-z]{43})/);
    const accepted = await pub.post('/auth/invitations/accept', { body: { token: invitation, password: 'Clave-admin-produccion-2026' } });
    expect((await pub.post('/auth/invitations/confirm', { body: { token: invitation, totpCode: totpCode(accepted.body.totpSecret) } })).status).toBe(200);
    const issued = await adm.post(`/admin/companies/${co.body.id}/api-keys`, { token: one!.session, body: { scope: 'READ', label: 'prod' } });
    expect(issued.status).toBe(201);
    expect(issued.body).not.toHaveProperty('key');
    const [key] = await mailed(stack.sandboxUrl, adminEmail, /wk_live_[0-9A-Za-z_-]+/);
    const balance = async () => (await pub.get('/wallets/balance', { token: key })).body.wallets[0].availableCents;
    // Above the default threshold (100.000.000 centavos): a request, no money.
    const big = await adm.post(`/admin/companies/${co.body.id}/wallets/BREB/credit`, {
      token: one!.session,
      body: { amountCents: 250_000_000, reference: 'fondeo-1' },
    });
    expect(big.status).toBe(202);
    expect(await balance()).toBe('0');
    // The operator the requester invited may not approve; the other founder may.
    expect((await adm.post(`/admin/credit-requests/${big.body.id}/approve`, { token: third.session })).body.error).toBe('SAME_OPERATOR');
    const ok = await adm.post(`/admin/credit-requests/${big.body.id}/approve`, { token: two!.session });
    expect(ok.body).toMatchObject({ status: 'CREDITED', requestedBy: one!.id, decidedBy: two!.id });
    expect(await balance()).toBe('250000000');
    // Below it: credited at once.
    expect(
      (await adm.post(`/admin/companies/${co.body.id}/wallets/BREB/credit`, { token: two!.session, body: { amountCents: 100_000_000, reference: 'fondeo-2' } }))
        .status,
    ).toBe(201);
    expect(await balance()).toBe('350000000');
    // The audit log, on the admin port, names each operator (the refused approval included).
    const audit = await adm.get(`/admin/audit?targetId=${co.body.id}&limit=100`, { token: two!.session });
    expect(new Set(audit.body.items.map((i: any) => i.principal.operatorId))).toEqual(new Set([one!.id, two!.id, third.id]));
    expect(audit.body.items.every((i: any) => i.principal.kind === 'operator')).toBe(true);
  });
});
