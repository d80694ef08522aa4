import pg from 'pg';
import { ERRORS } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { DepositReturnListSchema, DepositReturnSchema } from '../src/api/deposits/schemas.js';
import { adminOf, client, expectNoInternals, type Client, type Reply } from './support/http.js';
import { totpCode } from './support/operators.js';
import { startStack, type Stack } from './support/stack.js';

/**
 * Returns (devoluciones) from the dashboard (docs/returns.md "From the dashboard") through a real
 * gateway against the real collect-key, pse-deposit, ledger and sandbox network: a signer of the
 * company gives a credited Bre-B payment back to its payer, in part, with a TOTP code, through the
 * API's own gRPC path. The role, bad input, the lookups before the code (a refused return spends no
 * code), the code, another company's payment reading as unknown, and the user recorded as the asker.
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
  userId: string;
  totpSecret: string;
  token: string;
}

let co: Company;
let other: Company;
let operator: User;
let admin: User;
let viewer: User;
let stranger: User;
let depositId: string;

const GROSS = 8_000_00;

async function company(name: string): Promise<Company> {
  const a = adminOf(api, stack.gw.adminToken);
  const c = await a.createCompany({ name });
  expect((await a.patch(c.id, { rateLimitMultiplier: 1000 })).status).toBe(200);
  return { id: c.id, writeKey: (await a.issueKey(c.id, 'WRITE')).key };
}

async function newUser(c: Company, role: 'ADMIN' | 'OPERATOR' | 'VIEWER'): Promise<User> {
  const email = `devoluciones${++seq}.${c.id.slice(0, 6)}@panel.co`;
  const u = await api.post(`/admin/companies/${c.id}/users`, { token: stack.gw.adminToken, body: { email, password: PASSWORD, role } });
  expect(u.status).toBe(201);
  const s = await api.post('/auth/login', { body: { email, password: PASSWORD } });
  expect(s.status).toBe(200);
  return { email, userId: u.body.id, totpSecret: u.body.totpSecret, token: s.body.token };
}

/** A 6-digit code valid in none of the steps around now (the server accepts ±1 step). */
function wrongCode(u: User): string {
  const near = new Set([-3, -2, -1, 0, 1, 2, 3].map((s) => totpCode(u.totpSecret, s)));
  for (let n = 0; ; n++) {
    const c = String(n).padStart(6, '0');
    if (!near.has(c)) return c;
  }
}

function expectError(r: Reply, status: number, code: keyof typeof ERRORS) {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error: code });
  expectNoInternals(r.text);
}

const giveBack = (u: User, id: string, body: Record<string, unknown>) => api.post(`/dashboard/deposits/${id}/returns`, { token: u.token, body });
const returnsOf = async (id: string) => (await api.get(`/dashboard/deposits/${id}/returns`, { token: viewer.token })).body.items as any[];

beforeAll(async () => {
  stack = await startStack(
    { RATE_LIMIT_FINANCIAL: '100000', RATE_LIMIT_READS: '100000', RATE_LIMIT_AUTHENTICATION: '100000', GRPC_DEADLINE_MS: '30000' },
    { inboundCallbacks: true },
  );
  api = client(stack.gw.url);
  co = await company('Devoluciones del Panel S.A.S.');
  other = await company('Otra Empresa S.A.S.');
  operator = await newUser(co, 'OPERATOR');
  admin = await newUser(co, 'ADMIN');
  viewer = await newUser(co, 'VIEWER');
  stranger = await newUser(other, 'OPERATOR');

  // A payment to a customer's key, credited to the company's BREB wallet (gross 8,000.00 less the fee).
  const key = await api.post('/breb/collect-keys', { token: co.writeKey, body: { externalId: 'cliente-devolucion', name: 'Tienda del Panel' } });
  expect(key.status).toBe(201);
  const res = await fetch(`${stack.sandboxUrl}/sandbox/breb/incoming`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      keyValue: key.body.key.value,
      amountCents: GROSS,
      payerName: 'Pagador Que Pagó Dos Veces',
      payerDocument: 'CC 22222222',
      payerBank: 'Nequi',
    }),
  });
  expect(res.status).toBe(202);
  depositId = await eventually(
    async () => {
      const r = await api.get('/deposits?rail=BREB', { token: co.writeKey });
      const d = (r.body.deposits ?? r.body.items ?? []).find((x: any) => x.amountCents === String(GROSS) && x.status === 'ASSIGNED');
      return d?.id ?? null;
    },
    30_000,
    100,
  );
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

