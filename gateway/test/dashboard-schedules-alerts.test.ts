import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ERRORS } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { ScheduleProjectionSchema, ScheduleRunPageSchema, SchedulePageSchema, ScheduleSchema } from '../src/api/schedules/schemas.js';
import { BalanceAlertEventPageSchema, BalanceAlertsSchema } from '../src/api/wallets/schemas.js';
import { adminOf, client, expectNoInternals, type Client, type Reply } from './support/http.js';
import { startStack, type Stack } from './support/stack.js';
import { SANDBOX_ACH_ACCOUNT } from '@wallet/platform/testing';

/**
 * «Pagos programados» and «Alertas de saldo» in the dashboard (issue 42): a company's user, of any
 * role, reads its schedules, their runs and the projection, and both wallets' balance alerts with
 * their history, through a real gateway (its scheduler on a test clock) and ledger. Another
 * company's schedule reads as unknown; the routes need a session; writing schedules stays API-key only.
 */
let stack: Stack;
let api: Client;
const PASSWORD = 'Clave-segura-2026!';
const dir = mkdtempSync(join(tmpdir(), 'dash-schedules-clock-'));
const clockFile = join(dir, 'now');
const setClock = (iso: string) => writeFileSync(clockFile, iso);

interface Company {
  id: string;
  writeKey: string;
}
let co: Company;
let other: Company;
let viewer: string;
let stranger: string;
let moveOnce: any;
let failing: any;
let payroll: any;

async function company(name: string, funds: { BREB?: number; ACH?: number } = {}): Promise<Company> {
  const admin = adminOf(api, stack.gw.adminToken);
  const c = await admin.createCompany({ name });
  expect((await admin.patch(c.id, { rateLimitMultiplier: 1000 })).status).toBe(200);
  for (const [rail, cents] of Object.entries(funds) as ['BREB' | 'ACH', number][])
    expect((await admin.credit(c.id, rail, cents, `fondeo-${rail}`)).status).toBe(201);
  return { id: c.id, writeKey: (await admin.issueKey(c.id, 'WRITE')).key };
}

/** A logged-in dashboard user's session token. */
async function session(c: Company, role: 'ADMIN' | 'OPERATOR' | 'VIEWER'): Promise<string> {
  const email = `programados.${randomUUID().slice(0, 8)}@panel.co`;
  expect((await api.post(`/admin/companies/${c.id}/users`, { token: stack.gw.adminToken, body: { email, password: PASSWORD, role } })).status).toBe(201);
  const s = await api.post('/auth/login', { body: { email, password: PASSWORD } });
  expect(s.status).toBe(200);
  return s.body.token;
}

const schedule = async (c: Company, body: unknown) => {
  const r = await api.post('/schedules', { token: c.writeKey, body, headers: { 'Idempotency-Key': randomUUID() } });
  if (r.status !== 201) throw new Error(`schedule: ${r.status} ${r.text}`);
  return r.body;
};

function expectError(r: Reply, status: number, code: keyof typeof ERRORS) {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error: code });
  expectNoInternals(r.text);
}

