import { ERRORS } from '@wallet/platform';
import { startStack, type Stack } from './support/stack.js';
import { adminOf, client, expectNoInternals, type Client } from './support/http.js';
import { newOperator, totpCode, type TestOperator } from './support/operators.js';
import { sql } from './support/sql.js';

/**
 * Named operators, the audit log and maker-checker credits, through the real HTTP gateway on real
 * Postgres and Redis (development mode: the shared token also works; production: admin-listener.test.ts).
 */
const THRESHOLD = 1_000_000;

let stack: Stack;
let api: Client;
let token: string;
let a: TestOperator;
let b: TestOperator;
let c: TestOperator;

beforeAll(async () => {
  stack = await startStack({ RATE_LIMIT_READS: '100000', RATE_LIMIT_ADMIN_LOGIN: '1000', ADMIN_CREDIT_DUAL_CONTROL_CENTS: String(THRESHOLD) });
  api = client(stack.gw.url);
  token = stack.gw.adminToken;
  // Three operators invited by the shared token: independent of one another.
  a = await newOperator(api, token, 'Ana');
  b = await newOperator(api, token, 'Bruno');
  c = await newOperator(api, token, 'Carla');
}, 60_000);
afterAll(() => stack?.stop());

const auditRows = (where = 'true', params: unknown[] = []) => sql(stack.db.url, `select * from gateway.admin_audit where ${where} order by seq`, params);
const as = (session: string) => adminOf(api, session);

async function balance(companyId: string): Promise<string> {
  const key = await adminOf(api, token).issueKey(companyId, 'READ');
  const r = await api.get('/wallets/balance', { token: key.key });
  return r.body.wallets.find((w: any) => w.rail === 'BREB').availableCents;
}

