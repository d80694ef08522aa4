import { randomBytes } from 'node:crypto';
import { adminOf, client, type Client } from './support/http.js';
import { newOperator, type TestOperator } from './support/operators.js';
import { railContradiction } from './support/rail-contradiction.js';
import { sql } from './support/sql.js';
import { startStack, type Stack } from './support/stack.js';
import { PSE_PAYER } from '@wallet/platform/testing';

/**
 * Resolving a money exception by judgement takes two operators (docs/security.md "The insider"): a
 * named operator's write_off, credit, accept_provider, return, dismiss or explain is an approval
 * request that a second, independent operator approves; retry and rerun, and the shared development
 * token, act directly. Through the real HTTP gateway, transfer, pse-deposit and ledger.
 */
let stack: Stack;
let api: Client;
let token: string;
let admin: ReturnType<typeof adminOf>;
let a: TestOperator;
let b: TestOperator;
let c: TestOperator;

beforeAll(async () => {
  stack = await startStack({ RATE_LIMIT_READS: '100000', RATE_LIMIT_ADMIN: '100000', RATE_LIMIT_ADMIN_LOGIN: '1000' });
  api = client(stack.gw.url);
  token = stack.gw.adminToken;
  admin = adminOf(api, token);
  // Invited by the shared token: no inviter in common, so each is independent of the others.
  a = await newOperator(api, token, 'Ana');
  b = await newOperator(api, token, 'Bruno');
  c = await newOperator(api, token, 'Carla');
}, 60_000);
afterAll(() => stack?.stop());

const resolve = (id: string, session: string, action: string, note: string) =>
  api.post(`/admin/exceptions/${id}/resolve`, { token: session, body: { action, note } });
const approve = (id: string, session: string) => api.post(`/admin/approval-requests/${id}/approve`, { token: session });

/** A send the rail first fails (funds released), then reports paid: one RAIL_COMPLETED_AFTER_RELEASE exception (write_off, dismiss). */
async function contradiction(): Promise<{ id: string; transferId: string }> {
  const { transferId } = await railContradiction(stack.gw.url, api, admin);
  const listed = await api.get('/admin/exceptions?status=OPEN&kind=RAIL_COMPLETED_AFTER_RELEASE&limit=100', { token });
  const exc = listed.body.items.find((e: { resourceId: string }) => e.resourceId === transferId);
  expect(exc).toBeDefined();
  return { id: exc.id as string, transferId };
}

async function exception(id: string): Promise<Record<string, unknown>> {
  const all = await api.get('/admin/exceptions?limit=100', { token });
  return all.body.items.find((e: { id: string }) => e.id === id);
}
async function corrections(excId: string): Promise<number> {
  const [r] = await sql(stack.db.url, `select count(*)::int as n from ledger.postings where idempotency_key = $1 and kind = 'correction'`, [
    `exception:${excId}:write_off`,
  ]);
  return r.n as number;
}
async function requestsFor(excId: string): Promise<Array<{ id: string; status: string }>> {
  return sql(stack.db.url, `select id, status from gateway.approval_requests where dedupe_key = $1 order by requested_at`, [`exception:${excId}`]);
}

