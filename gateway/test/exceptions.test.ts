import { randomUUID } from 'node:crypto';
import { ERRORS, signPayload } from '@wallet/platform';
import { MoneyExceptionSchema } from '../src/api/admin/exceptions/schemas.js';
import { adminOf, client, expectNoInternals, type Client, type Reply } from './support/http.js';
import { railContradiction } from './support/rail-contradiction.js';
import { sql } from './support/sql.js';
import { startStack, type Stack } from './support/stack.js';
import { PSE_PAYER } from '@wallet/platform/testing';

/** Money exceptions through the gateway (CONTRACT §10): a rail outcome that contradicts our state, listed and resolved. */
let stack: Stack;
let api: Client;
let admin: ReturnType<typeof adminOf>;
let token: string;

beforeAll(async () => {
  stack = await startStack({ RATE_LIMIT_READS: '100000' });
  api = client(stack.gw.url);
  token = stack.gw.adminToken;
  admin = adminOf(api, token);
});
afterAll(() => stack?.stop());

function expectError(r: Reply, status: number, code: keyof typeof ERRORS) {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error: code });
  expect(r.body.message).toBe(ERRORS[code].message);
  expectNoInternals(r.text);
}

/** A send the rail first fails (funds released), then reports paid: one RAIL_COMPLETED_AFTER_RELEASE exception. */
const contradiction = () => railContradiction(stack.gw.url, api, admin);

describe('GET /admin/exceptions', () => {
  it('lists a COMPLETED for a released transfer as an OPEN exception with both sides; filters and pages', async () => {
    const a = await contradiction();
    const b = await contradiction();
    const r = await api.get('/admin/exceptions?status=OPEN&kind=RAIL_COMPLETED_AFTER_RELEASE&limit=1', { token });
    expect(r.status).toBe(200);
    expect(r.body.items).toHaveLength(1);
    const first = MoneyExceptionSchema.parse(r.body.items[0]);
    expect(first).toMatchObject({
      kind: 'RAIL_COMPLETED_AFTER_RELEASE',
      status: 'OPEN',
      rail: 'ACH',
      resourceId: b.transferId,
      companyId: b.companyId,
      actions: ['write_off', 'dismiss'],
    });
    expect(first.id).toMatch(/^exc_[0-9a-f]{32}$/);
    expect(first.ours).toMatchObject({ state: 'FAILED', amount: '250000' });
    expect(first.theirs).toMatchObject({ source: 'callback', status: 'COMPLETED' });
    expect(r.body.nextCursor).toEqual(expect.any(String));
    const next = await api.get(`/admin/exceptions?status=OPEN&kind=RAIL_COMPLETED_AFTER_RELEASE&limit=1&cursor=${encodeURIComponent(r.body.nextCursor)}`, {
      token,
    });
    expect(next.status).toBe(200);
    expect(next.body.items[0]).toMatchObject({ resourceId: a.transferId });
    // The company sees its money back: nothing moved on the contradiction.
    const read = (await admin.issueKey(a.companyId, 'READ')).key as string;
    const bal = await api.get('/wallets/balance', { token: read });
    expect(bal.body.wallets.find((w: { rail: string }) => w.rail === 'ACH')).toMatchObject({ availableCents: '1000000', pendingOutCents: '0' });
  });

  it('refuses bad filters, needs the admin token', async () => {
    expectError(await api.get('/admin/exceptions?status=MAYBE', { token }), 400, 'INVALID_REQUEST');
    expectError(await api.get('/admin/exceptions?limit=1000', { token }), 400, 'INVALID_REQUEST');
    expectError(await api.get('/admin/exceptions?cursor=bm9wZQ', { token }), 400, 'INVALID_REQUEST');
    expect((await api.get('/admin/exceptions')).status).toBe(401);
    expect((await api.get('/admin/exceptions', { token: 'not-the-token' })).status).toBe(401);
  });
});

