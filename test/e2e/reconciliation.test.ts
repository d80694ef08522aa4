import pg from 'pg';
import { eventually } from '@wallet/platform/testing';
import { bogotaDate, reconciliationDriver, type ReportRail as Rail } from '../support/reconciliation-driver.js';
import { startStack } from '../support/stack.js';
import { PSE_PAYER, SANDBOX_ACH_ACCOUNT } from '../support/fixtures.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * The reconciliation's acceptance run (docs/reconciliation.md): a day of traffic on all four rails through the product (gateway → services →
 * sandbox providers), one discrepancy of each kind injected into the providers' reports, every
 * report reconciled through POST /admin/reconciliations by the real reconciliation service, and
 * exactly the planted breaks found — nothing else. Each break is then resolved through
 * POST /admin/exceptions/{id}/resolve, and the cross-service invariants (the clearing line of
 * `ledger:check` among them) hold at every step.
 *
 * The day: the traffic happens now and is then moved back one day, on the providers' side and in our
 * books alike (the settlement times only), so that "the next day's report" of a late value date is
 * today's, which the provider already publishes up to now. The ledger's postings move with them: the
 * clearing line of the invariants attributes each posting to its Bogotá day, reconciled or not.
 */
describe('reconciliation end to end: four rails, one discrepancy of each kind', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  let sql: pg.Client;
  let D: string;
  let today: string;
  const ids: Record<string, string> = {};

  const post = (path: string, body: unknown, key = co.writeKey) => stack.http('POST', path, { token: key, body });
  const sandbox = (method: string, path: string, body?: unknown) => reconciliationDriver(stack).sandbox(method, path, body);
  const inject = (rail: Rail, date: string, body: Record<string, unknown>) => reconciliationDriver(stack).inject(rail, date, body);
  const reconcile = (rail: Rail, date: string) => reconciliationDriver(stack).reconcile(rail, date);
  const breaksOf = async (runId: string) => (await stack.admin('GET', `/admin/reconciliations/${runId}/breaks?limit=100`)).body.items as any[];
  async function exceptionOf(breakKey: string) {
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const r = await stack.admin('GET', `/admin/exceptions?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      all.push(...r.body.items);
      cursor = r.body.nextCursor;
    } while (cursor);
    return all.find((e) => e.resourceId === breakKey);
  }
  const resolve = (id: string, action: string, note: string) => stack.admin('POST', `/admin/exceptions/${id}/resolve`, { action, note });
  async function expectInvariants() {
    const report = await stack.invariants();
    expect(report.violations).toEqual([]);
  }

  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true, collectKeys: true, reconciliation: true } as any);
    sql = new pg.Client({ connectionString: stack.databaseUrl });
    await sql.connect();
    co = await stack.provision('Conciliada S.A.S.', { taxRegime: 'COMMON' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 50_000_000, reference: 'seed-breb' });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 50_000_000, reference: 'seed-ach' });
    // Not across a Bogotá midnight: the whole day of traffic has to fall on one date.
    const msToMidnight = (t: number) => 86_400_000 - ((t - 5 * 3600_000) % 86_400_000);
    if (msToMidnight(Date.now()) < 120_000) await new Promise((r) => setTimeout(r, msToMidnight(Date.now()) + 1_000));

    // Bre-B payouts (3) and ACH payouts (3), each COMPLETED at the rail.
    const resolved = await post('/transfers/resolve-key', { keyValue: '3001234567' });
    const breb = (amount: number, reference: string) =>
      post('/transfers/send', {
        amount,
        reference,
        destination: { brebKey: { type: resolved.body.keyType, value: resolved.body.keyValue } },
        targetName: resolved.body.recipient.fullName,
        targetDocument: resolved.body.recipient.idValue,
      });
    const ach = (amount: number, reference: string) =>
      post('/transfers/send', {
        amount,
        reference,
        description: 'Pago proveedor',
        destination: {
          bankAccount: { ...SANDBOX_ACH_ACCOUNT },
        },
      });
    for (const [name, r] of [
      ['b1', await breb(150_000, 'rc-b1')],
      ['b2', await breb(250_000, 'rc-b2')],
      ['b3', await breb(350_000, 'rc-b3')],
      ['a1', await ach(400_000, 'rc-a1')],
      ['a2', await ach(500_000, 'rc-a2')],
      ['a3', await ach(600_000, 'rc-a3')],
    ] as const) {
      expect(r.status).toBe(201);
      ids[name] = r.body.transactionId ?? r.body.id;
    }
    for (const name of ['b1', 'b2', 'b3', 'a1', 'a2', 'a3']) {
      await eventually(
        async () => (await stack.http('GET', `/wallets/transactions/${ids[name]}`, { token: co.readKey })).body?.status === 'COMPLETED',
        30_000,
        100,
      );
    }

    // PSE: two links paid, one paid and then reversed by the provider, one rejected.
    const payer = PSE_PAYER;
    for (const [name, amount, outcome] of [
      ['p1', 700_000, 'APPROVED'],
      ['p2', 800_000, 'APPROVED'],
      ['p3', 900_000, 'APPROVED'],
      ['p4', 100_000, 'REJECTED'],
    ] as const) {
      const r = await post('/deposits/pse', { amountCents: amount, ...payer });
      expect(r.status).toBe(201);
      ids[name] = r.body.id;
      expect((await sandbox('POST', `/sandbox/pse/${r.body.id}/pay`, { outcome, payerBank: 'Bancolombia' })).status).toBe(200);
    }
    const depositStatus = async (id: string) =>
      (await stack.http('GET', '/deposits?limit=100', { token: co.readKey })).body.deposits.find((d: any) => d.id === id)?.status;
    for (const [name, status] of [
      ['p1', 'ASSIGNED'],
      ['p2', 'ASSIGNED'],
      ['p3', 'ASSIGNED'],
      ['p4', 'FAILED'],
    ] as const) {
      await eventually(async () => (await depositStatus(ids[name]!)) === status, 30_000, 100);
    }
    expect((await sandbox('POST', `/sandbox/pse/${ids.p3}/reverse`)).status).toBe(200);
    await eventually(async () => (await depositStatus(ids.p3!)) === 'REVERSED', 30_000, 100);

    // Bre-B inbound: three payments to a collect key.
    const key = await post('/breb/collect-keys', { externalId: 'cliente-rc', name: 'Cliente Conciliado' });
    expect(key.status).toBe(201);
    for (const [name, amount] of [
      ['i1', 120_000],
      ['i2', 130_000],
      ['i3', 140_000],
    ] as const) {
      const r = await sandbox('POST', '/sandbox/breb/incoming', {
        keyValue: key.body.key.value,
        amountCents: amount,
        payerName: 'Pedro Pérez',
        payerDocument: 'CC 79123456',
        payerBank: 'Nequi',
      });
      expect(r.status).toBe(202);
      ids[name] = ((await r.json()) as { providerTransferId: string }).providerTransferId;
    }
    await eventually(
      async () => {
        const r = await sql.query(`select count(*)::int as n from collect_key.payments where provider_transfer_id = any($1) and movement_id is not null`, [
          [ids.i1, ids.i2, ids.i3],
        ]);
        return r.rows[0].n === 3;
      },
      30_000,
      100,
    );

    // The day moves back one day: the providers' settlement times and ours.
    const day = "interval '1 day'";
    await sql.query(`update sandbox.transfers set created_at = created_at - ${day}, outcome_at = outcome_at - ${day}`);
    await sql.query(`update transfer.transfers set completed_at = completed_at - ${day}, finished_at = finished_at - ${day}`);
    await sql.query(
      `update sandbox.pse_links set created_at = created_at - ${day}, paid_at = paid_at - ${day}, outcome_at = outcome_at - ${day}, reversed_at = reversed_at - ${day}`,
    );
    await sql.query(
      `update pse_deposit.deposits set provider_confirmed_at = provider_confirmed_at - ${day}, failed_at = failed_at - ${day}, reversed_at = reversed_at - ${day}`,
    );
    await sql.query(`update sandbox.breb_incoming set received_at = received_at - ${day}`);
    await sql.query(`update collect_key.payments set received_at = received_at - ${day}`);
    // The ledger's postings of that traffic happened on that day too (the clearing line counts a day's
    // postings as reconciled when that day's report is).
    await sql.query(`update ledger.postings set created_at = created_at - ${day}`);
    today = bogotaDate(Date.now());
    D = bogotaDate(Date.now() - 86_400_000);
  }, 240_000);
  afterAll(async () => {
    await sql?.end();
    await stack?.stop();
  });

  it('a clean day reconciles on every rail with no break', async () => {
    for (const rail of ['breb', 'ach', 'pse', 'breb-inbound'] as const) {
      const run = await reconcile(rail, D);
      expect(run).toMatchObject({ rail, date: D, status: 'RECONCILED', trigger: 'ON_DEMAND', breaks: { total: 0, opened: 0 } });
      const expected = { breb: 3, ach: 3, pse: 5, 'breb-inbound': 3 }[rail]; // pse: 4 payments (one failed) + 1 reversal
      expect(run.report.lines).toBe(expected);
      expect(run.ours.count).toBe(expected);
      expect(run.matched.count).toBe(expected);
      expect(run.report.netCents).toBe(run.ours.netCents);
    }
    await expectInvariants();
  }, 120_000);

  it('finds exactly the planted breaks, opens each once, and resolves each', async () => {
    const dsc: Record<string, string> = {};
    dsc.amount = await inject('breb', D, { kind: 'amount', ref: ids.b1, amountCents: 150_500 });
    dsc.missing = await inject('ach', D, { kind: 'missing', ref: ids.a1 });
    dsc.status = await inject('ach', D, { kind: 'status', ref: ids.a2, status: 'FAILED' });
    dsc.duplicate = await inject('pse', D, { kind: 'duplicate', ref: ids.p1, lineStatus: 'PAID' });
    dsc.extra = await inject('pse', D, { kind: 'extra', amountCents: 100_000 });
    dsc.late = await inject('breb-inbound', D, { kind: 'late_value_date', ref: ids.i1 });
    dsc.trailer = await inject('breb', today, { kind: 'trailer', lines: 7 });

    const runs: Record<string, any> = {};
    for (const rail of ['breb', 'ach', 'pse', 'breb-inbound'] as const) runs[rail] = await reconcile(rail, D);
    // The inbound report of today holds the line that left D's.
    for (const rail of ['ach', 'pse', 'breb-inbound'] as const) runs[`${rail}:today`] = await reconcile(rail, today);
    const rejected = await reconcile('breb', today);
    expect(rejected).toMatchObject({ status: 'REJECTED', rejectReason: 'TRAILER_MISMATCH', breaks: { total: 0, opened: 0 } });

    const found = new Map<string, any>();
    for (const run of Object.values(runs)) {
      expect(run.status).toBe('RECONCILED');
      for (const b of await breaksOf(run.id)) found.set(b.key, b);
    }
    const expected = [
      `breb:${D}:amount_mismatch:`,
      `ach:${D}:missing_at_provider:${ids.a1}`,
      `ach:${D}:status_mismatch:`,
      `pse:${D}:duplicate:`,
      `pse:${D}:missing_in_our_books:`,
      `breb-inbound:${D}:missing_at_provider:dep_`,
      `breb-inbound:${today}:value_date_mismatch:${ids.i1}`,
    ];
    if (found.size !== expected.length || !expected.every((p) => [...found.keys()].some((k) => k.startsWith(p))))
      throw new Error(`breaks found: ${[...found.keys()].join(', ')}`);
    expect(found.size).toBe(expected.length);
    for (const prefix of expected) expect([...found.keys()].filter((k) => k.startsWith(prefix))).toHaveLength(1);
    const byKind = (rail: string, date: string, kind: string) => [...found.values()].find((b) => b.rail === rail && b.date === date && b.kind === kind);
    expect(byKind('breb', D, 'amount_mismatch')).toMatchObject({ ourId: ids.b1, differenceCents: '500' });
    expect(byKind('ach', D, 'status_mismatch')).toMatchObject({ ourId: ids.a2, differenceCents: '-500000' });
    expect(byKind('ach', D, 'missing_at_provider')).toMatchObject({ differenceCents: '-400000' });
    expect(byKind('pse', D, 'duplicate')).toMatchObject({ ourId: ids.p1, differenceCents: '-700000' });
    expect(byKind('pse', D, 'missing_in_our_books')).toMatchObject({ ourId: null, differenceCents: '-100000' });
    // The late line: D's missing_at_provider is superseded by today's value_date_mismatch.
    // (On this rail our id is the inbound payment's deposit id, and the key of a line is the network's id.)
    const superseded = (await breaksOf(runs['breb-inbound'].id)).find((b) => b.kind === 'missing_at_provider');
    expect(superseded).toMatchObject({ status: 'RESOLVED', resolution: 'superseded', ourId: expect.stringMatching(/^dep_/), differenceCents: '120000' });
    expect(byKind('breb-inbound', today, 'value_date_mismatch')).toMatchObject({
      ourId: superseded.ourId,
      providerId: ids.i1,
      status: 'OPEN',
      differenceCents: '0',
    });
    expect(await exceptionOf(superseded.key)).toMatchObject({ status: 'RESOLVED', kind: 'MISSING_AT_PROVIDER', rail: 'BREB' });

    // A re-run of the same reports opens nothing new.
    for (const rail of ['breb', 'ach', 'pse'] as const) {
      const again = await reconcile(rail, D);
      expect(again.status).toBe('RECONCILED');
      expect(again.breaks.opened).toBe(0);
      expect(again.breaks.total).toBe(runs[rail].breaks.total);
    }
    await expectInvariants();

    // Every open break is a money exception with both sides.
    const exc: Record<string, any> = {};
    for (const [name, rail, kind] of [
      ['amount', 'breb', 'amount_mismatch'],
      ['missing', 'ach', 'missing_at_provider'],
      ['status', 'ach', 'status_mismatch'],
      ['duplicate', 'pse', 'duplicate'],
      ['extra', 'pse', 'missing_in_our_books'],
    ] as const) {
      const b = byKind(rail, D, kind);
      exc[name] = await exceptionOf(b.key);
      expect(exc[name]).toMatchObject({
        status: 'OPEN',
        kind: kind.toUpperCase(),
        resourceId: b.key,
        actions: expect.arrayContaining(['accept_provider', 'explain', 'rerun']),
      });
    }
    exc.late = await exceptionOf(byKind('breb-inbound', today, 'value_date_mismatch').key);
    expect(exc.amount.ours).toMatchObject({ amountCents: '150000', ourId: ids.b1, status: 'COMPLETED' });
    expect(exc.amount.theirs).toMatchObject({ amountCents: '150500' });
    expect(exc.extra.companyId).toBe('');

    // Re-run while the provider still reports the difference: still there, still OPEN.
    const still = await resolve(exc.missing.id, 'rerun', 'El proveedor dice que corrigió el reporte');
    expect(still.status).toBe(409);
    expect(still.body.error).toBe('BREAK_STILL_PRESENT');
    expect((await exceptionOf(exc.missing.resourceId)).status).toBe('OPEN');
    // The provider corrects its report: the re-run resolves it.
    expect((await sandbox('DELETE', `/sandbox/reports/ach/${D}/discrepancies/${dsc.missing}`)).status).toBe(200);
    const rerun = await resolve(exc.missing.id, 'rerun', 'Reporte corregido por el proveedor');
    expect(rerun.status).toBe(200);
    expect(rerun.body).toMatchObject({ status: 'RESOLVED', action: 'rerun' });

    // Accept the provider's side: a correcting entry against the clearing account, once.
    for (const name of ['amount', 'duplicate', 'extra']) {
      const r = await resolve(exc[name].id, 'accept_provider', `Aceptado según el reporte del proveedor (${name})`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ status: 'RESOLVED', action: 'accept_provider' });
      const twice = await resolve(exc[name].id, 'explain', 'otra acción');
      expect(twice.status).toBe(409);
      expect(twice.body.error).toBe('EXCEPTION_NOT_OPEN');
    }
    const adjustments = await sql.query(`select count(*)::int as n from ledger.postings where kind = 'recon_adjustment'`);
    expect(adjustments.rows[0].n).toBe(3);

    // Explained with a note: no entry.
    for (const name of ['status', 'late']) {
      const r = await resolve(exc[name].id, 'explain', 'Diferencia revisada con el proveedor: el pago sí salió');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ status: 'RESOLVED', action: 'explain', note: 'Diferencia revisada con el proveedor: el pago sí salió' });
    }
    for (const e of Object.values(exc)) expect((await exceptionOf(e.resourceId)).status).toBe('RESOLVED');
    expect((await stack.admin('GET', `/admin/reconciliations/${runs.ach.id}/breaks?status=OPEN`)).body.items).toEqual([]);

    // The clearing accounts are reconciled: the invariants' clearing line holds (ledger = reports − explained differences).
    await expectInvariants();
  }, 240_000);

  it('refuses bad input and reads unknown runs as not found', async () => {
    for (const body of [
      {},
      { rail: 'swift', date: D },
      { rail: 'breb', date: '2025-02-30' },
      { rail: 'breb', date: bogotaDate(Date.now() + 3 * 86_400_000) },
      { rail: 'breb', date: D, extra: 1 },
      { rail: 7, date: D },
    ]) {
      const r = await stack.admin('POST', '/admin/reconciliations', body);
      expect([400, 422]).toContain(r.status);
      expect(r.body).toMatchObject({ error: expect.any(String), message: expect.any(String) });
    }
    expect((await stack.http('POST', '/admin/reconciliations', { token: co.writeKey, body: { rail: 'breb', date: D } })).status).toBe(403);
    const nf = await stack.admin('GET', '/admin/reconciliations/run_00000000000000000000000000000000');
    expect(nf.status).toBe(404);
    expect(nf.body.error).toBe('RECONCILIATION_NOT_FOUND');
    expect((await stack.admin('GET', '/admin/reconciliations/nope')).status).toBe(404);
    const listed = await stack.admin('GET', `/admin/reconciliations?rail=breb&date=${D}`);
    expect(listed.status).toBe(200);
    expect(listed.body.items.length).toBeGreaterThanOrEqual(2);
    expect(listed.body.items.every((r: any) => r.rail === 'breb' && r.date === D)).toBe(true);
  }, 60_000);
});