describe('operators', () => {
  it('are invited, enroll (password + TOTP secret shown only to them) and log in with both', async () => {
    const me = await api.get('/admin/auth/me', { token: a.session });
    expect(me.body).toEqual({ kind: 'operator', operatorId: a.id, email: a.email });
    expect((await api.get('/admin/auth/me', { token })).body).toEqual({ kind: 'bootstrap-token', operatorId: null, email: null });
    const [row] = await sql(stack.db.url, 'select * from gateway.operators where id = $1', [a.id]);
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect(row.totp_secret_enc).not.toContain(a.totpSecret);
    expect(row.enrollment_token_hash).toBeNull();
    const sessions = await sql(stack.db.url, 'select token_hash from gateway.operator_sessions where operator_id = $1', [a.id]);
    expect(sessions.length).toBeGreaterThan(0);
    for (const s of sessions) expect(s.token_hash).not.toContain(a.session);
    const list = await api.get('/admin/operators', { token: a.session });
    expect(list.status).toBe(200);
    expect(list.body.items.find((o: any) => o.id === a.id)).toMatchObject({ email: a.email, status: 'ACTIVE', createdBy: null });
    expect(list.text).not.toMatch(/password|totp|enrollmentToken/i);
  });

  it('login failures all read the same (e-mail, password, code, replayed code), and are audited', async () => {
    const failed = { error: 'OPERATOR_AUTH_FAILED', message: ERRORS.OPERATOR_AUTH_FAILED.message };
    const attempts = [
      { email: 'nadie@billetera.co', password: a.password, totpCode: totpCode(a.totpSecret) },
      { email: a.email, password: 'Clave-equivocada-123', totpCode: totpCode(a.totpSecret, 1) },
      { email: a.email, password: a.password, totpCode: '000000' },
      // The code of the first login was consumed (the very code: "this step's" would be a fresh one
      // if a 30-second step ended since, and that login would rightly succeed).
      { email: a.email, password: a.password, totpCode: a.firstCode },
    ];
    for (const body of attempts) {
      const r = await api.post('/admin/auth/login', { body });
      expect({ status: r.status, body: r.body }).toEqual({ status: 401, body: failed });
    }
    const rows = await auditRows(`action = 'adminLogin' and outcome = 'FAILED' and request->'body'->>'email' in ($1, $2)`, [a.email, 'nadie@billetera.co']);
    expect(rows).toHaveLength(4);
    for (const r of rows) {
      expect(r.principal_kind).toBe('anonymous');
      expect(r.error_code).toBe('OPERATOR_AUTH_FAILED');
      expect(r.request.body.password).toBe('[redacted]');
      expect(r.request.body.totpCode).toBe('[redacted]');
    }
    expect(rows.filter((r) => r.targets.operatorId === a.id)).toHaveLength(3);
    const ok = await auditRows(`action = 'adminLogin' and outcome = 'SUCCEEDED' and operator_id = $1`, [a.id]);
    expect(ok.length).toBeGreaterThan(0);
    expect(JSON.stringify(await auditRows())).not.toContain(a.password);
  });

  it("an invitation works once; the invitee picks the password; an operator's invitation needs a second operator", async () => {
    const email = `una.vez.${Date.now()}@billetera.co`;
    const asked = await api.post('/admin/operators', { token: a.session, body: { name: 'Una Vez', email } });
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({ action: 'OPERATOR_INVITE', status: 'PENDING_APPROVAL', requestedBy: a.id, payload: { name: 'Una Vez', email } });
    expect(JSON.stringify(asked.body)).not.toMatch(/wenr_/);
    expect((await api.post(`/admin/approval-requests/${asked.body.id}/approve`, { token: a.session })).body.error).toBe('SAME_OPERATOR');
    const approved = await api.post(`/admin/approval-requests/${asked.body.id}/approve`, { token: b.session });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'APPLIED', decidedBy: b.id, result: { operator: { status: 'INVITED', createdBy: a.id, email } } });
    // Development shows the token to the approver once; it is never stored on the request.
    const enrollmentToken = approved.body.credentials.enrollmentToken as string;
    expect(enrollmentToken).toMatch(/^wenr_[0-9A-Za-z]{43}$/);
    expect(JSON.stringify((await api.get(`/admin/approval-requests/${asked.body.id}`, { token: c.session })).body)).not.toContain(enrollmentToken);
    const body = { enrollmentToken, password: 'Una-clave-muy-segura-1' };
    expect((await api.post('/admin/auth/enroll', { body })).status).toBe(200);
    const again = await api.post('/admin/auth/enroll', { body });
    expect(again.status).toBe(401);
    expect(again.body.error).toBe('OPERATOR_ENROLLMENT_INVALID');
    const dup = await api.post('/admin/operators', { token, body: { name: 'Otra', email } });
    expect(dup.status).toBe(400);
    // Nobody but the invitee saw the password or the TOTP secret, and the token is in no audit row.
    const rows = await auditRows(`targets->>'approvalRequestId' = $1`, [asked.body.id]);
    // (Ana's own approval was refused: audited as FAILED.)
    expect(rows.map((r) => `${r.action}:${r.outcome}`)).toEqual([
      'adminInviteOperator:SUCCEEDED',
      'adminApproveApprovalRequest:FAILED',
      'adminApproveApprovalRequest:SUCCEEDED',
    ]);
    expect(JSON.stringify(rows)).not.toContain(enrollmentToken);
  });

  it('logout and disabling revoke the session at once', async () => {
    const d = await newOperator(api, token, 'Diego');
    const second = await d.login(1);
    expect((await api.post('/admin/auth/logout', { token: d.session })).status).toBe(204);
    const dead = await api.get('/admin/operators', { token: d.session });
    expect(dead.status).toBe(401);
    expect(dead.body.error).toBe('SESSION_EXPIRED');
    expect((await api.get('/admin/operators', { token: second })).status).toBe(200);
    // The shared token has no session to close.
    expect((await api.post('/admin/auth/logout', { token })).body.error).toBe('ADMIN_TOKEN_NOT_ALLOWED');
    // Disabling an operator takes two: the request changes nothing until a second operator approves.
    const asked = await api.del(`/admin/operators/${d.id}`, { token: a.session });
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({ action: 'OPERATOR_DISABLE', targetId: d.id, status: 'PENDING_APPROVAL' });
    expect((await api.get('/admin/operators', { token: second })).status).toBe(200);
    const off = await api.post(`/admin/approval-requests/${asked.body.id}/approve`, { token: b.session });
    expect(off.status).toBe(200);
    expect(off.body.result.operator).toMatchObject({ id: d.id, status: 'DISABLED' });
    expect((await api.get('/admin/operators', { token: second })).status).toBe(401);
    const login = await api.post('/admin/auth/login', { body: { email: d.email, password: d.password, totpCode: totpCode(d.totpSecret, -1) } });
    expect(login.body.error).toBe('OPERATOR_AUTH_FAILED');
    const [row] = await auditRows(`action = 'adminApproveApprovalRequest' and targets->>'approvalRequestId' = $1`, [asked.body.id]);
    expect(row.before.status).toBe('PENDING_APPROVAL');
    expect(row.after).toMatchObject({ status: 'APPLIED', result: { operator: { status: 'DISABLED' } } });
    expect(row.operator_id).toBe(b.id);
  });
});

