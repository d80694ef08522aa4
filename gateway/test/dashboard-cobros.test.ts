import { ERRORS } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { CobroPageSchema, CobroSchema, UnmatchedPageSchema } from '../src/api/cobros/schemas.js';
import { adminOf, client, expectNoInternals, type Client, type Reply } from './support/http.js';
import { totpCode } from './support/operators.js';
import { startStack, type Stack } from './support/stack.js';

/**
 * The dashboard's cobro routes (docs/cobros.md) through a real gateway against the real pse-deposit,
 * collect-key and sandbox: a company's user reads its cobros, their QR and the payments that matched
 * none, and a signer attaches such a payment with a TOTP code. The role, the lookups before the code
 * (a refused attachment spends no code), the code, and another company's cobro reading as unknown.
 */
let stack: Stack;
let api: Client;
const PASSWORD = 'Clave-segura-2026!';
let seq = 0;

interface Company {
  id: string;
  writeKey: string;
}
interface User {
  email: string;
  totpSecret: string;
  token: string;
}

let co: Company;
let other: Company;
let operator: User;
let second: User;
let viewer: User;
let stranger: User;
let cobro: any;
let payment: any;

async function company(name: string): Promise<Company> {
  const admin = adminOf(api, stack.gw.adminToken);
  const c = await admin.createCompany({ name });
  expect((await admin.patch(c.id, { rateLimitMultiplier: 1000 })).status).toBe(200);
  return { id: c.id, writeKey: (await admin.issueKey(c.id, 'WRITE')).key };
}

async function newUser(c: Company, role: 'ADMIN' | 'OPERATOR' | 'VIEWER'): Promise<User> {
  const email = `cobros${++seq}.${c.id.slice(0, 6)}@panel.co`;
  const u = await api.post(`/admin/companies/${c.id}/users`, { token: stack.gw.adminToken, body: { email, password: PASSWORD, role } });
  expect(u.status).toBe(201);
  const s = await api.post('/auth/login', { body: { email, password: PASSWORD } });
  expect(s.status).toBe(200);
  return { email, totpSecret: u.body.totpSecret, token: s.body.token };
}

/** Pays a Bre-B key as the payer's bank would (the sandbox network). */
async function pay(keyValue: string, amountCents: number) {
  const res = await fetch(`${stack.sandboxUrl}/sandbox/breb/incoming`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ keyValue, amountCents, payerName: 'Pagador Sin Cobro', payerDocument: 'CC 11111111', payerBank: 'Nequi' }),
  });
  expect(res.status).toBe(202);
}

function expectError(r: Reply, status: number, code: keyof typeof ERRORS) {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error: code });
  expectNoInternals(r.text);
}

const attach = (u: User, cobroId: string, body: Record<string, unknown>) => api.post(`/dashboard/cobros/${cobroId}/payments`, { token: u.token, body });
const unmatchedIds = async (u: User) =>
  ((await api.get('/dashboard/cobros/unmatched-payments', { token: u.token })).body.items as any[]).map((p) => p.depositId);