describe('a write_off by one operator', () => {
  it('is a request (202) that changes nothing; the requester cannot approve it; an independent operator does, once, and both are named', async () => {
    const exc = await contradiction();
    const note = 'El riel confirmó el pago después de la liberación; lo asumimos.';
    const asked = await resolve(exc.id, a.session, 'write_off', note);
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({
      action: 'EXCEPTION_RESOLVE',
      status: 'PENDING_APPROVAL',
      companyId: null,
      targetId: exc.id,
      payload: { exceptionId: exc.id, action: 'write_off', note },
      requestedBy: a.id,
    });
    // Nothing done at the owner.
    expect(await exception(exc.id)).toMatchObject({ status: 'OPEN', resolvedBy: null, action: null });
    expect(await corrections(exc.id)).toBe(0);
    // The same ask again is the same request; another action or note is a conflict naming it.
    expect((await resolve(exc.id, a.session, 'write_off', note)).body.id).toBe(asked.body.id);
    const other = await resolve(exc.id, b.session, 'dismiss', 'No hay nada que corregir.');
    expect([other.status, other.body.error, other.body.details.openRequestId]).toEqual([409, 'APPROVAL_REQUEST_NOT_PENDING', asked.body.id]);

    // The requester, and the shared token, may not approve.
    const self = await approve(asked.body.id, a.session);
    expect([self.status, self.body.error]).toEqual([403, 'SAME_OPERATOR']);
    expect((await approve(asked.body.id, token)).body.error).toBe('ADMIN_TOKEN_NOT_ALLOWED');
    expect(await exception(exc.id)).toMatchObject({ status: 'OPEN' });
    const losses0 = await losses();

    // An independent operator: the correcting entry once, the exception RESOLVED by both.
    const done = await approve(asked.body.id, b.session);
    expect(done.status).toBe(200);
    const resolvedBy = `operator:${a.id}+operator:${b.id}`;
    expect(done.body).toMatchObject({
      status: 'APPLIED',
      decidedBy: b.id,
      result: { exception: { id: exc.id, status: 'RESOLVED', action: 'write_off', note, resolvedBy } },
    });
    expect(await exception(exc.id)).toMatchObject({ status: 'RESOLVED', action: 'write_off', resolvedBy });
    expect(await corrections(exc.id)).toBe(1);
    expect(await losses()).toBe(losses0 - 250_000n);

    // Approving again changes nothing.
    for (const who of [b.session, c.session]) {
      const again = await approve(asked.body.id, who);
      expect([again.status, again.body.error]).toEqual([409, 'APPROVAL_REQUEST_NOT_PENDING']);
    }
    expect(await corrections(exc.id)).toBe(1);
    expect(await losses()).toBe(losses0 - 250_000n);
    // The audit log names both steps.
    const audit = await sql(
      stack.db.url,
      `select operator_id::text as op, outcome from gateway.admin_audit where target_ids ? $1 and route = '/admin/approval-requests/{id}/approve' order by seq`,
      [asked.body.id],
    );
    expect(audit.filter((r) => r.outcome === 'SUCCEEDED').map((r) => r.op)).toEqual([b.id]);
  });
});

describe('an approval interrupted after the owner resolved', () => {
  it('approved again, it finds the exception resolved by this very request: APPLIED, not FAILED, and no second entry', async () => {
    const exc = await contradiction();
    const asked = await resolve(exc.id, a.session, 'write_off', 'Lo asumimos.');
    expect((await approve(asked.body.id, c.session)).body.status).toBe('APPLIED');
    // As if the gateway had stopped between the owner's answer and the request's APPLIED.
    await sql(stack.db.url, `update gateway.approval_requests set status = 'APPROVED', result = null, completed_at = null where id = $1`, [asked.body.id]);
    const other = await approve(asked.body.id, b.session);
    expect([other.status, other.body.error]).toEqual([409, 'APPROVAL_REQUEST_NOT_PENDING']); // only its approver finishes it
    const again = await approve(asked.body.id, c.session);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      status: 'APPLIED',
      result: { exception: { id: exc.id, status: 'RESOLVED', resolvedBy: `operator:${a.id}+operator:${c.id}` } },
    });
    expect(await corrections(exc.id)).toBe(1);
  });
});

describe('one-person resolutions', () => {
  it('retry by one operator acts at once (no request)', async () => {
    // A refused PSE credit, planted on a deposit that owes the ledger nothing: `retry` finds no step to run and resolves it.
    const co = await admin.createCompany({ taxRegime: 'SIMPLE' });
    const key = (await admin.issueKey(co.id, 'WRITE')).key as string;
    const created = await api.post('/deposits/pse', {
      token: key,
      body: {
        amountCents: 80_000,
        ...PSE_PAYER,
      },
    });
    expect(created.status).toBe(201);
    const id = `exc_${randomBytes(16).toString('hex')}`;
    await sql(
      stack.db.url,
      `insert into pse_deposit.money_exceptions (id, kind, company_id, rail, resource_id, ours, theirs)
       values ($1, 'CREDIT_REFUSED', $2, 'PSE', $3, '{}'::jsonb, '{"source":"ledger"}'::jsonb)`,
      [id, co.id, created.body.id],
    );
    const r = await resolve(id, a.session, 'retry', 'El libro ya acepta el abono.');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, status: 'RESOLVED', action: 'retry', resolvedBy: `operator:${a.id}` });
    expect(await requestsFor(id)).toEqual([]);
  });

  it('the shared development token still resolves a write_off directly', async () => {
    const exc = await contradiction();
    const r = await resolve(exc.id, token, 'write_off', 'Lo asumimos.');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'RESOLVED', resolvedBy: 'admin' });
    expect(await corrections(exc.id)).toBe(1);
    expect(await requestsFor(exc.id)).toEqual([]);
  });
});