describe('admin without identity', () => {
  it('is refused (401) and writes nothing, audit included', async () => {
    const count = async () =>
      (await sql(stack.db.url, `select (select count(*) from gateway.admin_audit) as audit, (select count(*) from gateway.companies) as companies`))[0];
    const before = await count();
    const body = { name: 'Sin Identidad S.A.S.', nit: '900555111-1', taxRegime: 'COMMON' };
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'AUTH_REQUIRED'],
      ['not-the-admin-token', 'INVALID_ADMIN_TOKEN'],
      [`wadm_${'A'.repeat(43)}`, 'SESSION_EXPIRED'],
      [`${a.session}x`, 'SESSION_EXPIRED'],
    ];
    for (const [t, error] of cases) {
      for (const [method, path] of [
        ['POST', '/admin/companies'],
        ['GET', '/admin/audit'],
        ['POST', '/admin/operators'],
      ] as const) {
        const r = await api.call(method, path, { token: t, body: method === 'POST' ? body : undefined });
        expect({ path, status: r.status, error: r.body.error }).toEqual({ path, status: 401, error });
        expectNoInternals(r.text);
      }
    }
    expect(await count()).toEqual(before);
  });
});

describe('audit log', () => {
  it('records every admin action: who, when, what, targets, before and after, request id, outcome', async () => {
    const admin = as(a.session);
    const co = await admin.createCompany({ name: 'Auditada S.A.S.' });
    const patched = await admin.patch(co.id, { status: 'SUSPENDED', rateLimitMultiplier: 2 });
    expect(patched.status).toBe(200);
    const key = await admin.issueKey(co.id, 'READ', 'auditoría');
    expect((await api.del(`/admin/companies/${co.id}/api-keys/${key.id}`, { token: a.session })).status).toBe(200);
    const credit = await api.post(`/admin/companies/${co.id}/wallets/BREB/credit`, {
      token: a.session,
      body: { amountCents: 12_345, reference: 'audit-1' },
      headers: { 'x-request-id': 'req-audit-credit-1' },
    });
    expect(credit.status).toBe(201);
    const refused = await admin.credit(co.id, 'BREB', 99, 'audit-1'); // same reference, other body
    expect(refused.body.error).toBe('REFERENCE_CONFLICT');

    const page = await api.get(`/admin/audit?operatorId=${a.id}&targetId=${co.id}&limit=100`, { token: b.session });
    expect(page.status).toBe(200);
    const items = [...page.body.items].reverse(); // oldest first
    expect(items.map((i: any) => `${i.action}:${i.outcome}`)).toEqual([
      'adminCreateCompany:SUCCEEDED',
      'adminUpdateCompany:SUCCEEDED',
      'adminCreateApiKey:SUCCEEDED',
      'adminRevokeApiKey:SUCCEEDED',
      // The conflicting reference is refused by the gateway's own record of the operator's credits, before any ledger call.
      'adminCreditWallet:REQUESTED',
      'adminCreditWallet:SUCCEEDED',
      'adminCreditWallet:FAILED',
    ]);
    for (const i of items) {
      expect(i.principal).toEqual({ kind: 'operator', operatorId: a.id, email: a.email });
      expect(i.targets.companyId).toBe(co.id);
      expect(i.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    }
    const [create, patch, issue, revoke, , credited, failed] = items;
    expect(create.before).toBeNull();
    expect(create.after).toMatchObject({ id: co.id, name: 'Auditada S.A.S.', status: 'ACTIVE' });
    expect(patch.before).toMatchObject({ status: 'ACTIVE', rateLimitMultiplier: 1 });
    expect(patch.after).toMatchObject({ status: 'SUSPENDED', rateLimitMultiplier: 2 });
    expect(patch.request.body).toEqual({ status: 'SUSPENDED', rateLimitMultiplier: 2 });
    expect(issue.targets.keyId).toBe(key.id);
    expect(issue.after).toMatchObject({ id: key.id, prefix: key.prefix, scope: 'READ' });
    expect(revoke.before.revokedAt).toBeNull();
    expect(revoke.after.revokedAt).toEqual(expect.any(String));
    expect(credited).toMatchObject({
      requestId: 'req-audit-credit-1',
      targets: { companyId: co.id, rail: 'BREB' },
      request: { body: { amountCents: 12_345, reference: 'audit-1' } },
    });
    expect(credited.after).toMatchObject({ type: 'BALANCE_ADD', amount: '12345', reference: 'audit-1' });
    expect(failed).toMatchObject({ errorCode: 'REFERENCE_CONFLICT', after: null });
    // The API key's secret is nowhere in the log.
    expect(JSON.stringify(page.body)).not.toContain(key.key);
    expect(JSON.stringify(await auditRows())).not.toContain(key.key);

    // Filters and the cursor.
    const onlyPatch = await api.get(`/admin/audit?action=adminUpdateCompany&targetId=${co.id}`, { token: b.session });
    expect(onlyPatch.body.items).toHaveLength(1);
    const first = await api.get(`/admin/audit?targetId=${co.id}&limit=3`, { token: b.session });
    expect(first.body.items).toHaveLength(3);
    const rest = await api.get(`/admin/audit?targetId=${co.id}&limit=100&cursor=${first.body.nextCursor}`, { token: b.session });
    expect([...first.body.items, ...rest.body.items].map((i: any) => i.id)).toEqual(page.body.items.map((i: any) => i.id));
    expect(rest.body.nextCursor).toBeNull();
    const future = await api.get(`/admin/audit?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, { token: b.session });
    expect(future.body.items).toEqual([]);
    expect((await api.get('/admin/audit?cursor=nope', { token: b.session })).status).toBe(400);
  });

  it('keeps secrets out: a dashboard user asked for by an operator is an invitation; no password, link or secret in the log', async () => {
    const co = await as(b.session).createCompany();
    const email = `panel.${Date.now()}@empresa.co`;
    // An operator never chooses a user's password.
    const withPassword = await api.post(`/admin/companies/${co.id}/users`, {
      token: b.session,
      body: { email, password: 'Clave-usuario-panel-2026', role: 'ADMIN' },
    });
    expect([withPassword.status, withPassword.body.error]).toEqual([400, 'INVALID_REQUEST']);
    const asked = await api.post(`/admin/companies/${co.id}/users`, { token: b.session, body: { email, role: 'ADMIN' } });
    expect(asked.status).toBe(202);
    expect((await api.get(`/admin/companies/${co.id}/users`, { token: b.session })).body.items).toEqual([]);
    const approved = await api.post(`/admin/approval-requests/${asked.body.id}/approve`, { token: c.session });
    expect(approved.status).toBe(200);
    expect(approved.body.result.user).toMatchObject({ email, role: 'ADMIN' });
    const link = approved.body.credentials.invitationUrl as string;
    expect(link).toMatch(/#invitation=winv_/);
    const rows = await auditRows(`targets->>'companyId' = $1`, [co.id]);
    expect(rows.map((r) => r.action)).toEqual(expect.arrayContaining(['adminCreateDashboardUser', 'adminApproveApprovalRequest']));
    expect(JSON.stringify(rows)).not.toContain(link.split('#invitation=')[1]);
  });

  it('names the shared token as the principal of what it does (development)', async () => {
    const co = await adminOf(api, token).createCompany({ name: 'Por Token S.A.S.' });
    const [row] = await auditRows(`action = 'adminCreateCompany' and targets->>'companyId' = $1`, [co.id]);
    expect(row).toMatchObject({ principal_kind: 'bootstrap-token', operator_id: null, outcome: 'SUCCEEDED' });
  });

  it('lists newest first across every page (past 9, 99… rows)', async () => {
    while (Number((await sql(stack.db.url, 'select count(*) from gateway.admin_audit'))[0].count) < 120) {
      await api.post('/admin/auth/login', { body: { email: 'relleno@billetera.co', password: 'x', totpCode: '000000' } });
    }
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await api.get(`/admin/audit?limit=37${cursor ? `&cursor=${cursor}` : ''}`, { token: c.session });
      ids.push(...r.body.items.map((i: any) => i.id));
      cursor = r.body.nextCursor;
    } while (cursor);
    expect(ids).toEqual((await sql(stack.db.url, 'select id::text from gateway.admin_audit order by seq desc')).map((r) => r.id));
  });

  it('is append-only: rows cannot be updated, deleted or truncated, even with direct SQL', async () => {
    const [row] = await auditRows('seq = (select min(seq) from gateway.admin_audit)');
    await expect(sql(stack.db.url, `update gateway.admin_audit set outcome = 'FAILED' where id = $1`, [row.id])).rejects.toThrow(/append-only/);
    await expect(sql(stack.db.url, 'delete from gateway.admin_audit where id = $1', [row.id])).rejects.toThrow(/append-only/);
    await expect(sql(stack.db.url, 'truncate gateway.admin_audit')).rejects.toThrow(/append-only/);
    const [still] = await auditRows('id = $1', [row.id]);
    expect(still).toEqual(row);
  });
});

describe('maker-checker credits', () => {
  it('above the threshold one operator moves no money; the same operator and the shared token cannot approve', async () => {
    const co = await adminOf(api, token).createCompany();
    const r = await api.post(`/admin/companies/${co.id}/wallets/BREB/credit`, { token: a.session, body: { amountCents: THRESHOLD + 1, reference: 'big-1' } });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({
      id: expect.stringMatching(/^crq_[0-9a-f]{32}$/),
      status: 'PENDING_APPROVAL',
      companyId: co.id,
      rail: 'BREB',
      amountCents: THRESHOLD + 1,
      requestedBy: a.id,
      movementId: null,
    });
    expect(await balance(co.id)).toBe('0');
    // Idempotent on the reference: the same body → the same request; another body → conflict.
    expect(
      (await api.post(`/admin/companies/${co.id}/wallets/BREB/credit`, { token: a.session, body: { amountCents: THRESHOLD + 1, reference: 'big-1' } })).body.id,
    ).toBe(r.body.id);
    expect(
      (await api.post(`/admin/companies/${co.id}/wallets/BREB/credit`, { token: a.session, body: { amountCents: THRESHOLD + 2, reference: 'big-1' } })).body
        .error,
    ).toBe('REFERENCE_CONFLICT');
    // A small credit cannot take the reference either.
    expect(
      (await api.post(`/admin/companies/${co.id}/wallets/BREB/credit`, { token: b.session, body: { amountCents: 10, reference: 'big-1' } })).body.error,
    ).toBe('REFERENCE_CONFLICT');

    const self = await api.post(`/admin/credit-requests/${r.body.id}/approve`, { token: a.session });
    expect({ status: self.status, body: self.body }).toEqual({
      status: 403,
      body: { error: 'SAME_OPERATOR', message: ERRORS.SAME_OPERATOR.message, details: { reason: 'SAME_PERSON' } },
    });
    const shared = await api.post(`/admin/credit-requests/${r.body.id}/approve`, { token });
    expect({ status: shared.status, error: shared.body.error }).toEqual({ status: 403, error: 'ADMIN_TOKEN_NOT_ALLOWED' });
    expect(await balance(co.id)).toBe('0');
    const listed = await api.get(`/admin/credit-requests?status=PENDING_APPROVAL&companyId=${co.id}`, { token: b.session });
    expect(listed.body.items.map((i: any) => i.id)).toEqual([r.body.id]);
    // At or below the threshold (and within the running totals: an operator with no credits yet), credited at once.
    const fresh = await newOperator(api, token, 'Nueva');
    const small = await api.post(`/admin/companies/${co.id}/wallets/BREB/credit`, {
      token: fresh.session,
      body: { amountCents: THRESHOLD, reference: 'small-1' },
    });
    expect(small.status).toBe(201);
    expect(await balance(co.id)).toBe(String(THRESHOLD));
  });

  it('a second operator approves: credited exactly once, even with approvals racing', async () => {
    const co = await adminOf(api, token).createCompany();
    const amount = 5 * THRESHOLD;
    const req = (await api.post(`/admin/companies/${co.id}/wallets/BREB/credit`, { token: a.session, body: { amountCents: amount, reference: 'race-1' } }))
      .body;
    const [rb, rc, rb2] = await Promise.all([
      api.post(`/admin/credit-requests/${req.id}/approve`, { token: b.session }),
      api.post(`/admin/credit-requests/${req.id}/approve`, { token: c.session }),
      api.post(`/admin/credit-requests/${req.id}/approve`, { token: b.session }),
    ]);
    const answers = [rb, rc, rb2];
    const won = answers.filter((x) => x.status === 200);
    expect(won.length).toBeGreaterThanOrEqual(1);
    for (const x of answers.filter((y) => y.status !== 200)) expect([x.status, x.body.error]).toEqual([409, 'CREDIT_REQUEST_NOT_PENDING']);
    // One approver won; only their own retry may also answer 200 (same movement).
    const approver = won[0]!.body.decidedBy;
    for (const x of won) expect(x.body).toMatchObject({ status: 'CREDITED', decidedBy: approver, movementId: won[0]!.body.movementId });
    expect(await balance(co.id)).toBe(String(amount));
    const key = await adminOf(api, token).issueKey(co.id, 'READ');
    const tx = await api.get('/wallets/transactions?limit=50', { token: key.key });
    expect(tx.body.items.filter((i: any) => i.type === 'BALANCE_ADD')).toHaveLength(1);
    // A decided request takes no second decision.
    expect((await api.post(`/admin/credit-requests/${req.id}/approve`, { token: c.session })).body.error).toBe('CREDIT_REQUEST_NOT_PENDING');
    expect((await api.post(`/admin/credit-requests/${req.id}/reject`, { token: c.session, body: {} })).body.error).toBe('CREDIT_REQUEST_NOT_PENDING');
    // The approval is audited: a REQUESTED row before the ledger call and the outcome after, with before/after.
    const rows = await auditRows(`action = 'adminApproveCreditRequest' and targets->>'creditRequestId' = $1 and outcome <> 'FAILED'`, [req.id]);
    // (The winner's own concurrent retry, if it resumed, adds a second SUCCEEDED row for the same movement.)
    expect(rows.map((x) => x.outcome)).toEqual(['REQUESTED', ...rows.slice(1).map(() => 'SUCCEEDED')]);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(rows[0].before.status).toBe('PENDING_APPROVAL');
    expect(rows[0].after.status).toBe('APPROVED');
    for (const x of rows.slice(1)) {
      expect(x.after).toMatchObject({ status: 'CREDITED', movement: { type: 'BALANCE_ADD', id: won[0]!.body.movementId } });
      expect(x.operator_id).toBe(approver);
    }
  });

  it('an operator invited by the requester (or who invited them) cannot approve; a rejection credits nothing', async () => {
    const invitee = await newOperator(api, a.session, 'Invitado', { approver: b.session });
    const co = await adminOf(api, token).createCompany();
    const req = (
      await api.post(`/admin/companies/${co.id}/wallets/ACH/credit`, { token: a.session, body: { amountCents: 2 * THRESHOLD, reference: 'chain-1' } })
    ).body;
    const byInvitee = await api.post(`/admin/credit-requests/${req.id}/approve`, { token: invitee.session });
    expect([byInvitee.status, byInvitee.body.error, byInvitee.body.details]).toEqual([403, 'SAME_OPERATOR', { reason: 'INVITATION_CHAIN' }]);
    const req2 = (
      await api.post(`/admin/companies/${co.id}/wallets/ACH/credit`, { token: invitee.session, body: { amountCents: 2 * THRESHOLD, reference: 'chain-2' } })
    ).body;
    expect((await api.post(`/admin/credit-requests/${req2.id}/approve`, { token: a.session })).body.error).toBe('SAME_OPERATOR');
    // Someone independent of both may decide: here, reject.
    const rejected = await api.post(`/admin/credit-requests/${req.id}/reject`, { token: c.session, body: { reason: 'Sin soporte contable' } });
    expect(rejected.body).toMatchObject({ status: 'REJECTED', decidedBy: c.id, reason: 'Sin soporte contable' });
    expect((await api.post(`/admin/credit-requests/${req.id}/approve`, { token: b.session })).body.error).toBe('CREDIT_REQUEST_NOT_PENDING');
    expect((await api.get(`/admin/credit-requests/${req.id}`, { token: b.session })).body.status).toBe('REJECTED');
    expect((await api.get('/admin/credit-requests/crq_00000000000000000000000000000000', { token: b.session })).body.error).toBe('CREDIT_REQUEST_NOT_FOUND');
    const key = await adminOf(api, token).issueKey(co.id, 'READ');
    const ach = (await api.get('/wallets/balance', { token: key.key })).body.wallets.find((w: any) => w.rail === 'ACH');
    expect(ach.availableCents).toBe('0');
  });

  it('the shared development token still credits directly (§4), whatever the amount', async () => {
    const co = await adminOf(api, token).createCompany();
    const r = await adminOf(api, token).credit(co.id, 'BREB', 10 * THRESHOLD, 'dev-big');
    expect(r.status).toBe(201);
    expect(await balance(co.id)).toBe(String(10 * THRESHOLD));
  });
});

describe('development listeners', () => {
  it('GATEWAY_ADMIN_PORT opens an admin listener (/admin only) beside the public port, which keeps /admin', async () => {
    const g = await stack.extraGateway({ GATEWAY_ADMIN_PORT: '0' });
    const pub = client(g.url);
    const adm = client(g.adminUrl!);
    expect((await adm.get('/admin/auth/me', { token: a.session })).body.kind).toBe('operator');
    expect((await pub.get('/admin/auth/me', { token: a.session })).body.kind).toBe('operator');
    const r = await adm.get('/dictionaries/banks/ach');
    expect([r.status, r.body.error]).toEqual([404, 'ROUTE_NOT_FOUND']);
    expect(stack.gw.adminUrl).toBeUndefined();
  });
});

describe('admin rate limits', () => {
  /** Until its Redis connection is up a fresh gateway counts in memory: wait for it. */
  const ready = async (opsUrl: string) => {
    for (let i = 0; i < 100 && (await fetch(`${opsUrl}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  };

  it('failed logins count: past the limit even the right credentials wait', async () => {
    const g = await stack.extraGateway({ RATE_LIMIT_ADMIN_LOGIN: '3' });
    const other = client(g.url);
    await ready(g.opsUrl);
    for (let i = 0; i < 3; i++) {
      expect((await other.post('/admin/auth/login', { body: { email: b.email, password: 'Clave-equivocada-000', totpCode: '123456' } })).status).toBe(401);
    }
    const blocked = await other.post('/admin/auth/login', { body: { email: b.email, password: b.password, totpCode: totpCode(b.totpSecret, 1) } });
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toBe('RATE_LIMIT_EXCEEDED');
    expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('admin routes are limited per client IP (failed attempts count) and per operator', async () => {
    const g = await stack.extraGateway({ RATE_LIMIT_ADMIN: '3' });
    const other = client(g.url);
    await ready(g.opsUrl);
    for (let i = 0; i < 3; i++) expect((await other.get('/admin/operators', { token: 'wrong-admin-token' })).status).toBe(401);
    const r = await other.get('/admin/operators', { token: c.session });
    expect(r.status).toBe(429);
    expect(r.headers.get('ratelimit-limit')).toBe('3');
    // One operator from many addresses (X-Forwarded-For from the trusted loopback proxy) is counted as one.
    const from = (ip: string) => ({ token: c.session, headers: { 'x-forwarded-for': ip } });
    for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) expect((await other.get('/admin/operators', from(ip))).status).toBe(200);
    const fourth = await other.get('/admin/operators', from('203.0.113.4'));
    expect([fourth.status, fourth.body.error]).toEqual([429, 'RATE_LIMIT_EXCEEDED']);
    // Another operator from that address is not.
    expect((await other.get('/admin/operators', { token: b.session, headers: { 'x-forwarded-for': '203.0.113.5' } })).status).toBe(200);
  });
});
