import { randomUUID } from 'node:crypto';
import { ERRORS } from '@wallet/platform';
import { createTestDatabase, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { startLedger } from '@wallet/ledger/testing';
import { BatchItemPageSchema, BatchPageSchema, BatchSchema } from '../src/api/transfers/batches/schemas.js';
import { startGateway, type StartedGateway } from '../src/testing.js';
import { adminOf, client, expectNoInternals, type Client, type Reply } from './support/http.js';
import { totpCode } from './support/operators.js';
import { startTransferBatchesStandIn, type TransferBatchesStandIn } from './support/transfer-batches-stand-in.js';

/**
 * The dashboard's batch routes (docs/batches.md, "Multi-signature") through a real gateway (HTTP,
 * sessions and TOTP on Postgres, Redis) against the stand-in of the transfer service's batch RPCs:
 * the session and role rules, the order of the checks (precheck → code → signature), what reaches
 * the service, and the batch JSON with its approval.
 */
let db: TestDatabase;
let ledger: Awaited<ReturnType<typeof startLedger>>;
let transfer: TransferBatchesStandIn;
let gw: StartedGateway;
let api: Client;
let admin: ReturnType<typeof adminOf>;
let companyId: string;
let writeKey: string;
let otherWriteKey: string;
let otherCompanyId: string;
const PASSWORD = 'Clave-segura-2026!';
let seq = 0;

interface User {
  id: string;
  email: string;
  totpSecret: string;
  token: string;
}

async function newUser(company: string, role: 'ADMIN' | 'OPERATOR' | 'VIEWER'): Promise<User> {
  const email = `firmante${++seq}.${company.slice(0, 6)}@lotes.co`;
  const u = await api.post(`/admin/companies/${company}/users`, { token: gw.adminToken, body: { email, password: PASSWORD, role } });
  expect(u.status).toBe(201);
  const s = await api.post('/auth/login', { body: { email, password: PASSWORD } });
  expect(s.status).toBe(200);
  return { id: u.body.id, email, totpSecret: u.body.totpSecret, token: s.body.token };
}

beforeAll(async () => {
  db = await createTestDatabase('gw');
  const namespace = testNamespace();
  ledger = await startLedger({ databaseUrl: db.url, natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', namespace, port: 0, logLevel: 'warn' });
  transfer = await startTransferBatchesStandIn();
  gw = await startGateway({
    databaseUrl: db.url,
    ledgerAddress: ledger.address,
    transferAddress: transfer.address,
    namespace,
    env: { LOG_LEVEL: 'warn', RATE_LIMIT_FINANCIAL: '100000', RATE_LIMIT_READS: '100000', RATE_LIMIT_AUTHENTICATION: '100000' },
  });
  api = client(gw.url);
  admin = adminOf(api, gw.adminToken);
  companyId = (await admin.createCompany({ multiSigThreshold: 2 })).id;
  writeKey = (await admin.issueKey(companyId, 'WRITE')).key;
  otherCompanyId = (await admin.createCompany({ multiSigThreshold: 2 })).id;
  otherWriteKey = (await admin.issueKey(otherCompanyId, 'WRITE')).key;
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await transfer?.stop();
  await ledger?.stop();
  await db?.drop();
});

function expectError(r: Reply, status: number, code: keyof typeof ERRORS) {
  expect({ status: r.status, error: r.body?.error, message: r.body?.message }).toEqual({ status, error: code, message: ERRORS[code].message });
  expectNoInternals(r.text);
}
const breb = (amount: number, reference: string) => ({
  amount,
  destination: { brebKey: { type: 'PHONE', value: '3001234567' } },
  targetName: 'Ana Pérez',
  targetDocument: '1012345678',
  reference,
});
const ach = (amount: number, reference: string) => ({
  amount,
  reference,
  destination: {
    bankAccount: {
      bankId: 1,
      accountTypeId: 20,
      accountNumber: '12345678901',
      documentTypeId: 1,
      documentNumber: '1020304050',
      holderFirstName: 'Ana',
      holderLastName: 'Pérez',
    },
  },
});
/** A validated batch on both rails, executed by a multi-signature company: 202 AWAITING_APPROVAL. */
async function awaitingBatch(key = writeKey) {
  const c = await api.post('/transfers/batches', {
    token: key,
    body: { reference: `lote-${randomUUID()}`, items: [breb(10_000, 'a'), ach(25_000, 'b'), breb(5_000, 'c')] },
  });
  expect(c.status).toBe(201);
  const e = await api.post(`/transfers/batches/${c.body.id}/execute`, { token: key });
  expect(e.status).toBe(202);
  return e.body;
}
const sign = (u: User, id: string, code = totpCode(u.totpSecret)) => api.post(`/dashboard/batches/${id}/sign`, { token: u.token, body: { totpCode: code } });
const reject = (u: User, id: string, body: Record<string, unknown>) => api.post(`/dashboard/batches/${id}/reject`, { token: u.token, body });
const decisionsSince = (n: number) => transfer.decisions.slice(n).map((d) => [d.rpc, 'precheck' in d.request ? d.request.precheck : null]);

describe('POST /transfers/batches/{id}/execute (multi-signature)', () => {
  it('202 AWAITING_APPROVAL with the one approval, PENDING with no signature; executing again is 202 with the same batch', async () => {
    const b = await awaitingBatch();
    expect(BatchSchema.parse(b)).toEqual(b);
    expect(b).toMatchObject({
      status: 'AWAITING_APPROVAL',
      threshold: 2,
      approvalId: expect.stringMatching(/^appr_/),
      approval: {
        approvalId: b.approvalId,
        threshold: 2,
        status: 'PENDING',
        signatures: [],
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
        decidedAt: null,
        rejectReason: null,
        rejectedBy: null,
      },
    });
    const again = await api.post(`/transfers/batches/${b.id}/execute`, { token: writeKey });
    expect(again.status).toBe(202);
    expect(again.body.approval.approvalId).toBe(b.approvalId);
  });

  it('a company without multi-signature: approval null', async () => {
    const co = await admin.createCompany();
    const key = (await admin.issueKey(co.id, 'WRITE')).key;
    const c = await api.post('/transfers/batches', { token: key, body: { items: [breb(10_000, 'a')] } });
    expect(c.body).toMatchObject({ threshold: 0, approval: null, approvalId: null });
    const e = await api.post(`/transfers/batches/${c.body.id}/execute`, { token: key });
    expect(e.status).toBe(202);
    expect(e.body).toMatchObject({ status: 'EXECUTING', approval: null });
  });
});

describe('GET /dashboard/batches, /{batchId}, /{batchId}/items', () => {
  it("lists the session's company batches by state, reads one and pages its items", async () => {
    const b = await awaitingBatch();
    await awaitingBatch(otherWriteKey);
    const viewer = await newUser(companyId, 'VIEWER');
    const list = await api.get('/dashboard/batches?status=AWAITING_APPROVAL&limit=100', { token: viewer.token });
    expect(list.status).toBe(200);
    expect(BatchPageSchema.parse(list.body)).toEqual(list.body);
    expect(list.body.items.map((x: { id: string }) => x.id)).toContain(b.id);
    expect(list.body.items.every((x: { status: string }) => x.status === 'AWAITING_APPROVAL')).toBe(true);
    // only this company's
    for (const x of list.body.items) expect((await api.get(`/dashboard/batches/${x.id}`, { token: viewer.token })).status).toBe(200);

    const page1 = await api.get('/dashboard/batches?limit=1', { token: viewer.token });
    expect(page1.body.items).toHaveLength(1);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await api.get(`/dashboard/batches?limit=1&cursor=${encodeURIComponent(page1.body.nextCursor)}`, { token: viewer.token });
    expect(page2.body.items[0].id).not.toBe(page1.body.items[0].id);

    const one = await api.get(`/dashboard/batches/${b.id}`, { token: viewer.token });
    expect(one.status).toBe(200);
    expect(BatchSchema.parse(one.body)).toEqual(one.body);
    expect(one.body).toMatchObject({
      id: b.id,
      itemCount: 3,
      totals: [
        { rail: 'BREB', count: 2, amount: 15_000 },
        { rail: 'ACH', count: 1, amount: 25_000 },
      ],
    });

    const items = await api.get(`/dashboard/batches/${b.id}/items?limit=2`, { token: viewer.token });
    expect(items.status).toBe(200);
    expect(BatchItemPageSchema.parse(items.body)).toEqual(items.body);
    expect(items.body.items.map((i: { item: number; status: string; amount: number }) => [i.item, i.status, i.amount])).toEqual([
      [1, 'AWAITING_APPROVAL', 10_000],
      [2, 'AWAITING_APPROVAL', 25_000],
    ]);
    const rest = await api.get(`/dashboard/batches/${b.id}/items?limit=2&cursor=${items.body.nextCursor}`, { token: viewer.token });
    expect(rest.body).toMatchObject({ items: [{ item: 3, reference: 'c' }], nextCursor: null });
    const filtered = await api.get(`/dashboard/batches/${b.id}/items?status=COMPLETED`, { token: viewer.token });
    expect(filtered.body).toEqual({ items: [], nextCursor: null });
  });

  it("another company's batch and a malformed id read 404 BATCH_NOT_FOUND", async () => {
    const theirs = await awaitingBatch(otherWriteKey);
    const u = await newUser(companyId, 'OPERATOR');
    for (const id of [theirs.id, randomUUID(), 'no-es-un-id', '123']) {
      expectError(await api.get(`/dashboard/batches/${id}`, { token: u.token }), 404, 'BATCH_NOT_FOUND');
      expectError(await api.get(`/dashboard/batches/${id}/items`, { token: u.token }), 404, 'BATCH_NOT_FOUND');
    }
    const before = transfer.decisions.length;
    expectError(await sign(u, theirs.id), 404, 'BATCH_NOT_FOUND');
    expectError(await reject(u, 'no-es-un-id', { totpCode: totpCode(u.totpSecret, 1) }), 404, 'BATCH_NOT_FOUND');
    expect(transfer.batch(theirs.id)!.approval!.signatures).toEqual([]);
    // the malformed id never reached the service; the other company's was refused by it at the precheck
    expect(decisionsSince(before)).toEqual([['sign', true]]);
  });

  it('bad queries → 400 INVALID_REQUEST', async () => {
    const u = await newUser(companyId, 'VIEWER');
    for (const q of ['status=NOPE', 'limit=0', 'limit=101', 'limit=x', 'extra=1', 'cursor=']) {
      const r = await api.get(`/dashboard/batches?${q}`, { token: u.token });
      expect({ q, status: r.status, error: r.body.error }).toEqual({ q, status: 400, error: 'INVALID_REQUEST' });
    }
    const b = await awaitingBatch();
    for (const q of ['status=NOPE', 'limit=1001']) {
      const r = await api.get(`/dashboard/batches/${b.id}/items?${q}`, { token: u.token });
      expect({ q, status: r.status, error: r.body.error }).toEqual({ q, status: 400, error: 'INVALID_REQUEST' });
    }
  });
});

describe('POST /dashboard/batches/{batchId}/sign and /reject', () => {
  it('two signers: 1 of 2, then quorum dispatches every item; the signer is the session user; a second signature of the same user → 409 ALREADY_SIGNED (no code spent)', async () => {
    const b = await awaitingBatch();
    const [ana, luis] = [await newUser(companyId, 'OPERATOR'), await newUser(companyId, 'ADMIN')];
    const before = transfer.decisions.length;
    const first = await sign(ana, b.id);
    expect(first.status).toBe(200);
    expect(BatchSchema.parse(first.body)).toEqual(first.body);
    expect(first.body).toMatchObject({
      status: 'AWAITING_APPROVAL',
      approval: { status: 'PENDING', signatures: [{ userId: ana.id, email: ana.email, role: 'OPERATOR', signedAt: expect.any(String) }] },
    });
    expect(decisionsSince(before)).toEqual([
      ['sign', true],
      ['sign', false],
    ]);
    expect(transfer.decisions.slice(before).map((d) => d.userId)).toEqual([ana.id, ana.id]);

    // ALREADY_SIGNED before the code: the same (unused) next code still works afterwards for something else
    const next = totpCode(ana.totpSecret, 1);
    expectError(await sign(ana, b.id, next), 409, 'ALREADY_SIGNED');

    const second = await sign(luis, b.id);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      status: 'EXECUTING',
      approval: { status: 'APPROVED', decidedAt: expect.any(String), signatures: [{ userId: ana.id }, { userId: luis.id, role: 'ADMIN' }] },
    });
    expect(second.body.byStatus).toEqual([{ status: 'PENDING', count: 3, amount: 40_000 }]);
    expectError(await sign(ana, b.id, next), 409, 'APPROVAL_NOT_PENDING');
  });

  it('a wrong TOTP code → 401 INVALID_TOTP_CODE and nothing is signed', async () => {
    const b = await awaitingBatch();
    const u = await newUser(companyId, 'OPERATOR');
    const right = new Set([-1, 0, 1].map((s) => totpCode(u.totpSecret, s)));
    const wrong = ['000000', '123456', '999999'].find((c) => !right.has(c))!;
    const before = transfer.decisions.length;
    expectError(await sign(u, b.id, wrong), 401, 'INVALID_TOTP_CODE');
    expect(decisionsSince(before)).toEqual([['sign', true]]);
    expectError(await reject(u, b.id, { totpCode: wrong }), 401, 'INVALID_TOTP_CODE');
    expect(transfer.batch(b.id)!.approval).toMatchObject({ status: 'PENDING', signatures: [] });
  });

  it('reject with a reason: the batch FAILED, every item FAILED, the approval REJECTED by the user', async () => {
    const b = await awaitingBatch();
    const marta = await newUser(companyId, 'OPERATOR');
    const r = await reject(marta, b.id, { totpCode: totpCode(marta.totpSecret), reason: 'Lote <duplicado>' });
    expect(r.status).toBe(200);
    expect(BatchSchema.parse(r.body)).toEqual(r.body);
    expect(r.body).toMatchObject({
      status: 'FAILED',
      approval: { status: 'REJECTED', rejectReason: 'Lote <duplicado>', rejectedBy: marta.email, decidedAt: expect.any(String) },
      byStatus: [{ status: 'FAILED', count: 3, amount: 40_000 }],
    });
    expect(transfer.decisions.at(-1)).toMatchObject({ rpc: 'reject', request: { batchId: b.id, reason: 'Lote <duplicado>' }, userId: marta.id });
    expectError(await reject(marta, b.id, { totpCode: totpCode(marta.totpSecret, 1) }), 409, 'APPROVAL_NOT_PENDING');
  });

  it('a batch not awaiting approval → 409 APPROVAL_NOT_PENDING; an expired approval → 422 APPROVAL_EXPIRED', async () => {
    const u = await newUser(companyId, 'OPERATOR');
    const validated = await api.post('/transfers/batches', { token: writeKey, body: { items: [breb(10_000, 'a')] } });
    expectError(await sign(u, validated.body.id), 409, 'APPROVAL_NOT_PENDING');
    const b = await awaitingBatch();
    transfer.batch(b.id)!.approval!.expiresAt = new Date(Date.now() - 1000);
    expectError(await sign(u, b.id), 422, 'APPROVAL_EXPIRED');
  });

  it('a VIEWER → 403 INSUFFICIENT_ROLE before anything reaches the service', async () => {
    const b = await awaitingBatch();
    const v = await newUser(companyId, 'VIEWER');
    const before = transfer.decisions.length;
    expectError(await sign(v, b.id), 403, 'INSUFFICIENT_ROLE');
    expectError(await reject(v, b.id, { totpCode: totpCode(v.totpSecret, 1) }), 403, 'INSUFFICIENT_ROLE');
    expect(transfer.decisions.length).toBe(before);
  });

  it('bad bodies → 400 INVALID_REQUEST (fields named); malformed JSON → 400; no JSON → 415', async () => {
    const b = await awaitingBatch();
    const u = await newUser(companyId, 'OPERATOR');
    for (const body of [{}, { totpCode: '12345' }, { totpCode: 123456 }, { totpCode: '123456', extra: 1 }]) {
      const r = await api.post(`/dashboard/batches/${b.id}/sign`, { token: u.token, body });
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error: 'INVALID_REQUEST' });
      expect(r.body.details.fields).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.any(String) })]));
    }
    for (const body of [
      { totpCode: '123456', reason: '' },
      { totpCode: '123456', reason: 'x'.repeat(501) },
    ]) {
      const r = await reject(u, b.id, body);
      expect({ status: r.status, error: r.body.error, path: r.body.details?.fields?.[0]?.path }).toEqual({
        status: 400,
        error: 'INVALID_REQUEST',
        path: 'reason',
      });
    }
    for (const path of ['sign', 'reject']) {
      const r = await api.post(`/dashboard/batches/${b.id}/${path}`, { token: u.token, raw: '{"totpCode": ', headers: { 'content-type': 'application/json' } });
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error: 'INVALID_REQUEST' });
      const t = await api.post(`/dashboard/batches/${b.id}/${path}`, {
        token: u.token,
        raw: 'totpCode=123456',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(t.status).toBe(415);
    }
    expect(transfer.batch(b.id)!.approval!.signatures).toEqual([]);
  });

  it('no session → 401 AUTH_REQUIRED; a client API key → 403 API_KEY_AUTH_NOT_ALLOWED; a logged-out session → 401', async () => {
    const b = await awaitingBatch();
    const calls = [
      ['GET', '/dashboard/batches'],
      ['GET', `/dashboard/batches/${b.id}`],
      ['GET', `/dashboard/batches/${b.id}/items`],
      ['POST', `/dashboard/batches/${b.id}/sign`],
      ['POST', `/dashboard/batches/${b.id}/reject`],
    ] as const;
    const u = await newUser(companyId, 'OPERATOR');
    expect((await api.post('/auth/logout', { token: u.token })).status).toBe(204);
    for (const [method, path] of calls) {
      const body = method === 'POST' ? { totpCode: '123456' } : undefined;
      expectError(await api.call(method, path, { body }), 401, 'AUTH_REQUIRED');
      expectError(await api.call(method, path, { token: writeKey, body }), 403, 'API_KEY_AUTH_NOT_ALLOWED');
      const lost = await api.call(method, path, { token: u.token, body });
      expect(lost.status).toBe(401);
    }
    expect(transfer.batch(b.id)!.approval!.signatures).toEqual([]);
  });
});
