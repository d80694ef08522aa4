import { Database, createLogger } from '@wallet/platform';
import { SpillSorter } from '../src/adapters/spill-sorter.js';
import { ReconcileDay } from '../src/app/reconcile-day.js';
import { reconciliationMigrations } from '../src/persistence/migrations/index.js';
import { RECONCILIATION_SCHEMA, RunStore, SqlBreakSink } from '../src/persistence/reconciliation.store.js';
import type { Break } from '../src/domain/matching.js';
import { D, startBrebDay, type BrebDay } from './support/breb-day.js';

/**
 * ReconcileDay on a real test database (the reconciliation schema, migrated), the real sandbox's
 * Bre-B report and our books as the real transfer service serves them over gRPC (the harness of
 * test/support/breb-day.ts): runs recorded with their outcome, breaks and money exceptions opened
 * once per key, re-runs idempotent, rejected and failed runs recorded with nothing opened.
 */

describe('ReconcileDay: runs, breaks and money exceptions in the reconciliation schema', () => {
  let day: BrebDay;
  let db: Database;
  let runs: RunStore;
  let useCase: ReconcileDay;

  beforeAll(async () => {
    day = await startBrebDay('recon_day', { connectTimeoutMs: 2_000 });
    db = await Database.open({
      url: day.tdb.url,
      schema: RECONCILIATION_SCHEMA,
      migrations: reconciliationMigrations,
      logger: createLogger('recon-day-test', 'silent'),
    });
    expect(await db.migrate()).toEqual(['0001-reconciliation-initial', '0002-reconciliation-service', '0003-one-case-per-movement']);
    runs = new RunStore(db);
    useCase = new ReconcileDay({
      runs,
      source: day.source,
      ours: day.ours,
      sink: (runId) => new SqlBreakSink(db, runId),
      sorter: () => new SpillSorter({ runLines: 2 }),
    });
  }, 120_000);

  afterAll(async () => {
    await db?.close();
    await day?.stop();
  });

  const inject = (body: Record<string, unknown>) => day.inject(body);
  const breaks = () =>
    db.query<{
      break_key: string;
      run_id: string;
      last_seen_run_id: string;
      kind: string;
      status: string;
      our_id: string | null;
      provider_id: string | null;
      ours: Record<string, unknown> | null;
      theirs: Record<string, unknown> | null;
    }>('select * from reconciliation.breaks order by break_key');
  const exceptions = () =>
    db.query<{
      kind: string;
      resource_id: string;
      rail: string;
      company_id: string;
      status: string;
      ours: Record<string, unknown>;
      theirs: Record<string, unknown>;
    }>('select * from reconciliation.money_exceptions order by resource_id');
  let discrepancyRun: string;

  it('a clean Bre-B day: the run is RECONCILED with its counts, no break, no money exception', async () => {
    const run = await useCase.run('breb', D);
    expect(run).toMatchObject({
      rail: 'breb',
      date: D,
      outcome: 'RECONCILED',
      rejectReason: null,
      report: { lines: 2, amountCents: 400_013n, feeCents: 0n },
      ours: { count: 2, amountCents: 400_013n },
      matched: { count: 2, amountCents: 400_013n },
      breaks: { total: 0, opened: 0 },
    });
    expect(run.finishedAt).not.toBeNull();
    expect(await runs.get(run.id)).toEqual(run);
    expect(await breaks()).toEqual([]);
    expect(await exceptions()).toEqual([]);
  });

  it('amount and missing discrepancies: exactly 2 breaks and 2 money exceptions, opened in that run with both sides', async () => {
    await inject({ kind: 'amount', ref: day.ids.ok.provider, amountCents: 150_100 });
    await inject({ kind: 'missing', ref: day.ids.failed.our });
    const run = await useCase.run('breb', D);
    discrepancyRun = run.id;
    expect(run).toMatchObject({
      outcome: 'RECONCILED',
      matched: { count: 0 },
      breaks: { total: 2, opened: 2, byKind: { amount_mismatch: 1, missing_at_provider: 1 } },
    });
    const amountKey = `breb:${D}:amount_mismatch:${day.ids.ok.provider}`;
    const missingKey = `breb:${D}:missing_at_provider:${day.ids.failed.our}`;
    const b = await breaks();
    expect(b.map((x) => x.break_key)).toEqual([amountKey, missingKey].sort());
    const byKey = new Map(b.map((x) => [x.break_key, x]));
    expect(byKey.get(amountKey)).toMatchObject({
      run_id: run.id,
      last_seen_run_id: run.id,
      kind: 'amount_mismatch',
      status: 'OPEN',
      our_id: day.ids.ok.our,
      provider_id: day.ids.ok.provider,
      ours: { ourId: day.ids.ok.our, amountCents: '150000', status: 'COMPLETED' },
      theirs: { providerId: day.ids.ok.provider, amountCents: '150100' },
    });
    expect(byKey.get(missingKey)).toMatchObject({
      run_id: run.id,
      kind: 'missing_at_provider',
      our_id: day.ids.failed.our,
      ours: { ourId: day.ids.failed.our, amountCents: '250013', status: 'FAILED' },
      theirs: null,
    });
    const e = await exceptions();
    expect(e).toHaveLength(2);
    const excByKey = new Map(e.map((x) => [x.resource_id, x]));
    expect(excByKey.get(amountKey)).toMatchObject({
      kind: 'AMOUNT_MISMATCH',
      rail: 'BREB',
      status: 'OPEN',
      ours: { amountCents: '150000' },
      theirs: { amountCents: '150100' },
    });
    expect(excByKey.get(amountKey)!.company_id).not.toBe('');
    expect(excByKey.get(missingKey)).toMatchObject({ kind: 'MISSING_AT_PROVIDER', rail: 'BREB', ours: { ourId: day.ids.failed.our }, theirs: {} });
  });

  it('a third run of the same report opens nothing: still 2 breaks and 2 exceptions, last_seen_run_id moved to it', async () => {
    const run = await useCase.run('breb', D);
    expect(run).toMatchObject({ outcome: 'RECONCILED', breaks: { total: 2, opened: 0 } });
    const b = await breaks();
    expect(b).toHaveLength(2);
    for (const x of b) expect(x).toMatchObject({ run_id: discrepancyRun, last_seen_run_id: run.id });
    expect(await exceptions()).toHaveLength(2);
  });

  it('a trailer discrepancy: the run is REJECTED with its reason, nothing opened or seen', async () => {
    const before = await breaks();
    await inject({ kind: 'trailer', lines: 3 });
    const run = await useCase.run('breb', D);
    expect(run).toMatchObject({ outcome: 'REJECTED', rejectReason: 'TRAILER_MISMATCH', report: null, breaks: null });
    expect(run.detail).toMatch(/\S/);
    expect(await breaks()).toEqual(before);
    expect(await exceptions()).toHaveLength(2);
  });

  it('an unpublished date: the run is FAILED (ReportNotAvailableError, thrown by the source), recorded, nothing opened', async () => {
    const run = await useCase.run('breb', '2999-01-01');
    expect(run).toMatchObject({ rail: 'breb', date: '2999-01-01', outcome: 'FAILED', breaks: null, openedBeforeFailure: 0 });
    expect(run.detail).toMatch(/^ReportNotAvailableError/);
    expect(await runs.get(run.id)).toEqual(run);
  });

  it('the sandbox stopped: the run is FAILED with the fetch error, recorded; every run of the day is listed', async () => {
    await day.stopSandbox();
    const run = await useCase.run('breb', D);
    expect(run).toMatchObject({ outcome: 'FAILED', breaks: null, openedBeforeFailure: 0 });
    expect(run.detail).toMatch(/^ReportFetchError/);
    expect((await runs.list({ rail: 'breb', date: D, limit: 50 })).items.map((r) => r.outcome)).toEqual([
      'FAILED',
      'REJECTED',
      'RECONCILED',
      'RECONCILED',
      'RECONCILED',
    ]);
    expect(await breaks()).toHaveLength(2);
    expect(await exceptions()).toHaveLength(2);
  });

  it('two runs opening the same breaks at once (two replicas, one day): each break and its money exception exactly once', async () => {
    const date = '2025-03-20';
    // A second start of the same day answers the run under way; two sinks (two runs) race on the same breaks anyway.
    const [a, b] = await Promise.all([runs.start('breb', date), runs.start('breb', date)]);
    expect([a.alreadyRunning, b.alreadyRunning].sort()).toEqual([false, true]);
    expect(a.run.id).toBe(b.run.id);
    const other = `run_${'0'.repeat(32)}`;
    const batch: Break[] = Array.from({ length: 25 }, (_, i) => {
      const ourId = `race-${i}`;
      return {
        key: `breb:${date}:missing_at_provider:${ourId}`,
        kind: 'missing_at_provider',
        rail: 'breb',
        date,
        ourId,
        ours: {
          ourId,
          providerId: `brb_race_${i}`,
          status: 'COMPLETED',
          amountCents: 1_000n + BigInt(i),
          providerFeeCents: 0n,
          settledAt: `${date}T15:00:00.000Z`,
          settledDate: date,
          companyId: 'race-co',
        },
        differenceCents: -(1_000n + BigInt(i)),
      };
    });
    const [ra, rb] = await Promise.all([new SqlBreakSink(db, a.run.id).open(batch), new SqlBreakSink(db, other).open(batch.slice().reverse())]);
    expect(ra.opened + rb.opened).toBe(25);
    const rows = await db.query<{ n: number; runs: number }>(
      `select count(*)::int as n, count(distinct run_id)::int as runs from reconciliation.breaks where date = ?`,
      [date],
    );
    expect(rows[0]!.n).toBe(25);
    const exc = await db.query<{ n: number }>(`select count(*)::int as n from reconciliation.money_exceptions where resource_id like ?`, [`breb:${date}:%`]);
    expect(exc[0]!.n).toBe(25);
  });
});
