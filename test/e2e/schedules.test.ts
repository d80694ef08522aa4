import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { verifyWebhook, WebhookReceiver } from '../support/webhook-receiver.js';
import { SANDBOX_ACH_ACCOUNT } from '../support/fixtures.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Co = Awaited<ReturnType<Stack['provision']>>;

/**
 * Scheduled payouts (docs/schedules.md) through the real processes — gateway (its scheduler, its
 * outbox, the SCHEDULES stream), transfer, ledger, the sandbox rail, the webhook service — with the
 * test clock (SCHEDULER_TEST_CLOCK_FILE: every replica reads the same file, development only). Each
 * run is made once whatever the replicas, restarts and crashes; the invariants hold after each test.
 */
const dir = mkdtempSync(join(tmpdir(), 'schedules-clock-'));
const clockFile = join(dir, 'now');
const setClock = (iso: string) => writeFileSync(clockFile, iso);
const SCHEDULER_ENV = { SCHEDULER_TEST_CLOCK_FILE: clockFile, SCHEDULER_INTERVAL_MS: '100', SCHEDULER_RUN_LEASE_SECONDS: '30' };

const payroll = (amount: number) => ({
  kind: 'SEND',
  send: {
    amount,
    description: 'Nómina',
    destination: {
      bankAccount: SANDBOX_ACH_ACCOUNT,
    },
  },
});