/** A PSE link that expired, then a PAID whose paidAt is past expiresAt + grace: one PAID_AFTER_EXPIRY exception. */
async function lateDeposit(): Promise<{ companyId: string; depositId: string }> {
  const c = await admin.createCompany({ taxRegime: 'SIMPLE' });
  const key = (await admin.issueKey(c.id, 'WRITE')).key as string;
  const created = await api.post('/deposits/pse', {
    token: key,
    body: {
      amountCents: 80_000,
      ...PSE_PAYER,
    },
  });
  expect(created.status).toBe(201);
  const depositId = created.body.id as string;
  await sql(stack.db.url, `update pse_deposit.deposits set expires_at = now() - interval '1 hour' where id = $1`, [depositId]);
  const raw = JSON.stringify({
    eventId: `evt-${randomUUID()}`,
    depositId,
    providerTransferId: `pse-${randomUUID().slice(0, 8)}`,
    status: 'PAID',
    paidAt: new Date().toISOString(),
    occurredAt: new Date().toISOString(),
  });
  const res = await fetch(`${stack.gw.url}/webhooks/pse`, {
    method: 'POST',
    body: raw,
    headers: { 'content-type': 'application/json', 'x-provider-signature': signPayload('dev-rail-callback-secret', raw, Math.floor(Date.now() / 1000)) },
  });
  expect(res.status).toBe(200);
  return { companyId: c.id, depositId };
}