beforeAll(async () => {
  // GRPC_DEADLINE_MS: this stack runs every service inside one Jest VM, where pngjs encodes the QR's
  // 512×512 PNG in ~1.7 s (26 ms in plain Node: measured, Jest's VM realm); beside the other lane of a
  // full run that passed the gateway's 5 s deadline (its log named DEADLINE_EXCEEDED on every try).
  // The deadline measures Jest here, not the product: the e2e stack of real processes keeps its own.
  stack = await startStack(
    { RATE_LIMIT_FINANCIAL: '100000', RATE_LIMIT_READS: '100000', RATE_LIMIT_AUTHENTICATION: '100000', GRPC_DEADLINE_MS: '30000' },
    { inboundCallbacks: true },
  );
  api = client(stack.gw.url);
  co = await company('Cobros del Panel S.A.S.');
  other = await company('Otra Empresa S.A.S.');
  operator = await newUser(co, 'OPERATOR');
  second = await newUser(co, 'ADMIN');
  viewer = await newUser(co, 'VIEWER');
  stranger = await newUser(other, 'OPERATOR');

  // An open cobro, and a payment to a customer's key that matches nothing (another payer, no cobro named): NO_MATCH.
  const key = await api.post('/breb/collect-keys', { token: co.writeKey, body: { externalId: 'cliente-panel', name: 'Tienda del Panel' } });
  expect(key.status).toBe(201);
  const c = await api.post('/cobros', { token: co.writeKey, body: { reference: 'FAC-PANEL-1', amountCents: 8_000_00, methods: ['BREB_QR', 'BREB_KEY'] } });
  expect(c.status).toBe(201);
  cobro = c.body;
  await pay(key.body.key.value, 8_000_00);
  payment = await eventually(
    async () => {
      const r = await api.get('/dashboard/cobros/unmatched-payments', { token: viewer.token });
      return (r.body.items as any[]).find((u) => u.amountCents === 8_000_00) ?? null;
    },
    30_000,
    100,
  );
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

describe('reading cobros in the dashboard', () => {
  it("lists the company's cobros (any role), filtered by status and reference, with the QR at the dashboard's route", async () => {
    const r = await api.get('/dashboard/cobros', { token: viewer.token });
    expect(r.status).toBe(200);
    expect(CobroPageSchema.parse(r.body)).toEqual(r.body);
    expect(r.body.items.map((c: any) => c.id)).toEqual([cobro.id]);
    expect(r.body.items[0]).toMatchObject({
      reference: 'FAC-PANEL-1',
      status: 'OPEN',
      amountCents: 8_000_00,
      breb: { keyValue: cobro.breb.keyValue, qrPayload: cobro.breb.qrPayload, qrPngUrl: `/dashboard/cobros/${cobro.id}/qr.png` },
    });
    expect((await api.get('/dashboard/cobros?status=PAID', { token: viewer.token })).body.items).toEqual([]);
    expect((await api.get('/dashboard/cobros?reference=FAC-PANEL-1&status=OPEN', { token: viewer.token })).body.items).toHaveLength(1);
    expect((await api.get('/dashboard/cobros', { token: stranger.token })).body).toEqual({ items: [], nextCursor: null });
  });

  it("shows one cobro and its QR; another company's cobro and a malformed id read as COBRO_NOT_FOUND", async () => {
    const r = await api.get(`/dashboard/cobros/${cobro.id}`, { token: viewer.token });
    expect(r.status).toBe(200);
    expect(CobroSchema.parse(r.body)).toEqual(r.body);
    expect(r.body).toMatchObject({ id: cobro.id, payments: [], transactionId: cobro.transactionId });

    const png = await fetch(`${stack.gw.url}/dashboard/cobros/${cobro.id}/qr.png`, { headers: { authorization: `Bearer ${viewer.token}` } });
    expect([png.status, png.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect(
      Buffer.from(await png.arrayBuffer())
        .subarray(1, 4)
        .toString('latin1'),
    ).toBe('PNG');

    expectError(await api.get(`/dashboard/cobros/${cobro.id}`, { token: stranger.token }), 404, 'COBRO_NOT_FOUND');
    expectError(await api.get(`/dashboard/cobros/${cobro.id}/qr.png`, { token: stranger.token }), 404, 'COBRO_NOT_FOUND');
    expectError(await api.get('/dashboard/cobros/cob_nope', { token: viewer.token }), 404, 'COBRO_NOT_FOUND');
  });

  it('lists the payments that matched no cobro; another company sees none of them', async () => {
    const r = await api.get('/dashboard/cobros/unmatched-payments', { token: viewer.token });
    expect(r.status).toBe(200);
    expect(UnmatchedPageSchema.parse(r.body)).toEqual(r.body);
    expect(payment).toMatchObject({
      reason: 'NO_MATCH',
      cobroId: null,
      source: 'BREB',
      payerDocument: 'CC 11111111',
      depositId: expect.stringMatching(/^dep_/),
    });
    expect((await api.get('/dashboard/cobros/unmatched-payments', { token: stranger.token })).body).toEqual({ items: [], nextCursor: null });
  });

  it('needs a session: none is 401, an API key 403', async () => {
    expectError(await api.get('/dashboard/cobros'), 401, 'AUTH_REQUIRED');
    expectError(await api.get('/dashboard/cobros', { token: co.writeKey }), 403, 'API_KEY_AUTH_NOT_ALLOWED');
  });
});

describe('attaching an unmatched payment with a TOTP code', () => {
  it('refuses bad input with 400 INVALID_REQUEST', async () => {
    const ok = { depositId: payment.depositId, totpCode: '123456' };
    for (const bad of [
      {},
      { depositId: payment.depositId },
      { ...ok, totpCode: '12345' },
      { ...ok, totpCode: 123456 },
      { ...ok, depositId: 'nope' },
      { ...ok, extra: 1 },
    ]) {
      const r = await attach(operator, cobro.id, bad);
      expect({ bad, status: r.status, error: r.body.error }).toEqual({ bad, status: 400, error: 'INVALID_REQUEST' });
    }
  });

  it("refuses a VIEWER (INSUFFICIENT_ROLE), a wrong code (INVALID_TOTP_CODE), and another company's signer (COBRO_NOT_FOUND): the payment stays unmatched", async () => {
    expectError(await attach(viewer, cobro.id, { depositId: payment.depositId, totpCode: totpCode(viewer.totpSecret) }), 403, 'INSUFFICIENT_ROLE');
    const wrong = String((Number(totpCode(second.totpSecret)) + 500_000) % 1_000_000).padStart(6, '0');
    expectError(await attach(second, cobro.id, { depositId: payment.depositId, totpCode: wrong }), 401, 'INVALID_TOTP_CODE');
    expectError(await attach(stranger, cobro.id, { depositId: payment.depositId, totpCode: totpCode(stranger.totpSecret) }), 404, 'COBRO_NOT_FOUND');
    expect(await unmatchedIds(viewer)).toContain(payment.depositId);
    expect((await api.get(`/dashboard/cobros/${cobro.id}`, { token: viewer.token })).body.payments).toEqual([]);
  });

  it('checks the cobro and the payment before the code: a refused attachment spends none, and the same code then attaches (MANUAL)', async () => {
    const code = totpCode(operator.totpSecret);
    expectError(await attach(operator, cobro.id, { depositId: 'dep_000000000000000000000000', totpCode: code }), 404, 'DEPOSIT_NOT_FOUND');
    const cancelled = (await api.post('/cobros', { token: co.writeKey, body: { reference: 'FAC-PANEL-X', amountCents: 1_000_00, methods: ['BREB_KEY'] } }))
      .body;
    expect((await api.post(`/cobros/${cancelled.id}/cancel`, { token: co.writeKey, body: {} })).status).toBe(200);
    const closed = await attach(operator, cancelled.id, { depositId: payment.depositId, totpCode: code });
    expectError(closed, 409, 'INVALID_STATE_TRANSITION');
    expect(closed.body.message).toBe('El cobro está cancelado: solo se le concilia un pago mientras está abierto o pagado.');

    const r = await attach(operator, cobro.id, { depositId: payment.depositId, totpCode: code });
    expect(r.status).toBe(200);
    expect(CobroSchema.parse(r.body)).toEqual(r.body);
    expect(r.body).toMatchObject({
      status: 'PAID',
      paidAmountCents: 8_000_00,
      payments: [{ depositId: payment.depositId, matchedBy: 'MANUAL', disposition: 'COUNTED', payerDocument: 'CC 11111111' }],
    });
    expect(await unmatchedIds(viewer)).not.toContain(payment.depositId);
    // The code was spent: the same one again is refused.
    expectError(await attach(operator, cobro.id, { depositId: payment.depositId, totpCode: code }), 401, 'INVALID_TOTP_CODE');
  });

  it('a payment already matched to one cobro cannot be attached to another (409), with a fresh code', async () => {
    const elsewhere = (await api.post('/cobros', { token: co.writeKey, body: { reference: 'FAC-PANEL-2', amountCents: 8_000_00, methods: ['BREB_KEY'] } }))
      .body;
    const r = await attach(second, elsewhere.id, { depositId: payment.depositId, totpCode: totpCode(second.totpSecret, 1) });
    expectError(r, 409, 'INVALID_STATE_TRANSITION');
    expect((await api.get(`/dashboard/cobros/${elsewhere.id}`, { token: viewer.token })).body.payments).toEqual([]);
  });
});
