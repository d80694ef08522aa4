import { randomUUID } from 'node:crypto';
import { ERRORS } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { BalanceAlertEventPageSchema, BalanceAlertSettingsSchema, BalanceAlertsSchema } from '../src/api/wallets/schemas.js';
import { adminOf, client, expectNoInternals, type Client, type Reply } from './support/http.js';
import { sql } from './support/sql.js';
import { startStack, type Stack } from './support/stack.js';

/**
 * Balance alerts (docs/balance-alerts.md) through the real gateway and ledger: PUT /wallets/{rail}/alerts,
 * GET /wallets/alerts and /wallets/alerts/history, and the e-mail to the company's dashboard ADMINs.
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

async function company(funds: { BREB?: number; ACH?: number } = {}): Promise<Co> {
  const c = await admin.createCompany();
  const key = await admin.issueKey(c.id, 'WRITE');
  const read = await admin.issueKey(c.id, 'READ');
  for (const [rail, cents] of Object.entries(funds) as ['BREB' | 'ACH', number][]) {
    const r = await admin.credit(c.id, rail, cents, `fondeo-${rail}`);
    if (r.status !== 201) throw new Error(`credit ${rail}: ${r.status} ${r.text}`);
  }
  return { id: c.id, key: key.key, readKey: read.key };
}

/** A dashboard user straight in the gateway's table (the e-mail recipients are what matters here). */
async function dashboardUser(companyId: string, email: string, role: 'ADMIN' | 'OPERATOR', active = true): Promise<void> {
  await sql(
    stack.db.url,
    `insert into gateway.dashboard_users (id, company_id, email, password_hash, role, totp_secret_enc, activated_at, disabled_at)
     values ($1, $2, $3, 'x', $4, 'x', now(), $5)`,
    [randomUUID(), companyId, email, role, active ? null : new Date()],
  );
}

async function mailsTo(to: string): Promise<Array<{ subject: string; text: string }>> {
  const r = await fetch(`${stack.sandboxUrl}/sandbox/emails?to=${encodeURIComponent(to)}`);
  return ((await r.json()) as { items: Array<{ subject: string; text: string }> }).items;
}

const put = (co: Co, rail: string, body: unknown, token = co.key) => api.put(`/wallets/${rail}/alerts`, { token, body });
const get = (co: Co, token = co.readKey) => api.get('/wallets/alerts', { token });
const history = (co: Co, q = '', token = co.readKey) => api.get(`/wallets/alerts/history${q}`, { token });

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

