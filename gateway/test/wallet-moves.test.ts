import { randomUUID } from 'node:crypto';
import { ERRORS } from '@wallet/platform';
import { MovementDetailSchema, MovementSchema, StatementSchema, WalletMoveSchema } from '../src/api/wallets/schemas.js';
import { adminOf, client, expectNoInternals, type Client, type Reply } from './support/http.js';
import { sql } from './support/sql.js';
import { startStack, type Stack } from './support/stack.js';

/**
 * Moves between a company's own wallets (docs/wallet-moves.md) through the real gateway and ledger:
 * POST /wallets/moves, GET /wallets/moves/{id}, and the two legs in GET /wallets/transactions.
 */
let stack: Stack;
let api: Client;
let admin: ReturnType<typeof adminOf>;

beforeAll(async () => {
  stack = await startStack({ RATE_LIMIT_FINANCIAL: '100000', RATE_LIMIT_READS: '100000' });
  api = client(stack.gw.url);
  admin = adminOf(api, stack.gw.adminToken);
});
afterAll(() => stack?.stop());

interface Co {
  id: string;
  key: string;
  readKey: string;
}

async function company(funds: { BREB?: number; ACH?: number } = {}, body: Record<string, unknown> = {}): Promise<Co> {
  const c = await admin.createCompany(body);
  const key = await admin.issueKey(c.id, 'WRITE');
  const read = await admin.issueKey(c.id, 'READ');
  for (const [rail, cents] of Object.entries(funds) as ['BREB' | 'ACH', number][]) {
    const r = await admin.credit(c.id, rail, cents, `fondeo-${rail}`);
    if (r.status !== 201) throw new Error(`credit ${rail}: ${r.status} ${r.text}`);
  }
  return { id: c.id, key: key.key, readKey: read.key };
}

const move = (co: Co, body: unknown, idempotencyKey?: string, token = co.key) =>
  api.post('/wallets/moves', { token, body, ...(idempotencyKey ? { headers: { 'Idempotency-Key': idempotencyKey } } : {}) });

async function available(co: Co): Promise<Record<string, string>> {
  const r = await api.get('/wallets/balance', { token: co.readKey });
  expect(r.status).toBe(200);
  return Object.fromEntries(r.body.wallets.map((w: { rail: string; availableCents: string }) => [w.rail, w.availableCents]));
}

async function legsOf(co: Co, moveId: string): Promise<any[]> {
  const r = await api.get('/wallets/transactions?limit=100', { token: co.readKey });
  expect(r.status).toBe(200);
  for (const m of r.body.items) MovementSchema.strict().parse(m);
  return r.body.items.filter((m: { walletMoveId: string | null }) => m.walletMoveId === moveId);
}

function expectError(r: Reply, status: number, error: string): void {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error });
  expect(typeof r.body.message).toBe('string');
  expectNoInternals(r.text);
}

/** A 400 naming the fields, each with a Spanish message. */
function expectFields(r: Reply, paths: string[]): void {
  expectError(r, 400, 'INVALID_REQUEST');
  expect(r.body.message).toBe(ERRORS.INVALID_REQUEST.message);
  const fields = r.body.details.fields as { path: string; message: string }[];
  expect([...new Set(fields.map((f) => f.path))].sort()).toEqual([...paths].sort());
  for (const f of fields) expect(f.message).toMatch(/[a-záéíóúñ]/i);
}

