import { randomUUID } from 'node:crypto';
import { startStack, type Stack } from './support/stack.js';
import { adminOf, client, type Client } from './support/http.js';
import { newOperator, type TestOperator } from './support/operators.js';
import { sql } from './support/sql.js';

/**
 * No single insider moves money (docs/security.md "The insider", findings I1–I3), tried as an insider would, through the
 * real HTTP gateway, ledger and transfer service (development mode; the production-only controls —
 * credentials only to their owner, the bootstrap mark — are in test/e2e/insider-production.test.ts).
 * Every sensitive change one operator asks for waits for a second, independent one.
 */
const THRESHOLD = 1_000_000;

let stack: Stack;
let api: Client;
let token: string;
let a: TestOperator;
let b: TestOperator;
let c: TestOperator;

beforeAll(async () => {
  stack = await startStack({
    RATE_LIMIT_READS: '100000',
    RATE_LIMIT_ADMIN: '100000',
    RATE_LIMIT_ADMIN_LOGIN: '1000',
    ADMIN_CREDIT_DUAL_CONTROL_CENTS: String(THRESHOLD),
  });
  api = client(stack.gw.url);
  token = stack.gw.adminToken;
  a = await newOperator(api, token, 'Ana');
  b = await newOperator(api, token, 'Bruno');
  c = await newOperator(api, token, 'Carla');
}, 60_000);
afterAll(() => stack?.stop());

const approve = (id: string, session: string) => api.post(`/admin/approval-requests/${id}/approve`, { token: session });
const balance = async (companyId: string, rail: 'BREB' | 'ACH' = 'BREB'): Promise<string> => {
  const key = await adminOf(api, token).issueKey(companyId, 'READ');
  const r = await api.get('/wallets/balance', { token: key.key });
  return r.body.wallets.find((w: any) => w.rail === rail).availableCents;
};
const breb = (amount: number) => ({
  amount,
  destination: { brebKey: { type: 'PHONE', value: '3001234567' } },
  targetName: 'Juan Pérez',
  targetDocument: '1020304050',
  description: 'insider',
});