describe('starting a return from the dashboard', () => {
  it('refuses bad input with 400 INVALID_REQUEST, and a malformed deposit id as DEPOSIT_NOT_FOUND', async () => {
    const ok = { amountCents: 1_000_00, reason: 'OVERPAYMENT', totpCode: '123456' };
    for (const bad of [
      {},
      { totpCode: '123456' },
      { reason: 'OVERPAYMENT' },
      { ...ok, reason: 'BECAUSE' },
      { ...ok, reason: 7 },
      { ...ok, amountCents: '100000' },
      { ...ok, amountCents: 1000.5 },
      { ...ok, amountCents: 0 },
      { ...ok, amountCents: -100 },
      { ...ok, amountCents: 200_000_000_001 },
      { ...ok, amountCents: 1e30 },
      { ...ok, description: 'x'.repeat(141) },
      { ...ok, description: '   ' },
      { ...ok, totpCode: '12345' },
      { ...ok, totpCode: 123456 },
      { ...ok, extra: 1 },
    ]) {
      const r = await giveBack(operator, depositId, bad);
      expect({ bad, status: r.status, error: r.body.error }).toEqual({ bad, status: 400, error: 'INVALID_REQUEST' });
    }
    const malformed = await api.post(`/dashboard/deposits/${depositId}/returns`, {
      token: operator.token,
      raw: '{"reason": "OVERPAYMENT", "totpCode": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'INVALID_REQUEST');
    const huge = await api.post(`/dashboard/deposits/${depositId}/returns`, {
      token: operator.token,
      raw: '{"amountCents": 9007199254740993, "reason": "OVERPAYMENT", "totpCode": "123456"}',
      headers: { 'content-type': 'application/json' },
    });
    expectError(huge, 400, 'INVALID_REQUEST');
    expectError(await giveBack(operator, 'dep_NOPE', ok), 404, 'DEPOSIT_NOT_FOUND');
    expect(await returnsOf(depositId)).toEqual([]);
  });

  it("needs a session of a signer: none 401, an API key 403, a VIEWER 403 INSUFFICIENT_ROLE; another company's signer reads it as DEPOSIT_NOT_FOUND", async () => {
    const body = { amountCents: 1_000_00, reason: 'OVERPAYMENT' };
    expectError(await api.post(`/dashboard/deposits/${depositId}/returns`, { body: { ...body, totpCode: '123456' } }), 401, 'AUTH_REQUIRED');
    expectError(
      await api.post(`/dashboard/deposits/${depositId}/returns`, { token: co.writeKey, body: { ...body, totpCode: '123456' } }),
      403,
      'API_KEY_AUTH_NOT_ALLOWED',
    );
    expectError(await giveBack(viewer, depositId, { ...body, totpCode: totpCode(viewer.totpSecret) }), 403, 'INSUFFICIENT_ROLE');
    expectError(await giveBack(stranger, depositId, { ...body, totpCode: totpCode(stranger.totpSecret) }), 404, 'DEPOSIT_NOT_FOUND');
    expectError(await api.get(`/dashboard/deposits/${depositId}/returns`, { token: stranger.token }), 404, 'DEPOSIT_NOT_FOUND');
    expect(await returnsOf(depositId)).toEqual([]);
  });

  it('refuses a wrong TOTP code with 401 INVALID_TOTP_CODE: nothing is returned', async () => {
    expectError(await giveBack(admin, depositId, { amountCents: 1_000_00, reason: 'OVERPAYMENT', totpCode: wrongCode(admin) }), 401, 'INVALID_TOTP_CODE');
    expect(await returnsOf(depositId)).toEqual([]);
  });

  it('checks the amount before the code (422 RETURN_EXCEEDS_PAYMENT spends none); the same code then returns part of the payment, as the API would', async () => {
    const code = totpCode(operator.totpSecret);
    const over = await giveBack(operator, depositId, { amountCents: GROSS + 1, reason: 'OVERPAYMENT', totpCode: code });
    expectError(over, 422, 'RETURN_EXCEEDS_PAYMENT');
    expect(over.body.details).toEqual({ grossCents: String(GROSS), returnedCents: '0', returnableCents: String(GROSS) });

    const r = await giveBack(operator, depositId, { amountCents: 3_000_00, reason: 'OVERPAYMENT', description: 'Pagó de más en noviembre', totpCode: code });
    expect(r.status).toBe(201);
    expect(DepositReturnSchema.parse(r.body)).toEqual(r.body);
    expect(r.body).toMatchObject({
      id: expect.stringMatching(/^ret_[a-z0-9]{24}$/),
      depositId,
      rail: 'BREB',
      amountCents: '300000',
      reason: 'OVERPAYMENT',
      description: 'Pagó de más en noviembre',
      status: expect.stringMatching(/^(RETURNED|PENDING)$/),
      depositAmountCents: String(GROSS),
      returnedAmountCents: '300000',
    });
    // The same request again (a double submission): the code was spent, no second return.
    expectError(
      await giveBack(operator, depositId, { amountCents: 3_000_00, reason: 'OVERPAYMENT', description: 'Pagó de más en noviembre', totpCode: code }),
      401,
      'INVALID_TOTP_CODE',
    );

    // The payer has it back: the API sees the same return, and its movement on the wallet.
    const listed = await eventually(
      async () => {
        const items = await returnsOf(depositId);
        return items.length === 1 && items[0].status === 'RETURNED' ? items : null;
      },
      30_000,
      100,
    );
    expect(DepositReturnListSchema.parse({ items: listed })).toEqual({ items: listed });
    expect(listed[0].id).toBe(r.body.id);
    const byApi = await api.get(`/deposits/${depositId}/returns`, { token: co.writeKey });
    expect(byApi.body.items).toEqual(listed);
    const movement = await api.get(`/wallets/transactions/${r.body.transactionId}`, { token: co.writeKey });
    expect(movement.status).toBe(200);
    expect(movement.body).toMatchObject({ type: 'TRANSFER_OUT', reference: r.body.id });

    // Recorded as asked by the user who signed it.
    const db = new pg.Client({ connectionString: stack.db.url });
    await db.connect();
    try {
      const { rows } = await db.query('select requested_by from collect_key.payment_returns where id = $1', [r.body.id]);
      expect(rows).toEqual([{ requested_by: `user:${operator.userId}` }]);
    } finally {
      await db.end();
    }
  });

  it('an amount above what is left to return is 422 RETURN_EXCEEDS_PAYMENT with what is left, before the code', async () => {
    const over = await giveBack(admin, depositId, { amountCents: 5_000_01, reason: 'CUSTOMER_REQUEST', totpCode: totpCode(admin.totpSecret) });
    expectError(over, 422, 'RETURN_EXCEEDS_PAYMENT');
    expect(over.body.details).toEqual({ grossCents: String(GROSS), returnedCents: '300000', returnableCents: '500000' });
    expect(await returnsOf(depositId)).toHaveLength(1);
  });
});
