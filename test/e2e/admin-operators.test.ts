import { Secret, TOTP } from 'otpauth';
import pg from 'pg';
import { fetchDocumented } from '../support/openapi-check.js';
import { mailed as mailbox } from '../support/mailbox.js';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * Operators who can be held to account, in production mode, end to end: /admin only on the admin
 * listener; the shared token only bootstraps two operators; they enroll (password + TOTP), provision
 * a company, and a large credit moves money only after a second operator approves — once, with
 * approvals racing; the client sees the balance on the public port; every step is in the
 * append-only audit log; the ledger stays balanced.
 */
describe('admin operators (production)', () => {
  const ADMIN_TOKEN = 'e2e-production-admin-token-0123456789';
  let stack: Stack;
  let adminUrl: string;

  const call = async (base: string, method: string, path: string, opts: { token?: string; body?: unknown } = {}) => {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    // Checked against the document the public listener serves (the admin listener serves /admin only).
    const res = await fetchDocumented(
      `${base}${path}`,
      { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) },
      { documentFrom: stack.gateway.url },
    );
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const adm = (method: string, path: string, token?: string, body?: unknown) => call(adminUrl, method, path, { token, body });
  const pub = (method: string, path: string, token?: string, body?: unknown) => call(stack.gateway.url, method, path, { token, body });
  const code = (secret: string) => new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate();

  const mailed = (to: string, re: RegExp) => mailbox(stack.sandbox!.url, to, re);
  /** Past the production notice delay (24 h), moved in the database: the gateway reads Postgres's clock. */
  async function delayPassed(id: string): Promise<void> {
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      await db.query('update gateway.approval_requests set not_before = now() where id = $1', [id]);
    } finally {
      await db.end();
    }
  }

  async function enrollAndLogin(inv: { email: string }, password: string): Promise<string> {
    const [enrollmentToken] = await mailed(inv.email, /wenr_[0-9A-Za-z]{43}/);
    const en = await adm('POST', '/admin/auth/enroll', undefined, { enrollmentToken, password });
    expect(en.status).toBe(200);
    const login = await adm('POST', '/admin/auth/login', undefined, { email: inv.email, password, totpCode: code(en.body.totpSecret) });
    expect(login.status).toBe(200);
    return login.body.token;
  }

  beforeAll(async () => {
    stack = await startStack({
      transfers: true,
      gatewayEnv: {
        NODE_ENV: 'production',
        ADMIN_TOKEN,
        API_KEY_PEPPER: 'e2e-production-pepper-0123456789',
        GATEWAY_ENCRYPTION_KEY: 'e2e-production-encryption-key-0123456789',
      },
    });
    adminUrl = stack.gateway.adminUrl!;
    expect(adminUrl).toBeDefined();
  }, 120_000);
  afterAll(() => stack?.stop());

  it('from bootstrap to a dual-controlled credit, audited, with the ledger balanced', async () => {
    // The public port has no /admin at all.
    expect(await pub('POST', '/admin/companies', ADMIN_TOKEN, { name: 'X', nit: '900111222-3', taxRegime: 'COMMON' })).toMatchObject({
      status: 404,
      body: { error: 'ROUTE_NOT_FOUND' },
    });
    // The shared token: only two invitations.
    expect((await adm('GET', '/admin/audit', ADMIN_TOKEN)).body.error).toBe('ADMIN_TOKEN_NOT_ALLOWED');
    const invite = (name: string) => adm('POST', '/admin/operators', ADMIN_TOKEN, { name, email: `${name.toLowerCase()}@billetera.co` });
    const ana = await invite('Ana');
    const beto = await invite('Beto');
    expect([ana.status, beto.status]).toEqual([201, 201]);
    expect((await invite('Ciro')).body.error).toBe('ADMIN_TOKEN_NOT_ALLOWED');
    const a = await enrollAndLogin(ana.body, 'Clave-de-Ana-produccion');
    const b = await enrollAndLogin(beto.body, 'Clave-de-Beto-produccion');

    // Ana provisions a company and (with Beto's approval) its dashboard administrator, who receives its client keys.
    const co = await adm('POST', '/admin/companies', a, { name: 'Fondeada S.A.S.', nit: '900333444-5', taxRegime: 'COMMON' });
    expect(co.status).toBe(201);
    const user = await adm('POST', `/admin/companies/${co.body.id}/users`, a, { email: 'tesoreria@fondeada.co', role: 'ADMIN' });
    expect(user.status).toBe(202);
    await delayPassed(user.body.id);
    expect((await adm('POST', `/admin/approval-requests/${user.body.id}/approve`, b)).body.status).toBe('APPLIED');
    const [, invitation] = await mailed('tesoreria@fondeada.co', /#invitation=(winv_[0-9A-Za-z]{43})/);
    const accepted = await pub('POST', '/auth/invitations/accept', undefined, { token: invitation, password: 'Clave-tesoreria-2026' });
    expect((await pub('POST', '/auth/invitations/confirm', undefined, { token: invitation, totpCode: code(accepted.body.totpSecret) })).status).toBe(200);
    const issued = await adm('POST', `/admin/companies/${co.body.id}/api-keys`, a, { scope: 'READ', label: 'e2e' });
    expect(issued.status).toBe(201);
    expect(issued.body).not.toHaveProperty('key');
    const [key] = await mailed('tesoreria@fondeada.co', /wk_live_[0-9A-Za-z_-]+/);
    const available = async () => (await pub('GET', '/wallets/balance', key)).body.wallets.find((w: any) => w.rail === 'BREB').availableCents;

    // 2.000.000 pesos: above the default threshold. Nothing moves until Beto approves.
    const req = await adm('POST', `/admin/companies/${co.body.id}/wallets/BREB/credit`, a, { amountCents: 200_000_000, reference: 'fondeo-inicial' });
    expect(req).toMatchObject({ status: 202, body: { status: 'PENDING_APPROVAL' } });
    expect(await available()).toBe('0');
    expect((await adm('POST', `/admin/credit-requests/${req.body.id}/approve`, a)).body.error).toBe('SAME_OPERATOR');
    expect((await adm('POST', `/admin/credit-requests/${req.body.id}/approve`, ADMIN_TOKEN)).body.error).toBe('ADMIN_TOKEN_NOT_ALLOWED');
    const pending = await adm('GET', '/admin/credit-requests?status=PENDING_APPROVAL', b);
    expect(pending.body.items.map((i: any) => i.id)).toEqual([req.body.id]);
    const approvals = await Promise.all([1, 2, 3].map(() => adm('POST', `/admin/credit-requests/${req.body.id}/approve`, b)));
    expect(approvals.some((r) => r.status === 200 && r.body.status === 'CREDITED')).toBe(true);
    for (const r of approvals) expect([200, 409]).toContain(r.status);
    expect(await available()).toBe('200000000');
    const txs = await pub('GET', '/wallets/transactions', key);
    expect(txs.body.items.filter((t: any) => t.type === 'BALANCE_ADD').map((t: any) => t.amount)).toEqual(['200000000']);
    expect((await stack.invariants()).violations).toEqual([]);

    // The audit log tells who did what.
    const audit = await adm('GET', `/admin/audit?targetId=${co.body.id}&limit=100`, b);
    const trail = [...audit.body.items].reverse().map((i: any) => `${i.principal.email}:${i.action}:${i.outcome}`);
    // (The shared token's refused approval never reached the action: not an entry.)
    expect(trail.slice(0, 6)).toEqual([
      'ana@billetera.co:adminCreateCompany:SUCCEEDED',
      'ana@billetera.co:adminCreateDashboardUser:SUCCEEDED',
      'beto@billetera.co:adminApproveApprovalRequest:SUCCEEDED',
      'ana@billetera.co:adminCreateApiKey:SUCCEEDED',
      'ana@billetera.co:adminCreditWallet:SUCCEEDED',
      'ana@billetera.co:adminApproveCreditRequest:FAILED',
    ]);
    expect(trail).toContain('beto@billetera.co:adminApproveCreditRequest:REQUESTED');
    expect(trail).toContain('beto@billetera.co:adminApproveCreditRequest:SUCCEEDED');
    // The rest of an operator's day: who am I, who else is there, one request read and another
    // withdrawn (rejected by its maker), a colleague disabled, and a logout that ends the session.
    expect(await adm('GET', '/admin/auth/me', a)).toMatchObject({ status: 200, body: { kind: 'operator', email: 'ana@billetera.co' } });
    const team = await adm('GET', '/admin/operators', a);
    expect(team.status).toBe(200);
    expect(team.body.items.map((o: any) => o.email).sort()).toEqual(['ana@billetera.co', 'beto@billetera.co']);
    expect((await adm('GET', `/admin/credit-requests/${req.body.id}`, b)).body).toMatchObject({ id: req.body.id, status: 'CREDITED' });
    const second = await adm('POST', `/admin/companies/${co.body.id}/wallets/BREB/credit`, a, { amountCents: 300_000_000, reference: 'fondeo-retirado' });
    expect(second.status).toBe(202);
    expect(await adm('POST', `/admin/credit-requests/${second.body.id}/reject`, a, { reason: 'Monto equivocado' })).toMatchObject({
      status: 200,
      body: { status: 'REJECTED' },
    });
    expect(await available()).toBe('200000000');
    const askCiro = await adm('POST', '/admin/operators', a, { name: 'Ciro', email: 'ciro@billetera.co' });
    expect(askCiro.status).toBe(202);
    await delayPassed(askCiro.body.id);
    const ciro = await adm('POST', `/admin/approval-requests/${askCiro.body.id}/approve`, b);
    expect(ciro.body).toMatchObject({ status: 'APPLIED', result: { operator: { email: 'ciro@billetera.co', createdBy: ana.body.id } } });
    const off = await adm('DELETE', `/admin/operators/${ciro.body.result.operator.id}`, a);
    expect(off.status).toBe(202);
    expect((await adm('POST', `/admin/approval-requests/${off.body.id}/approve`, b)).body.result.operator.status).toBe('DISABLED');

    // Every change that weakens a control waits for the other operator: a lower threshold, a fee, an AML
    // removal. Beto finds them in the queue, reads one, approves one and rejects the others.
    expect((await adm('PATCH', `/admin/companies/${co.body.id}`, a, { multiSigThreshold: 2 })).status).toBe(200);
    const lower = await adm('PATCH', `/admin/companies/${co.body.id}`, a, { multiSigThreshold: 1 });
    const fee = await adm('PUT', '/admin/fees/BREB_OUTFLOW', a, { fixedFeeCents: 0, variableBps: 0, companyId: co.body.id });
    const listed = await adm('POST', '/admin/aml/blacklist', a, { documentNumber: '79111222', reason: 'Lista restrictiva' });
    expect(listed.status).toBe(201);
    const unlist = await adm('DELETE', `/admin/aml/blacklist/${listed.body.id}`, a);
    expect([lower.status, fee.status, unlist.status]).toEqual([202, 202, 202]);
    const queue = await adm('GET', `/admin/approval-requests?status=PENDING_APPROVAL&companyId=${co.body.id}`, b);
    expect(queue.status).toBe(200);
    expect(queue.body.items.map((r: any) => r.action).sort()).toEqual(['COMPANY_UPDATE', 'FEE_SET']);
    const amlQueue = await adm('GET', '/admin/approval-requests?status=PENDING_APPROVAL&action=AML_REMOVE', b);
    expect(amlQueue.body.items.map((r: any) => r.id)).toEqual([unlist.body.id]);
    expect(await adm('GET', `/admin/approval-requests/${fee.body.id}`, b)).toMatchObject({ status: 200, body: { id: fee.body.id, action: 'FEE_SET' } });
    await delayPassed(lower.body.id);
    expect((await adm('POST', `/admin/approval-requests/${lower.body.id}/approve`, b)).body.status).toBe('APPLIED');
    for (const r of [fee, unlist]) {
      const rejected = await adm('POST', `/admin/approval-requests/${r.body.id}/reject`, b, { reason: 'Sin soporte' });
      expect(rejected).toMatchObject({ status: 200, body: { status: 'REJECTED', reason: 'Sin soporte' } });
    }
    expect((await adm('GET', `/admin/companies/${co.body.id}`, b)).body.multiSigThreshold).toBe(1);

    expect((await adm('POST', '/admin/auth/logout', b)).status).toBe(204);
    expect((await adm('GET', '/admin/auth/me', b)).body.error).toBe('SESSION_EXPIRED');

    // And cannot be rewritten.
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      await expect(db.query('delete from gateway.admin_audit')).rejects.toThrow(/append-only/);
      await expect(db.query(`update gateway.admin_audit set operator_email = 'otra@billetera.co'`)).rejects.toThrow(/append-only/);
    } finally {
      await db.end();
    }
  });
});