describe('finding 1: one operator drains a multi-signature company', () => {
  it('lowering the threshold and a WRITE key each wait for a second operator; alone, the operator cannot send', async () => {
    const co = await adminOf(api, token).createCompany({ multiSigThreshold: 2 });
    await adminOf(api, token).credit(co.id, 'BREB', 400_000, 'fondeo');

    // The attack, step by step, by one operator.
    const lower = await api.patch(`/admin/companies/${co.id}`, { token: a.session, body: { multiSigThreshold: 0 } });
    expect(lower.status).toBe(202);
    expect(lower.body).toMatchObject({
      action: 'COMPANY_UPDATE',
      companyId: co.id,
      status: 'PENDING_APPROVAL',
      payload: { multiSigThreshold: 0 },
      requestedBy: a.id,
    });
    expect((await api.get(`/admin/companies/${co.id}`, { token: a.session })).body.multiSigThreshold).toBe(2);
    expect((await approve(lower.body.id, a.session)).body).toMatchObject({ error: 'SAME_OPERATOR', details: { reason: 'SAME_PERSON' } });
    expect((await approve(lower.body.id, token)).body.error).toBe('ADMIN_TOKEN_NOT_ALLOWED');

    const write = await api.post(`/admin/companies/${co.id}/api-keys`, { token: a.session, body: { scope: 'WRITE', label: 'para mí' } });
    expect(write.status).toBe(202);
    expect(write.body).toMatchObject({ action: 'API_KEY_ISSUE', status: 'PENDING_APPROVAL', payload: { scope: 'WRITE', label: 'para mí' } });
    expect(write.text).not.toMatch(/wk_test_/);
    expect((await api.get(`/admin/companies/${co.id}/api-keys`, { token: a.session })).body.items.filter((k: any) => k.scope === 'WRITE')).toEqual([]);

    // What one operator can get alone: a READ key, which cannot send.
    const read = await api.post(`/admin/companies/${co.id}/api-keys`, { token: a.session, body: { scope: 'READ', label: 'lectura' } });
    expect(read.status).toBe(201);
    const send = await api.post('/transfers/send', { token: read.body.key, body: breb(400_000), headers: { 'Idempotency-Key': randomUUID() } });
    expect([send.status, send.body.error]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    expect(await balance(co.id)).toBe('400000');

    // Re-asking is a replay, not a second request; asking something else for the same company while one is open is refused.
    expect((await api.patch(`/admin/companies/${co.id}`, { token: a.session, body: { multiSigThreshold: 0 } })).body.id).toBe(lower.body.id);
    const other = await api.patch(`/admin/companies/${co.id}`, { token: a.session, body: { multiSigThreshold: 1 } });
    expect([other.status, other.body.error, other.body.details.openRequestId]).toEqual([409, 'APPROVAL_REQUEST_NOT_PENDING', lower.body.id]);

    // Tightening needs nobody else.
    const raise = await api.patch(`/admin/companies/${co.id}`, { token: a.session, body: { multiSigThreshold: 3 } });
    expect([raise.status, raise.body.multiSigThreshold]).toEqual([200, 3]);

    // A second, independent operator approves each: now (and only now) the change is made, once.
    const approved = await Promise.all([approve(lower.body.id, b.session), approve(lower.body.id, c.session), approve(lower.body.id, b.session)]);
    expect(approved.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of approved.filter((x) => x.status !== 200)) expect([r.status, r.body.error]).toEqual([409, 'APPROVAL_REQUEST_NOT_PENDING']);
    expect((await api.get(`/admin/companies/${co.id}`, { token: a.session })).body.multiSigThreshold).toBe(0);
    const key = await approve(write.body.id, c.session);
    expect(key.body).toMatchObject({
      status: 'APPLIED',
      decidedBy: c.id,
      result: { apiKey: { scope: 'WRITE', label: 'para mí' } },
      credentials: { key: expect.stringMatching(/^wk_test_/) },
    });
    expect(JSON.stringify((await api.get(`/admin/approval-requests/${write.body.id}`, { token: b.session })).body)).not.toContain(key.body.credentials.key);
    const audit = await sql(stack.db.url, `select * from gateway.admin_audit where targets->>'approvalRequestId' = $1`, [write.body.id]);
    expect(JSON.stringify(audit)).not.toContain(key.body.credentials.key);

    // The company was told of every step, the requests included (so its people could object), never the key.
    const told = await sql(
      stack.db.url,
      `select payload from gateway.outbox where subject = 'company.security_changed' and payload->>'companyId' = $1 order by seq`,
      [co.id],
    );
    const changes = told.map((r) => `${r.payload.change}${r.payload.approvalRequestId ? `:${r.payload.approvalRequestId}` : ''}`);
    expect(changes).toEqual([
      `MULTISIG_THRESHOLD_CHANGE_REQUESTED:${lower.body.id}`,
      `API_KEY_REQUESTED:${write.body.id}`,
      'API_KEY_ISSUED',
      'API_KEY_ISSUED' /* balance()'s */,
      'MULTISIG_THRESHOLD_CHANGED',
      `MULTISIG_THRESHOLD_CHANGED:${lower.body.id}`,
      `API_KEY_ISSUED:${write.body.id}`,
    ]);
    expect(JSON.stringify(told)).not.toContain(key.body.credentials.key);
    expect(JSON.stringify(told)).not.toContain(read.body.key);
  });

  it('loosening a counterparty limit waits; tightening one does not', async () => {
    const co = await adminOf(api, token).createCompany();
    expect((await adminOf(api, token).patch(co.id, { counterpartyDailyLimitCents: 500_000 })).status).toBe(200);
    const tighter = await api.patch(`/admin/companies/${co.id}`, { token: a.session, body: { counterpartyDailyLimitCents: 400_000 } });
    expect([tighter.status, tighter.body.counterpartyDailyLimitCents]).toEqual([200, 400_000]);
    for (const body of [{ counterpartyDailyLimitCents: 900_000 }, { counterpartyMonthlyLimitCents: 0 }, { counterpartyDailyLimitCents: 0 }]) {
      const looser = await api.patch(`/admin/companies/${co.id}`, { token: a.session, body });
      expect({ body, status: looser.status }).toEqual({ body, status: 202 });
      expect((await api.post(`/admin/approval-requests/${looser.body.id}/reject`, { token: b.session, body: { reason: 'Sin soporte' } })).body.status).toBe(
        'REJECTED',
      );
    }
    const now = (await api.get(`/admin/companies/${co.id}`, { token: a.session })).body;
    expect([now.counterpartyDailyLimitCents, now.counterpartyMonthlyLimitCents]).toEqual([400_000, 50_000_000_000]);
    // A suspension is a control: one operator suspends, lifting it takes two.
    expect((await api.patch(`/admin/companies/${co.id}`, { token: a.session, body: { status: 'SUSPENDED' } })).body.status).toBe('SUSPENDED');
    const lift = await api.patch(`/admin/companies/${co.id}`, { token: a.session, body: { status: 'ACTIVE' } });
    expect([lift.status, lift.body.payload]).toEqual([202, { status: 'ACTIVE' }]);
    expect((await api.get(`/admin/companies/${co.id}`, { token: a.session })).body.status).toBe('SUSPENDED');
    expect((await approve(lift.body.id, b.session)).body.result.company.status).toBe('ACTIVE');
  });
});

describe('finding 2: maker and checker both invited by one operator', () => {
  it('two operators with a common inviter cannot approve each other; an independent one can', async () => {
    const x = await newOperator(api, token, 'Xavier');
    const p1 = await newOperator(api, x.session, 'P1', { approver: b.session });
    const p2 = await newOperator(api, x.session, 'P2', { approver: b.session });
    const co = await adminOf(api, token).createCompany();
    const req = await api.post(`/admin/companies/${co.id}/wallets/BREB/credit`, {
      token: p1.session,
      body: { amountCents: 500 * THRESHOLD, reference: 'gran-credito' },
    });
    expect(req.status).toBe(202);
    for (const checker of [p2, x]) {
      const r = await api.post(`/admin/credit-requests/${req.body.id}/approve`, { token: checker.session });
      expect([r.status, r.body.error, r.body.details]).toEqual([403, 'SAME_OPERATOR', { reason: 'INVITATION_CHAIN' }]);
    }
    // The same rule for every sensitive change, not only credits.
    const ask = await api.post(`/admin/companies/${co.id}/api-keys`, { token: p1.session, body: { scope: 'WRITE', label: 'p1' } });
    expect((await approve(ask.body.id, p2.session)).body.details).toEqual({ reason: 'INVITATION_CHAIN' });
    expect(await balance(co.id)).toBe('0');
    // b approved both invitations but invited neither: independent of both.
    const ok = await api.post(`/admin/credit-requests/${req.body.id}/approve`, { token: b.session });
    expect(ok.body.status).toBe('CREDITED');
    expect(await balance(co.id)).toBe(String(500 * THRESHOLD));
  });
});

describe('finding 3: maker-checker avoided by splitting', () => {
  it("the operator's running total decides: the credit that passes it waits, whatever its own size", async () => {
    const o = await newOperator(api, token, 'Divisor');
    const co = await adminOf(api, token).createCompany();
    const credit = (amount: number, ref: string, session = o.session) =>
      api.post(`/admin/companies/${co.id}/wallets/BREB/credit`, { token: session, body: { amountCents: amount, reference: ref } });
    expect((await credit(THRESHOLD / 2, 's1')).status).toBe(201);
    expect((await credit(THRESHOLD / 2, 's2')).status).toBe(201);
    const third = await credit(1, 's3');
    expect(third.status).toBe(202);
    expect(third.body).toMatchObject({ status: 'PENDING_APPROVAL', amountCents: 1 });
    // A retry of a credited reference replays it (not counted twice).
    const again = await credit(THRESHOLD / 2, 's1');
    expect(again.status).toBe(201);
    expect(await balance(co.id)).toBe(String(THRESHOLD));
    // The company's total too: another operator's small credit to it also waits.
    const byOther = await credit(1, 's4', c.session);
    expect(byOther.status).toBe(202);
    expect(await balance(co.id)).toBe(String(THRESHOLD));
  });

  it('parallel small credits cannot each see the total below the limit', async () => {
    const o = await newOperator(api, token, 'Paralelo');
    const co = await adminOf(api, token).createCompany();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        api.post(`/admin/companies/${co.id}/wallets/ACH/credit`, { token: o.session, body: { amountCents: THRESHOLD / 4, reference: `p-${i}` } }),
      ),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(4);
    expect(answers.filter((r) => r.status === 202)).toHaveLength(8);
    expect(await balance(co.id, 'ACH')).toBe(String(THRESHOLD));
  });
});