describe('POST /wallets/moves', () => {
  it('ACH → BREB: 201 COMPLETED, both balances at once, two legs with walletMoveId, GET /wallets/moves/{id} the same', async () => {
    const co = await company({ BREB: 10_000, ACH: 500_000 });
    const r = await move(co, { from: 'ACH', to: 'BREB', amountCents: 150_000, reference: 'fondeo-breb', description: 'Fondeo del día' }, randomUUID());
    expect(r.status).toBe(201);
    expect(r.headers.get('idempotent-replayed')).toBeNull();
    const m = WalletMoveSchema.strict().parse(r.body);
    expect(m).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      from: 'ACH',
      to: 'BREB',
      amountCents: 150_000,
      status: 'COMPLETED',
      reference: 'fondeo-breb',
      description: 'Fondeo del día',
      debitTransactionId: expect.any(String),
      creditTransactionId: expect.any(String),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
    });
    expect(await available(co)).toEqual({ BREB: '160000', ACH: '350000' });

    const legs = await legsOf(co, m.id);
    expect(legs.map((l) => [l.id, l.type, l.rail, l.status, l.amount, l.totalFee, l.ivaAmount, l.reference]).sort()).toEqual(
      [
        [m.debitTransactionId, 'TRANSFER_OUT', 'ACH', 'COMPLETED', '150000', '0', '0', 'fondeo-breb'],
        [m.creditTransactionId, 'TRANSFER_IN', 'BREB', 'COMPLETED', '150000', '0', '0', 'fondeo-breb'],
      ].sort(),
    );
    // Movements that are not legs of a move say so with null; the listing's other fields are unchanged.
    const all = (await api.get('/wallets/transactions?limit=100', { token: co.readKey })).body.items;
    expect(all.filter((x: any) => x.type === 'BALANCE_ADD').map((x: any) => x.walletMoveId)).toEqual([null, null]);

    const debit = await api.get(`/wallets/transactions/${m.debitTransactionId}`, { token: co.readKey });
    expect(debit.status).toBe(200);
    expect(MovementDetailSchema.strict().parse(debit.body)).toMatchObject({ walletMoveId: m.id, description: 'Fondeo del día', batchId: null });

    const got = await api.get(`/wallets/moves/${m.id}`, { token: co.readKey });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
  });

  it('BREB → ACH without texts or Idempotency-Key: reference and description null; each request is a new move', async () => {
    const co = await company({ BREB: 1_000 });
    const a = await move(co, { from: 'BREB', to: 'ACH', amountCents: 300 });
    const b = await move(co, { from: 'BREB', to: 'ACH', amountCents: 300 });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body).toMatchObject({ from: 'BREB', to: 'ACH', amountCents: 300, reference: null, description: null });
    expect(b.body.id).not.toBe(a.body.id);
    expect(await available(co)).toEqual({ BREB: '400', ACH: '600' });
    expect((await legsOf(co, a.body.id)).map((l) => [l.type, l.rail]).sort()).toEqual([
      ['TRANSFER_IN', 'ACH'],
      ['TRANSFER_OUT', 'BREB'],
    ]);
  });

  it('the same Idempotency-Key and body: the first move again (201, Idempotent-Replayed: true), one move; another body: 409', async () => {
    const co = await company({ BREB: 50_000 });
    const key = `mov-${randomUUID()}`;
    const body = { from: 'BREB', to: 'ACH', amountCents: 20_000, reference: 'cierre' };
    const first = await move(co, body, key);
    expect(first.status).toBe(201);
    const again = await move(co, { reference: 'cierre', amountCents: 20_000, to: 'ACH', from: 'BREB' }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await available(co)).toEqual({ BREB: '30000', ACH: '20000' });
    expect(await legsOf(co, first.body.id)).toHaveLength(2);
    const moves = (await api.get('/wallets/transactions?limit=100', { token: co.readKey })).body.items.filter((m: any) => m.walletMoveId);
    expect(moves).toHaveLength(2);

    const other = await move(co, { ...body, amountCents: 20_001 }, key);
    expectError(other, 409, 'IDEMPOTENCY_KEY_REUSED');
    expect(await available(co)).toEqual({ BREB: '30000', ACH: '20000' });
    // Keys are per company: another company's same key is its own move.
    const co2 = await company({ BREB: 50_000 });
    const theirs = await move(co2, body, key);
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(first.body.id);
  });

  it('an answer lost after the ledger moved (no stored answer here): the retry with the key gets that move from the ledger, never a second', async () => {
    const co = await company({ ACH: 10_000 });
    const key = `mov-${randomUUID()}`;
    const body = { from: 'ACH', to: 'BREB', amountCents: 4_000 };
    const first = await move(co, body, key);
    expect(first.status).toBe(201);
    // As if the gateway had died between the ledger's answer and storing it.
    await sql(stack.db.url, 'delete from gateway.idempotency_keys where company_id = $1 and key = $2', [co.id, key]);
    const retry = await move(co, body, key);
    expect([retry.status, retry.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(retry.body).toEqual(first.body);
    expect(await available(co)).toEqual({ BREB: '4000', ACH: '6000' });
    // The ledger still binds the key to its body: another one is 409, as the gateway says it.
    await sql(stack.db.url, 'delete from gateway.idempotency_keys where company_id = $1 and key = $2', [co.id, key]);
    expectError(await move(co, { ...body, amountCents: 4_001 }, key), 409, 'IDEMPOTENCY_KEY_REUSED');
    expect(await available(co)).toEqual({ BREB: '4000', ACH: '6000' });
  });

  it("the company's endpoint subscribed to wallet.moved gets a delivery of the move (ledger → WALLETS → webhook service)", async () => {
    const co = await company({ BREB: 9_000 });
    const ep = await api.post('/webhooks/endpoints', { token: co.key, body: { url: 'https://hooks.example.co/wallet', events: ['wallet.moved'] } });
    expect(ep.status).toBe(201);
    const m = await move(co, { from: 'BREB', to: 'ACH', amountCents: 1_000 });
    expect(m.status).toBe(201);
    let deliveries: any[] = [];
    for (let i = 0; i < 100 && deliveries.length === 0; i++) {
      deliveries = (await api.get('/webhooks/deliveries', { token: co.readKey })).body.items ?? [];
      if (deliveries.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(deliveries.map((d) => [d.endpointId, d.eventType, d.resourceId])).toEqual([[ep.body.id, 'wallet.moved', m.body.id]]);
  });

  it("each wallet's statement shows the move with its own leg: WALLET_MOVE_OUT on from, WALLET_MOVE_IN on to", async () => {
    const co = await company({ BREB: 70_000 });
    const m = (await move(co, { from: 'BREB', to: 'ACH', amountCents: 25_000, reference: 'barrido' })).body;
    await new Promise((r) => setTimeout(r, 20));
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date().toISOString();
    const statement = async (rail: 'BREB' | 'ACH') => {
      const r = await api.get(`/wallets/statements?rail=${rail}&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`, { token: co.readKey });
      expect(r.status).toBe(200);
      return StatementSchema.strict().parse(r.body);
    };
    const breb = await statement('BREB');
    const ach = await statement('ACH');
    const line = (s: typeof breb) =>
      s.lines.filter((l) => l.postingId === m.id).map((l) => [l.entry, l.amountCents, l.movementId, l.movementType, l.movementRail, l.reference]);
    expect(line(breb)).toEqual([['WALLET_MOVE_OUT', '-25000', m.debitTransactionId, 'TRANSFER_OUT', 'BREB', 'barrido']]);
    expect(line(ach)).toEqual([['WALLET_MOVE_IN', '25000', m.creditTransactionId, 'TRANSFER_IN', 'ACH', 'barrido']]);
    expect([breb.closing.availableCents, ach.closing.availableCents]).toEqual(['45000', '25000']);
  });

  it('more than the from wallet holds: 422 INSUFFICIENT_BALANCE, nothing moves', async () => {
    const co = await company({ BREB: 5_000, ACH: 7_000 });
    const r = await move(co, { from: 'ACH', to: 'BREB', amountCents: 7_001 }, randomUUID());
    expectError(r, 422, 'INSUFFICIENT_BALANCE');
    expect(await available(co)).toEqual({ BREB: '5000', ACH: '7000' });
    const all = (await api.get('/wallets/transactions?limit=100', { token: co.readKey })).body.items;
    expect(all.filter((m: any) => m.walletMoveId !== null)).toEqual([]);
    // Exactly what it holds moves.
    expect((await move(co, { from: 'ACH', to: 'BREB', amountCents: 7_000 })).status).toBe(201);
    expect(await available(co)).toEqual({ BREB: '12000', ACH: '0' });
  });

  it('refuses what the schema refuses with 400 INVALID_REQUEST naming the fields, in Spanish', async () => {
    const co = await company({ BREB: 100_000, ACH: 100_000 });
    const ok = { from: 'BREB', to: 'ACH', amountCents: 100 };
    expectFields(await move(co, { ...ok, to: 'BREB' }), ['to']);
    expectFields(await move(co, {}), ['from', 'to', 'amountCents']);
    expectFields(await move(co, { from: 'BREB', amountCents: 100 }), ['to']);
    expectFields(await move(co, { ...ok, from: 'PSE' }), ['from']);
    for (const amountCents of ['100', 1.5, -5, 0, 1e30, 200_000_000_001, null, true]) expectFields(await move(co, { ...ok, amountCents }), ['amountCents']);
    expectFields(await move(co, { ...ok, reference: '' }), ['reference']);
    expectFields(await move(co, { ...ok, reference: 'r'.repeat(65) }), ['reference']);
    expectFields(await move(co, { ...ok, description: 'd'.repeat(141) }), ['description']);
    expectFields(await move(co, { ...ok, description: 7 }), ['description']);
    const unknown = await move(co, { ...ok, fee: 0 });
    expectFields(unknown, ['fee']);
    expect(unknown.body.details.fields).toEqual([{ path: 'fee', message: 'Campo no permitido.' }]);
    expectFields(await move(co, [ok]), ['']);
    const malformed = await api.post('/wallets/moves', { token: co.key, raw: '{"from": "BREB", ', headers: { 'content-type': 'application/json' } });
    expectError(malformed, 400, 'INVALID_REQUEST');
    // The longest texts are taken, and nothing above moved.
    expect(await available(co)).toEqual({ BREB: '100000', ACH: '100000' });
    const long = await move(co, { ...ok, reference: 'r'.repeat(64), description: 'ñ'.repeat(140) });
    expect(long.status).toBe(201);
    expect(long.body).toMatchObject({ reference: 'r'.repeat(64), description: 'ñ'.repeat(140) });
  });

  it('a company without its BREB wallet: 404 FAST_WALLET_MISSING; without wallets: 404 WALLET_NOT_PROVISIONED', async () => {
    const achOnly = await company({ ACH: 10_000 }, { wallets: ['ACH'] });
    expectError(await move(achOnly, { from: 'ACH', to: 'BREB', amountCents: 100 }), 404, 'FAST_WALLET_MISSING');
    expect(await api.get('/wallets/transactions?rail=ACH', { token: achOnly.readKey }).then((r) => r.body.items.length)).toBe(1);
    const none = await company({}, { wallets: [] });
    const r = await move(none, { from: 'BREB', to: 'ACH', amountCents: 100 });
    expect(r.status).toBe(404);
    expect(['WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING']).toContain(r.body.error);
  });

  it('a READ key is refused (403 INSUFFICIENT_SCOPE) and moves nothing; no key: 401', async () => {
    const co = await company({ BREB: 1_000 });
    const r = await move(co, { from: 'BREB', to: 'ACH', amountCents: 100 }, randomUUID(), co.readKey);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'INSUFFICIENT_SCOPE', required: 'WRITE', granted: 'READ', message: ERRORS.INSUFFICIENT_SCOPE.message });
    expect((await api.post('/wallets/moves', { body: { from: 'BREB', to: 'ACH', amountCents: 100 } })).status).toBe(401);
    expect(await available(co)).toEqual({ BREB: '1000', ACH: '0' });
  });

  it('ten concurrent moves of 100 from a wallet holding 500: exactly five move, five are 422, the balances exact', async () => {
    const co = await company({ BREB: 500 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => move(co, { from: 'BREB', to: 'ACH', amountCents: 100 }, randomUUID())));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 201, 422, 422, 422, 422, 422]);
    for (const r of answers.filter((a) => a.status === 422)) expect(r.body.error).toBe('INSUFFICIENT_BALANCE');
    expect(await available(co)).toEqual({ BREB: '0', ACH: '500' });
    const ids = answers.filter((a) => a.status === 201).map((a) => a.body.id);
    expect(new Set(ids).size).toBe(5);
    for (const id of ids) expect(await legsOf(co, id)).toHaveLength(2);
  });
});