describe('scheduled payouts end to end', () => {
  let stack: Stack;
  let db: pg.Client;
  const rx = new WebhookReceiver();

  beforeAll(async () => {
    setClock('2026-12-01T12:00:00-05:00');
    stack = await startStack({ transfers: true, webhooks: true, gatewayEnv: SCHEDULER_ENV });
    db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    await rx.start();
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
    await rx.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  async function company(name: string, funds: { BREB?: number; ACH?: number }): Promise<Co> {
    const co = await stack.provision(name, { taxRegime: 'SIMPLE' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    for (const [rail, cents] of Object.entries(funds)) {
      expect((await stack.admin('POST', `/admin/companies/${co.id}/wallets/${rail}/credit`, { amountCents: cents, reference: `seed-${rail}` })).status).toBe(
        201,
      );
    }
    return co;
  }
  const create = (co: Co, body: unknown) => stack.http('POST', '/schedules', { token: co.writeKey, body });
  const runsOf = async (co: Co, id: string) => (await stack.http('GET', `/schedules/${id}/runs`, { token: co.readKey })).body.items as any[];
  const balances = async (co: Co) =>
    Object.fromEntries(((await stack.http('GET', '/wallets/balance', { token: co.readKey })).body.wallets as any[]).map((w) => [w.rail, w.availableCents]));
  /** The transfers the transfer service holds under a run's key (one, or none). */
  const transfersUnder = async (co: Co, runKey: string) =>
    Number((await db.query(`select count(*)::int as n from transfer.transfers where company_id = $1 and idempotency_key = $2`, [co.id, runKey])).rows[0].n);

  it('monthly on the 8th with PREVIOUS: December 8 is a holiday, so the run is due on Monday the 7th and is made once', async () => {
    const co = await company('Nómina S.A.S.', { ACH: 5_000_000 });
    const ep = await stack.http('POST', '/webhooks/endpoints', {
      token: co.writeKey,
      body: { url: rx.url, events: ['schedule.run_started', 'schedule.run_failed'] },
    });
    expect(ep.status).toBe(201);
    const r = await create(co, {
      description: 'Nómina del 8',
      recurrence: { kind: 'MONTHLY', dayOfMonth: 8, time: '08:00' },
      businessDayRule: 'PREVIOUS',
      action: payroll(250_000),
    });
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('ACTIVE');
    expect(r.body.nextRun).toEqual({ seq: 1, nominalAt: '2026-12-08T13:00:00.000000Z', dueAt: '2026-12-07T13:00:00.000000Z' });
    expect(r.body.upcomingRuns.map((u: any) => u.dueAt.slice(0, 10))).toEqual(['2026-12-07', '2027-01-08', '2027-02-08', '2027-03-08', '2027-04-08']);

    setClock('2026-12-07T07:59:00-05:00');
    await new Promise((res) => setTimeout(res, 500));
    expect(await runsOf(co, r.body.id)).toEqual([]);

    setClock('2026-12-07T08:00:30-05:00');
    const [run] = await eventually(
      async () => {
        const rs = await runsOf(co, r.body.id);
        return rs.length === 1 && rs[0].status !== 'STARTING' ? rs : undefined;
      },
      20_000,
      100,
    );
    expect(run).toMatchObject({ seq: 1, status: 'STARTED', runKey: `schedule:${r.body.id}:2026-12-08T08:00`, amountCents: 250_000, error: null });
    expect(await transfersUnder(co, run.runKey)).toBe(1);
    const after = await stack.http('GET', `/schedules/${r.body.id}`, { token: co.readKey });
    expect(after.body).toMatchObject({ runsStarted: 1, nextRun: { seq: 2, dueAt: '2027-01-08T13:00:00.000000Z' } });

    const hit = await eventually(async () => rx.ofType('schedule.run_started').find((h) => h.body.data.id === run.id), 20_000, 100);
    expect(verifyWebhook(ep.body.secret, hit)).toBe(true);
    const { claimedAt, ...shown } = run;
    void claimedAt;
    expect(hit.body.data).toEqual(shown);
  });

  it('an unfunded run fails with INSUFFICIENT_BALANCE, an event and a webhook; nothing moves and the schedule goes on', async () => {
    const co = await company('Sin Fondos S.A.S.', { ACH: 100_000 });
    const ep = await stack.http('POST', '/webhooks/endpoints', { token: co.writeKey, body: { url: rx.url, events: ['schedule.run_failed'] } });
    setClock('2026-12-10T09:00:00-05:00');
    const r = await create(co, { recurrence: { kind: 'WEEKLY', dayOfWeek: 'FRI', time: '10:00' }, action: payroll(900_000) });
    expect(r.status).toBe(201);
    setClock('2026-12-11T10:00:05-05:00');
    const [run] = await eventually(
      async () => {
        const rs = await runsOf(co, r.body.id);
        return rs.length === 1 && rs[0].status !== 'STARTING' ? rs : undefined;
      },
      20_000,
      100,
    );
    expect(run).toMatchObject({ status: 'FAILED', transferId: null, error: { code: 'INSUFFICIENT_BALANCE', message: expect.stringMatching(/saldo/i) } });
    expect(await balances(co)).toMatchObject({ ACH: '100000' });
    const s = await stack.http('GET', `/schedules/${r.body.id}`, { token: co.readKey });
    expect(s.body).toMatchObject({ status: 'ACTIVE', runsStarted: 1, nextRun: { seq: 2, dueAt: '2026-12-18T15:00:00.000000Z' } });
    const hit = await eventually(async () => rx.ofType('schedule.run_failed').find((h) => h.body.data.id === run.id), 20_000, 100);
    expect(verifyWebhook(ep.body.secret, hit)).toBe(true);
    expect(hit.body.data.error.code).toBe('INSUFFICIENT_BALANCE');
    // The projection says so before the next run.
    const p = await stack.http('GET', '/schedules/projection?days=7', { token: co.readKey });
    expect(p.status).toBe(200);
    const ach = p.body.wallets.find((w: any) => w.rail === 'ACH');
    expect(ach).toMatchObject({ availableCents: '100000', outflowCents: '900000', shortfallCents: '800000', firstShortfallAt: '2026-12-18T15:00:00.000000Z' });
    expect(p.body.warnings).toEqual(['Los pagos programados del viernes 18 de diciembre necesitan 8.000 COP más en ACH.']);
    expect((await stack.http('DELETE', `/schedules/${r.body.id}`, { token: co.writeKey })).body.status).toBe('CANCELLED');
  });

  it('a top-up every morning: moves what BREB lacks from ACH, and nothing when BREB already holds the target', async () => {
    const co = await company('Tesorería S.A.S.', { BREB: 100_000, ACH: 2_000_000 });
    setClock('2026-12-14T06:00:00-05:00');
    const r = await create(co, {
      recurrence: { kind: 'CRON', expression: '0 7 * * 1-5' },
      businessDayRule: 'SKIP',
      action: { kind: 'TOP_UP', from: 'ACH', to: 'BREB', targetBalanceCents: 500_000, description: 'Fondeo Bre-B' },
    });
    expect(r.status).toBe(201);
    setClock('2026-12-14T07:00:01-05:00');
    const first = await eventually(async () => (await runsOf(co, r.body.id)).find((x) => x.seq === 1 && x.status !== 'STARTING'), 20_000, 100);
    expect(first).toMatchObject({ status: 'STARTED', amountCents: 400_000, walletMoveId: expect.any(String) });
    expect(await balances(co)).toMatchObject({ BREB: '500000', ACH: '1600000' });
    setClock('2026-12-15T07:00:01-05:00');
    const second = await eventually(async () => (await runsOf(co, r.body.id)).find((x) => x.seq === 2 && x.status !== 'STARTING'), 20_000, 100);
    expect(second).toMatchObject({ status: 'SKIPPED', amountCents: null, walletMoveId: null });
    expect(await balances(co)).toMatchObject({ BREB: '500000', ACH: '1600000' });
    await stack.http('DELETE', `/schedules/${r.body.id}`, { token: co.writeKey });
  });

  it('weekly across a restart, a second replica and a replica that died mid-run: every run is made once, the missed ones caught up once', async () => {
    const co = await company('Proveedores S.A.S.', { ACH: 5_000_000 });
    setClock('2026-12-16T09:00:00-05:00');
    const r = await create(co, { recurrence: { kind: 'WEEKLY', dayOfWeek: 'FRI', time: '09:00' }, action: payroll(50_000) });
    expect(r.status).toBe(201);
    const id = r.body.id as string;
    // Two more replicas, all three reading the same clock.
    const b = await stack.extraGateway(SCHEDULER_ENV);
    const c = await stack.extraGateway(SCHEDULER_ENV);

    setClock('2026-12-18T09:00:01-05:00');
    await eventually(async () => ((await runsOf(co, id)).find((x) => x.seq === 1 && x.status === 'STARTED') ? true : undefined), 20_000, 100);

    // A replica dies after claiming run 2 and before making it: its row stays STARTING with a lease.
    await c.stop();
    await b.stop();
    await db.query(`update gateway.schedules set status = 'PAUSED' where id = $1`, [id]);
    setClock('2026-12-25T09:00:01-05:00');
    const claimed = await db.query(
      `insert into gateway.schedule_runs (id, schedule_id, company_id, seq, nominal_at, nominal_local, due_at, run_key, action, status, lease_until, claimed_at)
       select gen_random_uuid(), s.id, s.company_id, s.next_seq, s.next_nominal_at, s.next_nominal_local, s.next_due_at,
              'schedule:' || s.id || ':' || s.next_nominal_local, s.action, 'STARTING', '2026-12-25T14:00:31Z', '2026-12-25T14:00:01Z'
         from gateway.schedules s where s.id = $1 returning run_key`,
      [id],
    );
    // …and in the same transaction the schedule moved on (as Scheduler.claim does), then the replica died.
    await db.query(
      `update gateway.schedules set status = 'ACTIVE', runs_started = 2, last_nominal_at = next_nominal_at, next_seq = 3,
              next_nominal_at = '2027-01-01T14:00:00Z', next_nominal_local = '2027-01-01T09:00', next_due_at = '2027-01-01T14:00:00Z' where id = $1`,
      [id],
    );
    // A replica comes back (a restart), and the time jumps past two more Fridays: the dead replica's run
    // is made once its lease ran out (under its key), the missed runs are caught up once each, in order.
    const e = await stack.extraGateway(SCHEDULER_ENV);
    setClock('2027-01-08T09:30:00-05:00');
    const all = await eventually(
      async () => {
        const rs = await runsOf(co, id);
        return rs.length === 4 && rs.every((x) => x.status === 'STARTED') ? rs : undefined;
      },
      30_000,
      200,
    );
    expect(all.map((x) => x.seq)).toEqual([4, 3, 2, 1]);
    expect(all.map((x) => x.runKey.split(':').slice(-2).join(':'))).toEqual(['2027-01-08T09:00', '2027-01-01T09:00', '2026-12-25T09:00', '2026-12-18T09:00']);
    expect(all.find((x) => x.seq === 2).runKey).toBe(claimed.rows[0].run_key);
    for (const x of all) expect(await transfersUnder(co, x.runKey)).toBe(1);
    expect(new Set(all.map((x) => x.transferId)).size).toBe(4);
    // Later looks start nothing more.
    await new Promise((res) => setTimeout(res, 600));
    expect((await runsOf(co, id)).length).toBe(4);
    await e.stop();
    await stack.http('DELETE', `/schedules/${id}`, { token: co.writeKey });
  });

  it("the API: 400 naming the fields, another company's schedule is 404, a READ key cannot write, PATCH pauses and resumes", async () => {
    const co = await company('Reglas S.A.S.', {});
    const other = await company('Otra S.A.S.', {});
    setClock('2026-12-01T12:00:00-05:00');
    const bad = await create(co, {
      recurrence: { kind: 'MONTHLY', dayOfMonth: 32, time: '25:00' },
      endAt: '2026-11-01T00:00:00Z',
      action: { kind: 'MOVE', from: 'ACH', to: 'ACH', amountCents: 0 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('INVALID_REQUEST');
    const paths = (bad.body.details.fields as any[]).map((f) => f.path).sort();
    expect(paths).toEqual(expect.arrayContaining(['recurrence.dayOfMonth', 'recurrence.time', 'action.amountCents']));
    const cron = await create(co, {
      recurrence: { kind: 'CRON', expression: '0 8 30 2 *' },
      action: { kind: 'MOVE', from: 'ACH', to: 'BREB', amountCents: 100 },
    });
    expect(cron.status).toBe(400);
    const past = await create(co, {
      recurrence: { kind: 'ONCE', executeAt: '2026-11-30T08:00:00-05:00' },
      action: { kind: 'MOVE', from: 'ACH', to: 'BREB', amountCents: 100 },
    });
    expect(past.status).toBe(400);
    expect(past.body.details.fields.map((f: any) => f.path)).toEqual(['recurrence.executeAt']);
    const refd = await create(co, {
      recurrence: { kind: 'ONCE', executeAt: '2026-12-31T08:00:00-05:00' },
      action: { kind: 'SEND', send: { ...payroll(1000).send, reference: 'x' } },
    });
    expect(refd.status).toBe(400);

    const ok = await create(co, {
      recurrence: { kind: 'ONCE', executeAt: '2026-12-31T08:00:00-05:00' },
      action: { kind: 'MOVE', from: 'ACH', to: 'BREB', amountCents: 100 },
    });
    expect({ status: ok.status, body: ok.body }).toMatchObject({ status: 201 });
    expect((await stack.http('GET', `/schedules/${ok.body.id}`, { token: other.readKey })).status).toBe(404);
    expect((await stack.http('PATCH', `/schedules/${ok.body.id}`, { token: other.writeKey, body: { status: 'PAUSED' } })).status).toBe(404);
    expect((await stack.http('DELETE', `/schedules/${ok.body.id}`, { token: other.writeKey })).status).toBe(404);
    expect((await stack.http('GET', '/schedules/not-a-uuid', { token: co.readKey })).body.error).toBe('SCHEDULE_NOT_FOUND');
    expect((await stack.http('POST', '/schedules', { token: co.readKey, body: {} })).status).toBe(403);
    const list = await stack.http('GET', '/schedules', { token: other.readKey });
    expect(list.body.items).toEqual([]);

    // Bad input on the other routes: 400 naming the field; another company's runs are 404 too.
    const patch = (body: unknown) => stack.http('PATCH', `/schedules/${ok.body.id}`, { token: co.writeKey, body });
    for (const [body, path] of [
      [{ status: 'CANCELLED' }, 'status'],
      [{ maxRuns: 10_001 }, 'maxRuns'],
      [{ maxRuns: '2' }, 'maxRuns'],
      [{ endAt: 'mañana' }, 'endAt'],
      [{ action: { kind: 'MOVE', from: 'ACH', to: 'BREB', amountCents: 1e15 } }, 'action.amountCents'],
      [{ color: 'rojo' }, ''],
    ] as const) {
      const r = await patch(body);
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error: 'INVALID_REQUEST' });
      if (path) expect(r.body.details.fields.map((f: any) => f.path)).toContain(path);
    }
    const malformed = await stack.http('PATCH', `/schedules/${ok.body.id}`, { token: co.writeKey, raw: { type: 'application/json', data: '{"status":' } });
    expect(malformed.status).toBe(400);
    expect((await stack.http('GET', `/schedules/${ok.body.id}/runs?cursor=abc`, { token: co.readKey })).status).toBe(400);
    expect((await stack.http('GET', '/schedules/projection?days=99', { token: co.readKey })).status).toBe(400);
    expect((await stack.http('GET', `/schedules/${ok.body.id}/runs`, { token: other.readKey })).body.error).toBe('SCHEDULE_NOT_FOUND');
    const paused = await stack.http('PATCH', `/schedules/${ok.body.id}`, { token: co.writeKey, body: { status: 'PAUSED' } });
    expect(paused.body).toMatchObject({ status: 'PAUSED', nextRun: null, upcomingRuns: [] });
    const resumed = await stack.http('PATCH', `/schedules/${ok.body.id}`, { token: co.writeKey, body: { status: 'ACTIVE' } });
    expect(resumed.body).toMatchObject({ status: 'ACTIVE', nextRun: { seq: 1, dueAt: '2026-12-31T13:00:00.000000Z' } });
    const cancelled = await stack.http('DELETE', `/schedules/${ok.body.id}`, { token: co.writeKey });
    expect(cancelled.body.status).toBe('CANCELLED');
    expect((await stack.http('PATCH', `/schedules/${ok.body.id}`, { token: co.writeKey, body: { status: 'ACTIVE' } })).body.error).toBe('SCHEDULE_ENDED');
  });

  it("balance alerts with a top-up schedule: BREB falls below its low threshold (one wallet.balance_low), the next morning's top-up brings it back (one wallet.balance_recovered)", async () => {
    const co = await company('Alertas S.A.S.', { BREB: 1_000_000, ACH: 5_000_000 });
    const ep = await stack.http('POST', '/webhooks/endpoints', {
      token: co.writeKey,
      body: { url: rx.url, events: ['wallet.balance_low', 'wallet.balance_recovered', 'schedule.run_started'] },
    });
    expect(ep.status).toBe(201);
    const set = await stack.http('PUT', '/wallets/BREB/alerts', { token: co.writeKey, body: { lowThresholdCents: 500_000, hysteresisCents: 100_000 } });
    expect(set.status).toBe(200);
    expect(set.body.state).toBe('NORMAL');
    setClock('2026-12-21T18:00:00-05:00');
    const r = await create(co, {
      recurrence: { kind: 'CRON', expression: '0 7 * * 1-5' },
      businessDayRule: 'SKIP',
      action: { kind: 'TOP_UP', from: 'ACH', to: 'BREB', targetBalanceCents: 800_000 },
    });
    expect(r.status).toBe(201);
    // The day's payouts drain BREB below 500,000: one alert, however many more movements follow below it.
    for (const amountCents of [450_000, 50_000, 50_000]) {
      expect((await stack.http('POST', '/wallets/moves', { token: co.writeKey, body: { from: 'BREB', to: 'ACH', amountCents } })).status).toBe(201);
    }
    const history = async () => (await stack.http('GET', '/wallets/alerts/history?rail=BREB', { token: co.readKey })).body.items as any[];
    await eventually(async () => ((await history()).length === 1 ? true : undefined), 20_000, 100);
    await new Promise((res) => setTimeout(res, 1_500)); // a second look of the evaluator finds nothing new
    expect((await history()).map((i) => [i.type, i.availableCents])).toEqual([['wallet.balance_low', '450000']]);
    // Tuesday 07:00: the top-up moves 350,000 from ACH; BREB at 800,000 ≥ 500,000 + 100,000: recovered, once.
    setClock('2026-12-22T07:00:01-05:00');
    const run = await eventually(async () => (await runsOf(co, r.body.id)).find((x) => x.status !== 'STARTING'), 20_000, 100);
    expect(run).toMatchObject({ status: 'STARTED', amountCents: 350_000 });
    await eventually(async () => ((await history()).length === 2 ? true : undefined), 20_000, 100);
    expect((await history()).map((i) => [i.type, i.availableCents])).toEqual([
      ['wallet.balance_recovered', '800000'],
      ['wallet.balance_low', '450000'],
    ]);
    // Each crossing reached the endpoint once, signed, its data the history item.
    for (const item of await history()) {
      const hit = await eventually(async () => rx.ofType(item.type).find((h) => h.body.data.id === item.id), 20_000, 100);
      expect(verifyWebhook(ep.body.secret, hit)).toBe(true);
      expect(hit.body.data).toEqual(item);
      expect(rx.ofType(item.type).filter((h) => h.body.data.id === item.id).length).toBe(1);
    }
    await stack.http('DELETE', `/schedules/${r.body.id}`, { token: co.writeKey });
  });

  it('a batch each run: an ordinary bulk payout executed under the run key (one batch per run); an unfunded one fails and its batch is cancelled', async () => {
    const co = await company('Lotes S.A.S.', { ACH: 1_000_000 });
    setClock('2026-12-28T08:00:00-05:00');
    const item = (amount: number, accountNumber: string) => ({
      ...payroll(amount).send,
      destination: { bankAccount: { ...payroll(amount).send.destination.bankAccount, accountNumber } },
    });
    const batchAction = (items: unknown[]) => ({ kind: 'BATCH', batch: { description: 'Proveedores', items } });
    const ok = await create(co, {
      recurrence: { kind: 'ONCE', executeAt: '2026-12-28T09:00:00-05:00' },
      action: batchAction([item(200_000, '11112222333'), item(300_000, '44445555666')]),
    });
    if (ok.status !== 201) throw new Error(ok.text);
    const big = await create(co, {
      recurrence: { kind: 'ONCE', executeAt: '2026-12-28T09:00:00-05:00' },
      action: batchAction([item(900_000, '77778888999'), item(900_000, '11112222333')]),
    });
    expect(big.status).toBe(201);
    setClock('2026-12-28T09:00:01-05:00');
    const [run] = await eventually(
      async () => {
        const rs = await runsOf(co, ok.body.id);
        return rs.length === 1 && rs[0].status !== 'STARTING' ? rs : undefined;
      },
      30_000,
      100,
    );
    expect(run).toMatchObject({ status: 'STARTED', amountCents: 500_000, transferId: null, walletMoveId: null, batchId: expect.any(String) });
    expect(['EXECUTING', 'COMPLETED', 'PARTIALLY_FAILED']).toContain(run.batchStatus);
    const batch = await stack.http('GET', `/transfers/batches/${run.batchId}`, { token: co.readKey });
    expect(batch.status).toBe(200);
    expect(batch.body.itemCount).toBe(2);
    const batchesUnder = async (key: string) =>
      Number((await db.query(`select count(*)::int as n from transfer.batches where company_id = $1 and idempotency_key = $2`, [co.id, key])).rows[0].n);
    expect(await batchesUnder(run.runKey)).toBe(1);

    const [failed] = await eventually(
      async () => {
        const rs = await runsOf(co, big.body.id);
        return rs.length === 1 && rs[0].status !== 'STARTING' ? rs : undefined;
      },
      30_000,
      100,
    );
    expect(failed).toMatchObject({ status: 'FAILED', batchId: null, error: { code: 'INSUFFICIENT_BALANCE' } });
    const left = await db.query(`select state from transfer.batches where company_id = $1 and idempotency_key = $2`, [co.id, failed.runKey]);
    expect(left.rows.map((r: { state: string }) => r.state)).toEqual(['CANCELLED']);
    // Only the first batch's 500,000 left ACH (before fees): nothing of the unfunded one is held.
    const ach = Number((await balances(co)).ACH);
    expect(ach).toBeLessThanOrEqual(500_000);
    expect(ach).toBeGreaterThan(400_000);
  });
});