describe('approval requests', () => {
  it('operator invitation, disabling, fees and AML removal each take two operators', async () => {
    const co = await adminOf(api, token).createCompany();
    const fee = await api.put('/admin/fees/BREB_OUTFLOW', { token: a.session, body: { fixedFeeCents: 0, variableBps: 0, companyId: co.id } });
    expect(fee.status).toBe(202);
    expect(fee.body).toMatchObject({
      action: 'FEE_SET',
      companyId: co.id,
      payload: { operation: 'BREB_OUTFLOW', fixedFeeCents: 0, variableBps: 0, companyId: co.id },
    });
    const feeDone = await approve(fee.body.id, b.session);
    expect(feeDone.body).toMatchObject({
      status: 'APPLIED',
      result: { fee: { operation: 'BREB_OUTFLOW', companyId: co.id, fixedFeeCents: 0, variableBps: 0 } },
    });

    const entry = await api.post('/admin/aml/blacklist', {
      token: a.session,
      body: { documentNumber: `77${Date.now() % 100_000_000}`, reason: 'Lista restrictiva' },
    });
    expect(entry.status).toBe(201); // adding to the list tightens: one operator
    const removal = await api.del(`/admin/aml/blacklist/${entry.body.id}`, { token: a.session });
    expect(removal.status).toBe(202);
    expect((await approve(removal.body.id, c.session)).body).toMatchObject({ status: 'APPLIED', result: { entry: { id: entry.body.id } } });
    // An entry that does not exist: the request is made, the approval finds nothing to remove and ends FAILED.
    const unknown = await api.del(`/admin/aml/blacklist/${randomUUID()}`, { token: a.session });
    expect(unknown.status).toBe(202);
    expect((await approve(unknown.body.id, c.session)).body.error).toBe('AML_ENTRY_NOT_FOUND');
    expect((await api.get(`/admin/approval-requests/${unknown.body.id}`, { token: a.session })).body).toMatchObject({
      status: 'FAILED',
      errorCode: 'AML_ENTRY_NOT_FOUND',
    });
  });

  it('bad input: query, ids and bodies outside their schema are 400/404, never 5xx; nothing decided', async () => {
    const co = await adminOf(api, token).createCompany({ multiSigThreshold: 2 });
    const r = await api.patch(`/admin/companies/${co.id}`, { token: a.session, body: { multiSigThreshold: 1 } });
    for (const q of ['status=NOPE', 'action=CREDIT', 'limit=0', 'limit=101', 'companyId=not-a-uuid', 'cursor=nope', 'extra=1']) {
      const l = await api.get(`/admin/approval-requests?${q}`, { token: b.session });
      expect({ q, status: l.status, error: l.body.error }).toEqual({ q, status: 400, error: 'INVALID_REQUEST' });
    }
    for (const body of [{ reason: '' }, { reason: 'x'.repeat(501) }, { reason: 7 }, { motivo: 'x' }]) {
      const x = await api.post(`/admin/approval-requests/${r.body.id}/reject`, { token: b.session, body });
      expect([x.status, x.body.error]).toEqual([400, 'INVALID_REQUEST']);
    }
    const malformed = await api.post(`/admin/approval-requests/${r.body.id}/reject`, {
      token: b.session,
      raw: '{"reason":',
      headers: { 'content-type': 'application/json' },
    });
    expect([malformed.status, malformed.body.error]).toEqual([400, 'INVALID_REQUEST']);
    expect((await api.post('/admin/approval-requests/apr_nope/approve', { token: b.session })).body.error).toBe('APPROVAL_REQUEST_NOT_FOUND');
    expect((await api.get(`/admin/approval-requests/${r.body.id}`, { token: b.session })).body.status).toBe('PENDING_APPROVAL');
  });

  it('expire unused; a rejection changes nothing; unknown ids are 404', async () => {
    const co = await adminOf(api, token).createCompany({ multiSigThreshold: 2 });
    const r = await api.patch(`/admin/companies/${co.id}`, { token: a.session, body: { multiSigThreshold: 1 } });
    await sql(
      stack.db.url,
      `update gateway.approval_requests set not_before = now() - interval '2 days', expires_at = now() - interval '1 day' where id = $1`,
      [r.body.id],
    );
    const late = await approve(r.body.id, b.session);
    expect([late.status, late.body.error, late.body.details]).toEqual([409, 'APPROVAL_REQUEST_NOT_PENDING', { status: 'EXPIRED' }]);
    expect((await api.get(`/admin/companies/${co.id}`, { token: a.session })).body.multiSigThreshold).toBe(2);
    const listed = await api.get(`/admin/approval-requests?companyId=${co.id}&status=EXPIRED`, { token: c.session });
    expect(listed.body.items.map((i: any) => i.id)).toEqual([r.body.id]);
    expect((await api.get('/admin/approval-requests/apr_00000000000000000000000000000000', { token: a.session })).body.error).toBe(
      'APPROVAL_REQUEST_NOT_FOUND',
    );
    expect((await api.get('/admin/approval-requests/nope', { token: a.session })).status).toBe(404);
  });

  it('a change that weakens a control waits out the notice delay before anyone may approve it', async () => {
    const slow = await stack.extraGateway({ ADMIN_APPROVAL_DELAY_SECONDS: '3600', RATE_LIMIT_ADMIN: '100000' });
    const sapi = client(slow.url);
    const co = await adminOf(api, token).createCompany({ multiSigThreshold: 2 });
    const r = await sapi.patch(`/admin/companies/${co.id}`, { token: a.session, body: { multiSigThreshold: 0 } });
    expect(r.status).toBe(202);
    const notBefore = Date.parse(r.body.notBefore);
    expect(notBefore - Date.parse(r.body.requestedAt)).toBe(3_600_000);
    const early = await sapi.post(`/admin/approval-requests/${r.body.id}/approve`, { token: b.session });
    expect([early.status, early.body.error, early.body.details]).toEqual([409, 'APPROVAL_DELAY_PENDING', { notBefore: r.body.notBefore }]);
    // Disabling an operator protects: no delay.
    const d = await newOperator(sapi, token, 'Pausa');
    const off = await sapi.del(`/admin/operators/${d.id}`, { token: a.session });
    expect(off.body.notBefore).toBe(off.body.requestedAt);
    // The hour passes (moved in the database: the clock is Postgres's).
    await sql(stack.db.url, `update gateway.approval_requests set not_before = now(), requested_at = now() - interval '1 hour' where id = $1`, [r.body.id]);
    expect((await sapi.post(`/admin/approval-requests/${r.body.id}/approve`, { token: b.session })).body.status).toBe('APPLIED');
    expect((await api.get(`/admin/companies/${co.id}`, { token: a.session })).body.multiSigThreshold).toBe(0);
  });
});