describe('money exceptions of both services', () => {
  it('lists transfer and PSE exceptions merged newest first, pages across both, and resolves each at its owner', async () => {
    const t1 = await contradiction();
    const p1 = await lateDeposit();
    const t2 = await contradiction();
    const p2 = await lateDeposit();
    const all = await api.get('/admin/exceptions?status=OPEN&limit=100', { token });
    const ours = all.body.items.filter((e: { resourceId: string }) => [t1.transferId, p1.depositId, t2.transferId, p2.depositId].includes(e.resourceId));
    expect(ours.map((e: { resourceId: string }) => e.resourceId)).toEqual([p2.depositId, t2.transferId, p1.depositId, t1.transferId]);
    expect(ours.find((e: { resourceId: string }) => e.resourceId === p1.depositId)).toMatchObject({
      kind: 'PAID_AFTER_EXPIRY',
      rail: 'PSE',
      status: 'OPEN',
      companyId: p1.companyId,
    });
    for (const e of all.body.items) MoneyExceptionSchema.parse(e);
    // Page by one through everything: the same items, in the same order, none twice.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Reply = await api.get(`/admin/exceptions?status=OPEN&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((e: { id: string }) => e.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.body.items.map((e: { id: string }) => e.id));
    // Resolved at its owner, whichever service that is.
    const pse = ours.find((e: { resourceId: string }) => e.resourceId === p2.depositId);
    const r = await api.post(`/admin/exceptions/${pse.id}/resolve`, {
      token,
      body: { action: 'dismiss', note: 'El pagador recibió la devolución del proveedor.' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: pse.id, status: 'RESOLVED', action: 'dismiss', rail: 'PSE' });
  });
});

describe('POST /admin/exceptions/{id}/resolve', () => {
  it('write_off posts the correcting entry once (operational losses → rail clearing) and resolves it; a second resolve is EXCEPTION_NOT_OPEN', async () => {
    const c = await contradiction();
    const list = await api.get('/admin/exceptions?status=OPEN', { token });
    const exc = list.body.items.find((e: { resourceId: string }) => e.resourceId === c.transferId);
    const lossesBefore = await losses();
    const r = await api.post(`/admin/exceptions/${exc.id}/resolve`, { token, body: { action: 'write_off', note: 'El riel confirmó el pago; lo asumimos.' } });
    expect(r.status).toBe(200);
    expect(MoneyExceptionSchema.parse(r.body)).toMatchObject({
      id: exc.id,
      status: 'RESOLVED',
      action: 'write_off',
      resolvedBy: 'admin',
      note: 'El riel confirmó el pago; lo asumimos.',
    });
    expect(r.body.resolvedAt).toEqual(expect.any(String));
    expect(await losses()).toBe(lossesBefore - 250_000n);
    const posted = await sql(stack.db.url, `select count(*)::int as n from ledger.postings where idempotency_key = $1 and kind = 'correction'`, [
      `exception:${exc.id}:write_off`,
    ]);
    expect(posted[0].n).toBe(1);
    expectError(await api.post(`/admin/exceptions/${exc.id}/resolve`, { token, body: { action: 'write_off', note: 'otra vez' } }), 409, 'EXCEPTION_NOT_OPEN');
    expectError(await api.post(`/admin/exceptions/${exc.id}/resolve`, { token, body: { action: 'dismiss', note: 'otra vez' } }), 409, 'EXCEPTION_NOT_OPEN');
    expect(await losses()).toBe(lossesBefore - 250_000n);
    expect((await api.get(`/admin/exceptions?status=RESOLVED`, { token })).body.items.map((e: { id: string }) => e.id)).toContain(exc.id);
  });

  it('two operators resolving at once: one action wins, the money moves at most once', async () => {
    const c = await contradiction();
    const exc = (await api.get('/admin/exceptions?status=OPEN', { token })).body.items.find((e: { resourceId: string }) => e.resourceId === c.transferId);
    const before = await losses();
    const [x, y] = await Promise.all([
      api.post(`/admin/exceptions/${exc.id}/resolve`, { token, body: { action: 'write_off', note: 'uno' } }),
      api.post(`/admin/exceptions/${exc.id}/resolve`, { token, body: { action: 'dismiss', note: 'dos' } }),
    ]);
    expect([x.status, y.status].sort()).toEqual([200, 409]);
    const winner = x.status === 200 ? x.body : y.body;
    expect(await losses()).toBe(winner.action === 'write_off' ? before - 250_000n : before);
  });

  it('bad input and unknown ids', async () => {
    const c = await contradiction();
    const exc = (await api.get('/admin/exceptions?status=OPEN', { token })).body.items.find((e: { resourceId: string }) => e.resourceId === c.transferId);
    expectError(await api.post(`/admin/exceptions/${exc.id}/resolve`, { token, body: { action: 'refund', note: 'x' } }), 400, 'INVALID_REQUEST');
    expectError(await api.post(`/admin/exceptions/${exc.id}/resolve`, { token, body: { action: 'dismiss' } }), 400, 'INVALID_REQUEST');
    expectError(await api.post(`/admin/exceptions/${exc.id}/resolve`, { token, body: { action: 'dismiss', note: 'x'.repeat(501) } }), 400, 'INVALID_REQUEST');
    expectError(await api.post(`/admin/exceptions/${exc.id}/resolve`, { token, body: { action: 'dismiss', note: 'x', extra: 1 } }), 400, 'INVALID_REQUEST');
    const malformed = await api.post(`/admin/exceptions/${exc.id}/resolve`, {
      token,
      raw: '{"action": "dismiss",',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expectError(
      await api.post(`/admin/exceptions/exc_${'0'.repeat(32)}/resolve`, { token, body: { action: 'dismiss', note: 'x' } }),
      404,
      'EXCEPTION_NOT_FOUND',
    );
    expectError(await api.post('/admin/exceptions/not-an-id/resolve', { token, body: { action: 'dismiss', note: 'x' } }), 404, 'EXCEPTION_NOT_FOUND');
    expect((await api.post(`/admin/exceptions/${exc.id}/resolve`, { body: { action: 'dismiss', note: 'x' } })).status).toBe(401);
    // Still open after all of that.
    const still = (await api.get('/admin/exceptions?status=OPEN', { token })).body.items.map((e: { id: string }) => e.id);
    expect(still).toContain(exc.id);
  });
});

async function losses(): Promise<bigint> {
  const [r] = await sql(stack.db.url, `select coalesce(sum(amount), 0)::text as s from ledger.entries where account = 'operational_losses'`);
  return BigInt(r.s);
}