beforeAll(async () => {
  setClock('2026-12-14T12:00:00-05:00'); // a Monday
  stack = await startStack({
    RATE_LIMIT_FINANCIAL: '100000',
    RATE_LIMIT_READS: '100000',
    RATE_LIMIT_AUTHENTICATION: '100000',
    SCHEDULER_TEST_CLOCK_FILE: clockFile,
    SCHEDULER_INTERVAL_MS: '100',
  });
  api = client(stack.gw.url);
  co = await company('Programados del Panel S.A.S.', { BREB: 2_000_000 });
  other = await company('Otra Empresa S.A.S.');
  viewer = await session(co, 'VIEWER');
  stranger = await session(other, 'ADMIN');

  // Two runs at 13:00 today: a move that is made (1.000 COP to ACH), and one that cannot be (ACH never holds 500.000 COP).
  moveOnce = await schedule(co, {
    description: 'Fondeo ACH',
    recurrence: { kind: 'ONCE', executeAt: '2026-12-14T13:00:00-05:00' },
    businessDayRule: 'NONE',
    action: { kind: 'MOVE', from: 'BREB', to: 'ACH', amountCents: 100_000 },
  });
  failing = await schedule(co, {
    description: 'Devolución imposible',
    recurrence: { kind: 'ONCE', executeAt: '2026-12-14T13:00:00-05:00' },
    businessDayRule: 'NONE',
    action: { kind: 'MOVE', from: 'ACH', to: 'BREB', amountCents: 50_000_000 },
  });
  // Fridays at 08:00, 13.000 COP by ACH: with 1.000 COP there on Friday the 18th, 12.000 COP short.
  payroll = await schedule(co, {
    description: 'Pago semanal',
    recurrence: { kind: 'WEEKLY', dayOfWeek: 'FRI', time: '08:00' },
    businessDayRule: 'NONE',
    action: {
      kind: 'SEND',
      send: {
        amount: 1_300_000,
        description: 'Pago semanal',
        destination: {
          bankAccount: SANDBOX_ACH_ACCOUNT,
        },
      },
    },
  });
  setClock('2026-12-14T13:00:30-05:00');
  await eventually(
    async () => {
      const runs = await Promise.all(
        [moveOnce, failing].map(async (s) => (await api.get(`/dashboard/schedules/${s.id}/runs`, { token: viewer })).body.items as any[]),
      );
      return runs.every((r) => r.length === 1 && r[0].status !== 'STARTING');
    },
    30_000,
    100,
  );
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('«Pagos programados» in the dashboard', () => {
  it("lists the company's schedules to any role, newest first, as GET /schedules does", async () => {
    const r = await api.get('/dashboard/schedules', { token: viewer });
    expect(r.status).toBe(200);
    expect(SchedulePageSchema.parse(r.body)).toEqual(r.body);
    expect(r.body.items.map((s: any) => s.id)).toEqual([payroll.id, failing.id, moveOnce.id]);
    expect(r.body.items[0]).toMatchObject({
      status: 'ACTIVE',
      description: 'Pago semanal',
      recurrence: { kind: 'WEEKLY', dayOfWeek: 'FRI', time: '08:00' },
      nextRun: { seq: 1, dueAt: '2026-12-18T13:00:00.000000Z' },
      runsStarted: 0,
    });
    expect(r.body.items[2]).toMatchObject({ status: 'COMPLETED', runsStarted: 1, nextRun: null });
    expect(r.body).toEqual((await api.get('/schedules', { token: co.writeKey })).body);

    const active = await api.get('/dashboard/schedules?status=ACTIVE', { token: viewer });
    expect(active.body.items.map((s: any) => s.id)).toEqual([payroll.id]);
    const one = await api.get(`/dashboard/schedules/${payroll.id}`, { token: viewer });
    expect(one.status).toBe(200);
    expect(ScheduleSchema.parse(one.body)).toEqual(one.body);
    expect(one.body.upcomingRuns.map((u: any) => u.dueAt.slice(0, 10))).toEqual(['2026-12-18', '2026-12-25', '2027-01-01', '2027-01-08', '2027-01-15']);
  });

  it("shows a schedule's runs: the move it made, or why it failed", async () => {
    const made = await api.get(`/dashboard/schedules/${moveOnce.id}/runs`, { token: viewer });
    expect(made.status).toBe(200);
    expect(ScheduleRunPageSchema.parse(made.body)).toEqual(made.body);
    expect(made.body.items[0]).toMatchObject({
      seq: 1,
      status: 'STARTED',
      dueAt: '2026-12-14T18:00:00.000000Z',
      amountCents: 100_000,
      walletMoveId: expect.any(String),
      transferId: null,
      error: null,
    });
    const failed = await api.get(`/dashboard/schedules/${failing.id}/runs`, { token: viewer });
    expect(failed.body.items[0]).toMatchObject({ status: 'FAILED', walletMoveId: null, error: { code: 'INSUFFICIENT_BALANCE', message: expect.any(String) } });
    expect(failed.body.items[0].error.message).toMatch(/[a-záéíóúñ]/i);
  });

  it('projects the next runs against the balances, with the warning in Spanish', async () => {
    const r = await api.get('/dashboard/schedules/projection', { token: viewer });
    expect(r.status).toBe(200);
    expect(ScheduleProjectionSchema.parse(r.body)).toEqual(r.body);
    expect(r.body.warnings).toEqual(['Los pagos programados del viernes 18 de diciembre necesitan 12.000 COP más en ACH.']);
    expect(r.body.wallets.find((w: any) => w.rail === 'ACH')).toMatchObject({
      availableCents: '100000',
      shortfallCents: '1200000',
      firstShortfallAt: '2026-12-18T13:00:00.000000Z',
    });
    expect(r.body.runs.map((x: any) => x.scheduleId)).toEqual([payroll.id]);
    expect(r.body).toEqual((await api.get('/schedules/projection', { token: co.writeKey })).body);
  });

  it("another company's schedule (or a malformed id) is 404 SCHEDULE_NOT_FOUND; its own list is empty", async () => {
    for (const path of [`/dashboard/schedules/${payroll.id}`, `/dashboard/schedules/${payroll.id}/runs`, '/dashboard/schedules/no-es-un-id/runs'])
      expectError(await api.get(path, { token: stranger }), 404, 'SCHEDULE_NOT_FOUND');
    expect((await api.get('/dashboard/schedules', { token: stranger })).body).toEqual({ items: [], nextCursor: null });
    const p = await api.get('/dashboard/schedules/projection', { token: stranger });
    expect(p.body).toMatchObject({ runs: [], warnings: [] });
  });

  it('needs a session (none 401, an API key 403); a session does not write schedules', async () => {
    for (const path of [
      '/dashboard/schedules',
      '/dashboard/schedules/projection',
      `/dashboard/schedules/${payroll.id}`,
      `/dashboard/schedules/${payroll.id}/runs`,
    ]) {
      expectError(await api.get(path), 401, 'AUTH_REQUIRED');
      expectError(await api.get(path, { token: co.writeKey }), 403, 'API_KEY_AUTH_NOT_ALLOWED');
    }
    const w = await api.patch(`/schedules/${payroll.id}`, { token: viewer, body: { status: 'PAUSED' }, headers: { 'Idempotency-Key': randomUUID() } });
    expect(w.status).toBe(401);
    expect((await api.get(`/dashboard/schedules/${payroll.id}`, { token: viewer })).body.status).toBe('ACTIVE');
  });
});

describe('«Alertas de saldo» in the dashboard', () => {
  it("reads both wallets' alerts and the crossings, as GET /wallets/alerts does; another company sees its own", async () => {
    const set = await api.put('/wallets/BREB/alerts', { token: co.writeKey, body: { lowThresholdCents: 5_000_000, hysteresisCents: 100_000 } });
    expect(set.status).toBe(200);
    expect(set.body.state).toBe('LOW');
    const alerts = await api.get('/dashboard/wallets/alerts', { token: viewer });
    expect(alerts.status).toBe(200);
    expect(BalanceAlertsSchema.parse(alerts.body)).toEqual(alerts.body);
    expect(alerts.body.items.map((a: any) => [a.rail, a.enabled, a.state])).toEqual([
      ['BREB', true, 'LOW'],
      ['ACH', false, 'NORMAL'],
    ]);
    const history = await eventually(async () => {
      const h = await api.get('/dashboard/wallets/alerts/history', { token: viewer });
      return h.body.items.length === 1 ? h : null;
    }, 15_000);
    expect(BalanceAlertEventPageSchema.parse(history.body)).toEqual(history.body);
    expect(history.body.items[0]).toMatchObject({ rail: 'BREB', state: 'LOW' });
    expect((await api.get('/dashboard/wallets/alerts/history?rail=ACH', { token: viewer })).body.items).toEqual([]);

    expect((await api.get('/dashboard/wallets/alerts', { token: stranger })).body.items.map((a: any) => a.enabled)).toEqual([false, false]);
    expect((await api.get('/dashboard/wallets/alerts/history', { token: stranger })).body).toEqual({ items: [], nextCursor: null, hasMore: false });
  });

  it('needs a session (none 401, an API key 403)', async () => {
    for (const path of ['/dashboard/wallets/alerts', '/dashboard/wallets/alerts/history']) {
      expectError(await api.get(path), 401, 'AUTH_REQUIRED');
      expectError(await api.get(path, { token: co.writeKey }), 403, 'API_KEY_AUTH_NOT_ALLOWED');
    }
  });
});