describe('GET /wallets/moves/{id}', () => {
  it("another company's move, an unknown id and a malformed one: 404 WALLET_MOVE_NOT_FOUND", async () => {
    const a = await company({ ACH: 1_000 });
    const b = await company({ ACH: 1_000 });
    const m = await move(a, { from: 'ACH', to: 'BREB', amountCents: 100 });
    expect(m.status).toBe(201);
    const notFound = { error: 'WALLET_MOVE_NOT_FOUND', message: ERRORS.WALLET_MOVE_NOT_FOUND.message };
    for (const path of [`/wallets/moves/${m.body.id}`, `/wallets/moves/${randomUUID()}`, '/wallets/moves/abc', `/wallets/moves/${m.body.debitTransactionId}`]) {
      const r = await api.get(path, { token: b.readKey });
      expect([path, r.status, r.body]).toEqual([path, 404, notFound]);
    }
    // Its owner reads it, with a READ key; the other company's listing has no leg of it.
    expect((await api.get(`/wallets/moves/${m.body.id}`, { token: a.readKey })).status).toBe(200);
    expect(await legsOf(b, m.body.id)).toEqual([]);
    expect((await api.get(`/wallets/transactions/${m.body.debitTransactionId}`, { token: b.readKey })).status).toBe(404);
  });
});