describe('balance alerts', () => {
  it('crossing down alerts once: state LOW, one history item, one e-mail per active ADMIN; recovery the same way', async () => {
    const co = await company({ BREB: 600_000_000 });
    const a1 = `admin1-${randomUUID()}@empresa.test`;
    const a2 = `admin2-${randomUUID()}@empresa.test`;
    const off = `apagado-${randomUUID()}@empresa.test`;
    const op = `operador-${randomUUID()}@empresa.test`;
    await dashboardUser(co.id, a1, 'ADMIN');
    await dashboardUser(co.id, a2, 'ADMIN');
    await dashboardUser(co.id, off, 'ADMIN', false);
    await dashboardUser(co.id, op, 'OPERATOR');

    const set = await put(co, 'BREB', { lowThresholdCents: 500_000_000, hysteresisCents: 10_000_000 });
    expect(set.status).toBe(200);
    expect(BalanceAlertSettingsSchema.strict().parse(set.body)).toEqual({
      rail: 'BREB',
      enabled: true,
      lowThresholdCents: 500_000_000,
      highThresholdCents: null,
      hysteresisCents: 10_000_000,
      state: 'NORMAL',
      availableCents: '600000000',
      updatedAt: expect.stringMatching(/Z$/),
    });

    // 200,000,000 to ACH: BREB at 400,000,000, below 500,000,000; then two more debits: still one alert.
    const toAch = (amountCents: number) =>
      api.post('/wallets/moves', { token: co.key, body: { from: 'BREB', to: 'ACH', amountCents }, headers: { 'Idempotency-Key': randomUUID() } });
    expect((await toAch(200_000_000)).status).toBe(201);
    await eventually(async () => (await get(co)).body.items[0].state === 'LOW', 15_000);
    expect((await toAch(1_000_000)).status).toBe(201);
    expect((await toAch(1_000_000)).status).toBe(201);
    const text = await eventually(async () => (await mailsTo(a1))[0]?.text, 20_000);
    expect(text).toContain('El saldo de la billetera Bre-B está por debajo de 5.000.000 COP: el disponible es 4.000.000 COP.');
    await eventually(async () => (await mailsTo(a2)).length === 1, 20_000);

    const all = await get(co);
    expect(all.status).toBe(200);
    const body = BalanceAlertsSchema.strict().parse(all.body);
    expect(body.items.map((i) => [i.rail, i.enabled, i.state])).toEqual([
      ['BREB', true, 'LOW'],
      ['ACH', false, 'NORMAL'],
    ]);
    expect(body.items[0]!.availableCents).toBe('398000000');

    // Back to 508,000,000 (low + hysteresis is 510,000,000): still LOW; then 510,000,000: recovered.
    const back = async (amountCents: number) =>
      api.post('/wallets/moves', { token: co.key, body: { from: 'ACH', to: 'BREB', amountCents }, headers: { 'Idempotency-Key': randomUUID() } });
    expect((await back(110_000_000)).status).toBe(201);
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await get(co)).body.items[0].state).toBe('LOW');
    expect((await back(2_000_000)).status).toBe(201);
    await eventually(async () => (await get(co)).body.items[0].state === 'NORMAL', 15_000);
    await eventually(async () => (await mailsTo(a1)).length === 2, 20_000);
    const recovered = (await mailsTo(a1)).find((m) => /recuper/i.test(m.text));
    expect(recovered?.text).toContain('5.100.000 COP');

    const h = await history(co);
    expect(h.status).toBe(200);
    const page = BalanceAlertEventPageSchema.strict().parse(h.body);
    expect(page.items.map((i) => [i.type, i.kind, i.state, i.availableCents, i.thresholdCents])).toEqual([
      ['wallet.balance_recovered', 'RECOVERED', 'NORMAL', '510000000', 500_000_000],
      ['wallet.balance_low', 'LOW', 'LOW', '400000000', 500_000_000],
    ]);
    expect(page.hasMore).toBe(false);
    // One e-mail per crossing per active ADMIN: never to a disabled ADMIN or an OPERATOR, never twice.
    await new Promise((r) => setTimeout(r, 500));
    expect((await mailsTo(a1)).length).toBe(2);
    expect((await mailsTo(a2)).length).toBe(2);
    expect(await mailsTo(off)).toEqual([]);
    expect(await mailsTo(op)).toEqual([]);
    const rows = await sql<{ n: string }>(
      stack.db.url,
      `select count(*)::text as n from gateway.mail_outbox where company_id = $1 and kind = 'wallet.balance_alert'`,
      [co.id],
    );
    expect(rows[0]!.n).toBe('4');
  });

  it('a wallet already below a new threshold answers LOW at once; a high threshold; removing an alert', async () => {
    const co = await company({ ACH: 1_000_000 });
    const r = await put(co, 'ACH', { lowThresholdCents: 5_000_000, highThresholdCents: 90_000_000 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ rail: 'ACH', state: 'LOW', lowThresholdCents: 5_000_000, highThresholdCents: 90_000_000, hysteresisCents: 0 });
    expect((await history(co, '?rail=ACH')).body.items.map((i: { type: string }) => i.type)).toEqual(['wallet.balance_low']);
    expect((await history(co, '?rail=BREB')).body.items).toEqual([]);
    // High only (null low): the LOW state is left without an alert (its threshold is gone).
    const high = await put(co, 'ACH', { lowThresholdCents: null, highThresholdCents: 500_000 });
    expect(high.body).toMatchObject({ enabled: true, lowThresholdCents: null, state: 'HIGH' });
    const removed = await put(co, 'ACH', { lowThresholdCents: 0 });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({
      enabled: false,
      lowThresholdCents: null,
      highThresholdCents: null,
      hysteresisCents: 0,
      state: 'NORMAL',
      updatedAt: null,
    });
    expect((await history(co)).body.items.map((i: { type: string }) => i.type)).toEqual(['wallet.balance_high', 'wallet.balance_low']);
  });

  it('pages the history with a cursor', async () => {
    const co = await company();
    for (let i = 0; i < 3; i++) {
      expect((await put(co, 'BREB', { lowThresholdCents: 100 })).body.state).toBe('LOW');
      expect((await put(co, 'BREB', { lowThresholdCents: 0, highThresholdCents: 1 })).body.state).toBe('NORMAL');
    }
    const p1 = await history(co, '?limit=2');
    expect(p1.body).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const p2 = await history(co, `?limit=2&cursor=${encodeURIComponent(p1.body.nextCursor)}`);
    expect(p2.body.hasMore).toBe(false);
    expect([...p1.body.items, ...p2.body.items]).toHaveLength(3);
    expectFields(await history(co, '?cursor=nope'), ['query.cursor']);
    expectFields(await history(co, '?limit=0'), ['query.limit']);
    expectFields(await history(co, '?rail=PSE'), ['query.rail']);
  });

  it('refuses bad bodies with 400 INVALID_REQUEST naming the fields', async () => {
    const co = await company();
    expectFields(await put(co, 'BREB', { lowThresholdCents: '5000' }), ['lowThresholdCents']);
    expectFields(await put(co, 'BREB', {}), ['lowThresholdCents']);
    expectFields(await put(co, 'BREB', { lowThresholdCents: 1.5 }), ['lowThresholdCents']);
    expectFields(await put(co, 'BREB', { lowThresholdCents: -1 }), ['lowThresholdCents']);
    expectFields(await put(co, 'BREB', { lowThresholdCents: 2 ** 60 }), ['lowThresholdCents']);
    expectFields(await put(co, 'BREB', { lowThresholdCents: 100, highThresholdCents: 0 }), ['highThresholdCents']);
    expectFields(await put(co, 'BREB', { lowThresholdCents: 1_000, highThresholdCents: 1_500, hysteresisCents: 500 }), ['highThresholdCents']);
    expectFields(await put(co, 'BREB', { lowThresholdCents: 1_000, hysteresisCents: true }), ['hysteresisCents']);
    expectFields(await put(co, 'BREB', { lowThresholdCents: 1_000, extra: 1 }), ['extra']);
    expectError(await put(co, 'PSE', { lowThresholdCents: 1_000 }), 400, 'INVALID_REQUEST');
    const malformed = await api.put('/wallets/BREB/alerts', { token: co.key, raw: '{"lowThresholdCents": ', headers: { 'content-type': 'application/json' } });
    expectError(malformed, 400, 'INVALID_REQUEST');
    expect((await get(co)).body.items.every((i: { enabled: boolean }) => !i.enabled)).toBe(true);
  });

  it('scopes: a READ key reads but cannot set; no key is 401', async () => {
    const co = await company();
    expectError(await put(co, 'BREB', { lowThresholdCents: 1_000 }, co.readKey), 403, 'INSUFFICIENT_SCOPE');
    expect((await get(co)).status).toBe(200);
    expect((await history(co)).status).toBe(200);
    expect((await api.get('/wallets/alerts')).status).toBe(401);
    expect((await api.put('/wallets/BREB/alerts', { body: { lowThresholdCents: 1 } })).status).toBe(401);
  });

  it("company isolation: another company's settings and history are never seen", async () => {
    const a = await company();
    const b = await company();
    expect((await put(a, 'BREB', { lowThresholdCents: 100 })).body.state).toBe('LOW');
    const bAlerts = await get(b);
    expect(bAlerts.body.items.every((i: { enabled: boolean }) => !i.enabled)).toBe(true);
    expect((await history(b)).body.items).toEqual([]);
    expect((await history(a)).body.items).toHaveLength(1);
  });
});