describe('a request that could only fail is refused at once', () => {
  it("unknown, a wrong action for the kind, not OPEN: the owner's answer, no request", async () => {
    const unknown = `exc_${'0'.repeat(32)}`;
    const r404 = await resolve(unknown, a.session, 'dismiss', 'x');
    expect([r404.status, r404.body.error]).toEqual([404, 'EXCEPTION_NOT_FOUND']);

    const exc = await contradiction();
    const r400 = await resolve(exc.id, a.session, 'credit', 'No aplica a una transferencia.');
    expect([r400.status, r400.body.error]).toEqual([400, 'INVALID_REQUEST']);
    expect(r400.body.details.fields).toEqual([{ path: 'action', message: 'Debe ser una de write_off, dismiss para RAIL_COMPLETED_AFTER_RELEASE.' }]);
    // The same answer the owner gives the shared token.
    const owner400 = await resolve(exc.id, token, 'credit', 'No aplica a una transferencia.');
    expect([owner400.status, owner400.body.details.fields]).toEqual([400, r400.body.details.fields]);

    expect((await resolve(exc.id, token, 'dismiss', 'Cerrada por el token.')).status).toBe(200);
    const r409 = await resolve(exc.id, a.session, 'write_off', 'Tarde.');
    expect([r409.status, r409.body.error]).toEqual([409, 'EXCEPTION_NOT_OPEN']);

    expect(await requestsFor(unknown)).toEqual([]);
    expect(await requestsFor(exc.id)).toEqual([]);
    expect(await corrections(exc.id)).toBe(0);
  });
});

describe('while a request waits', () => {
  it('an exception resolved otherwise ends the request FAILED with EXCEPTION_NOT_OPEN at its approval; no second entry', async () => {
    const exc = await contradiction();
    const asked = await resolve(exc.id, a.session, 'dismiss', 'El riel se equivocó.');
    expect(asked.status).toBe(202);
    // Meanwhile the shared token (development) writes it off.
    expect((await resolve(exc.id, token, 'write_off', 'Lo asumimos.')).status).toBe(200);
    const losses0 = await losses();
    const late = await approve(asked.body.id, b.session);
    expect([late.status, late.body.error]).toEqual([409, 'EXCEPTION_NOT_OPEN']);
    expect((await api.get(`/admin/approval-requests/${asked.body.id}`, { token: c.session })).body).toMatchObject({
      status: 'FAILED',
      errorCode: 'EXCEPTION_NOT_OPEN',
      decidedBy: b.id,
    });
    expect(await exception(exc.id)).toMatchObject({ status: 'RESOLVED', action: 'write_off', resolvedBy: 'admin' });
    expect(await corrections(exc.id)).toBe(1);
    expect(await losses()).toBe(losses0);
    // Ended: a new request may be made (here refused at once: the exception is not OPEN).
    expect((await resolve(exc.id, a.session, 'dismiss', 'otra vez')).body.error).toBe('EXCEPTION_NOT_OPEN');
  });

  it('two operators asking at once make one request', async () => {
    const exc = await contradiction();
    const note = 'Lo asumimos.';
    const [x, y] = await Promise.all([resolve(exc.id, a.session, 'write_off', note), resolve(exc.id, c.session, 'write_off', note)]);
    expect([x.status, y.status]).toEqual([202, 202]);
    expect(x.body.id).toBe(y.body.id);
    expect(await requestsFor(exc.id)).toEqual([{ id: x.body.id, status: 'PENDING_APPROVAL' }]);
    // Two different asks at once: one request, the other a conflict naming it.
    const exc2 = await contradiction();
    const [p, q] = await Promise.all([resolve(exc2.id, a.session, 'write_off', note), resolve(exc2.id, c.session, 'dismiss', note)]);
    expect([p.status, q.status].sort()).toEqual([202, 409]);
    const open = await requestsFor(exc2.id);
    expect(open).toHaveLength(1);
    expect((p.status === 409 ? p : q).body.details.openRequestId).toBe(open[0]!.id);
    // Withdrawn by its requester: nothing changed, and the exception may be asked for again.
    const mine = p.status === 202 ? { r: p, by: a } : { r: q, by: c };
    expect((await api.post(`/admin/approval-requests/${mine.r.body.id}/reject`, { token: mine.by.session, body: { reason: 'Me equivoqué' } })).status).toBe(
      200,
    );
    expect(await exception(exc2.id)).toMatchObject({ status: 'OPEN' });
    expect((await resolve(exc2.id, a.session, 'dismiss', 'El riel se equivocó.')).status).toBe(202);
  });
});

async function losses(): Promise<bigint> {
  const [r] = await sql(stack.db.url, `select coalesce(sum(amount), 0)::text as s from ledger.entries where account = 'operational_losses'`);
  return BigInt(r.s);
}
