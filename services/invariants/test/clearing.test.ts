import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { Database, createLogger } from '@wallet/platform';
import { createTestDatabase, deleteNamespaceStreams, policyClient, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { ledgerV1 } from '@wallet/proto';
import { ledgerAccess, startLedger, type StartedLedger } from '@wallet/ledger/testing';
import { checkInvariants, formatReport, selfTest, violationLines, type InvariantReport } from '../src/index.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/**
 * The reconciliation's own migrations (its package's dist). Not a declared dependency: the
 * reconciliation's tests depend on transfer, whose tests depend on this package, so declaring it would
 * make a build cycle; the workspace links every package, and the whole build builds it first.
 */
async function reconciliationMigrations(): Promise<Parameters<typeof Database.open>[0]['migrations']> {
  const pkg = '@wallet/reconciliation';
  return ((await import(pkg)) as { reconciliationMigrations: Parameters<typeof Database.open>[0]['migrations'] }).reconciliationMigrations;
}

/**
 * The `clearing` line of `npm run ledger:check` on real Postgres: a real ledger (its migrations, its
 * PostClearingAdjustment over mutual TLS as the reconciliation), the reconciliation's schema made by its
 * own migrations (Database.migrate(), which also creates its read-only role), and the checker reading
 * both in one snapshot through the read-only roles. Ledger movement is placed on chosen Bogotá days by
 * writing postings with their created_at (balanced, like the ledger writes them).
 */
describe("clearing: the ledger's clearing accounts against the providers' reports", () => {
  let tdb: TestDatabase;
  let ledger: StartedLedger;
  let namespace: string;
  let client: pg.Client;
  let ledgerClient: ReturnType<typeof policyClient<ledgerV1.LedgerServiceServer>>;

  beforeAll(async () => {
    tdb = await createTestDatabase('invclearing');
    namespace = testNamespace();
    ledger = await startLedger({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'silent' });
    ledgerClient = policyClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, ledger.address, 'ledger', ledgerAccess, 15_000);
    client = new pg.Client({ connectionString: tdb.url });
    await client.connect();
  });
  afterAll(async () => {
    ledgerClient?.close();
    await client?.end();
    await ledger?.stop();
    await deleteNamespaceStreams(NATS_URL, namespace);
    await tdb?.drop();
  });

  const check = (): Promise<InvariantReport> => checkInvariants(client, { only: ['clearing', 'journal'], partial: true, rail: 'none' });
  const clearingOf = (r: InvariantReport) => r.checks.find((c) => c.name === 'clearing')!;
  const countOf = (r: InvariantReport, label: string) => clearingOf(r).counts.find(([k]) => k === label)?.[1];

  /** A posting on `account` at `at` (UTC), balanced against operational_losses, as the ledger writes one. */
  async function book(account: string, amount: bigint, at: string): Promise<void> {
    const id = randomUUID();
    await client.query(
      `insert into ledger.postings (id, idempotency_key, request_hash, kind, company_id, rail, created_at)
      values ($1, $2, 'test', 'correction', 'co-test', 'BREB', $3::timestamptz)`,
      [id, `test:${id}`, at],
    );
    await client.query(`insert into ledger.entries (posting_id, seq, account, amount) values ($1, 1, $2, $3), ($1, 2, 'operational_losses', $4)`, [
      id,
      account,
      amount.toString(),
      (-amount).toString(),
    ]);
  }
  const runId = () => `run_${randomBytes(16).toString('hex')}`;
  async function run(rail: string, date: string, status: string, net: bigint | null, startedAt = 'now()'): Promise<string> {
    const id = runId();
    await client.query(
      `insert into reconciliation.runs (id, rail, date, status, outcome, started_at, finished_at, report_net_cents, ours_net_cents, covers_until)
      values ($1, $2, $3::date, $4, $5, ${startedAt}, case when $4 = 'RUNNING' then null else now() end, $6, 0,
              least(${startedAt}, (($3::date + 1)::timestamp + interval '5 hours') at time zone 'UTC'))`,
      [id, rail, date, status, status === 'RUNNING' ? null : status, net?.toString() ?? null],
    );
    return id;
  }
  /** A break as the reconciliation writes one: the movement it is about and its case (money exception). */
  interface BreakRef {
    key: string;
    movement: string;
    caseId: string;
  }
  async function breakOf(rail: string, date: string, run: string, difference: bigint, status = 'OPEN', resolution: string | null = null): Promise<BreakRef> {
    const id = randomBytes(8).toString('hex');
    const inbound = rail === 'breb-inbound';
    const key = `${rail}:${date}:amount_mismatch:${inbound ? `prov_${id}` : `our_${id}`}${rail === 'pse' ? ':payment' : ''}`;
    const movement = inbound ? `breb-inbound:prov_${id}` : `${rail}:our:our_${id}${rail === 'pse' ? ':payment' : ''}`;
    const caseId = `exc_${randomBytes(16).toString('hex')}`;
    await client.query(
      `insert into reconciliation.breaks (break_key, run_id, last_seen_run_id, kind, rail, date, status, resolution, resolved_at, difference_cents,
                                          our_id, provider_id, exception_id, movement)
      values ($1, $2, $2, 'amount_mismatch', $3, $4::date, $5, $6, case when $5 = 'RESOLVED' then now() end, $7, $8, $9, $10, $11)`,
      [key, run, rail, date, status, resolution, difference.toString(), inbound ? null : `our_${id}`, inbound ? `prov_${id}` : null, caseId, movement],
    );
    return { key, movement, caseId };
  }
  /**
   * The break accepted on the provider's side, as the reconciliation's accept_provider books it: PostClearingAdjustment
   * of the break's movement for its case, then the break remembers the adjustment in force (POSTED). Resolving
   * the break is the caller's step (left OPEN, the difference is counted twice).
   */
  async function adjust(clearing: string, delta: bigint, b: BreakRef): Promise<void> {
    const idempotencyKey = `recon:${b.key}:accept_provider`;
    await ledgerClient.postClearingAdjustment(
      ledgerV1.PostClearingAdjustmentRequest.fromPartial({
        idempotencyKey,
        clearing,
        deltaCents: delta,
        movement: b.movement,
        caseId: b.caseId,
        reason: `${b.key} ${b.caseId}: accepted`,
      }),
      { requestId: randomUUID() },
    );
    await client.query(
      `update reconciliation.breaks set adjustment_key = $2, adjustment_state = 'POSTED', adjustments = 1, adjusted_cents = $3::bigint where break_key = $1`,
      [b.key, idempotencyKey, delta.toString()],
    );
  }

  it('without the reconciliation installed the line is "not checked (no reconciliation)", not a violation', async () => {
    const r = await check();
    expect(violationLines(r)).toEqual([]);
    expect(r.ok).toBe(true);
    expect(clearingOf(r)).toMatchObject({ counts: [], total: 0, notChecked: ['no reconciliation'] });
    expect(formatReport(r)).toMatch(/^clearing +not checked \(no reconciliation\)$/m);
    // The self-test says it skipped the clearing sabotage; it does not claim it caught it.
    const [st] = await selfTest(client, { checks: ['clearing'], partial: true, rail: 'none' });
    expect(st).toMatchObject({ check: 'clearing', caught: false, skipped: 'no reconciliation installed' });
  });

  it('with the reconciliation installed (its migrations) and nothing reconciled: every movement is unreconciled, OK', async () => {
    const db = await Database.open({
      url: tdb.url,
      schema: 'reconciliation',
      migrations: await reconciliationMigrations(),
      logger: createLogger('invariants-test', 'silent'),
      poolMax: 1,
    });
    try {
      expect(await db.migrate()).toEqual(['0001-reconciliation-initial', '0002-reconciliation-service', '0003-one-case-per-movement']);
    } finally {
      await db.close();
    }
    await book('rail_clearing:BREB', 100_000n, '2026-11-20T15:00:00Z'); // Bogotá 2026-11-20 10:00
    await book('rail_clearing:BREB', 50_000n, '2026-11-21T04:30:00Z'); // Bogotá 2026-11-20 23:30 (UTC-5: still the 20th)
    await book('rail_clearing:BREB', 30_000n, '2026-11-21T05:30:00Z'); // Bogotá 2026-11-21 00:30
    await book('pse_settlement', -80_000n, '2026-11-20T20:00:00Z');
    await book('breb_settlement', -7_000n, '2026-11-22T12:00:00Z');
    const r = await check();
    expect(violationLines(r)).toEqual([]);
    expect(countOf(r, 'BREB')).toBe('L 180000 R 0 D 0 U 180000 unreconciled days 2 (2026-11-20 2026-11-21)');
    expect(countOf(r, 'ACH')).toBe('L 0 R 0 D 0 U 0 unreconciled days none');
    expect(countOf(r, 'PSE')).toBe('L -80000 R 0 D 0 U -80000 unreconciled days 1 (2026-11-20)');
    expect(countOf(r, 'BREB-INBOUND')).toBe('L -7000 R 0 D 0 U -7000 unreconciled days 1 (2026-11-22)');
    expect(countOf(r, 'reconciled days')).toBe(0);
  });

  it('a reconciled day with an open break, then the break accepted through PostClearingAdjustment: L − U = R − D throughout', async () => {
    // The provider reported 2,000 more than we booked on the 20th (150,000 ours): an amount_mismatch of +2,000.
    await run('breb', '2026-11-20', 'RECONCILED', 999_999n, `now() - interval '1 hour'`); // an earlier run of the day: the latest counts
    const latest = await run('breb', '2026-11-20', 'RECONCILED', 152_000n);
    await run('breb', '2026-11-20', 'FAILED', null, `now() + interval '1 minute'`); // a later failed run changes nothing
    await run('breb', '2026-11-21', 'RUNNING', null); // under way: the 21st is not reconciled yet
    const key = await breakOf('breb', '2026-11-20', latest, 2_000n);
    let r = await check();
    expect(violationLines(r)).toEqual([]);
    expect(countOf(r, 'BREB')).toBe('L 180000 R 152000 D 2000 U 30000 unreconciled days 1 (2026-11-21)');
    expect(countOf(r, 'outstanding breaks')).toBe(1);

    // Accepted on the provider's side: the ledger books +2,000 (today, but it belongs to the 20th) and the break is resolved.
    await adjust('breb', 2_000n, key);
    await client.query(`update reconciliation.breaks set status = 'RESOLVED', resolution = 'accept_provider', resolved_at = now() where break_key = $1`, [
      key.key,
    ]);
    r = await check();
    expect(violationLines(r)).toEqual([]);
    expect(countOf(r, 'BREB')).toBe('L 182000 R 152000 D 0 U 30000 unreconciled days 1 (2026-11-21)');

    // A break explained by an operator is still outstanding; one gone on a rerun or superseded is not.
    await run('pse', '2026-11-20', 'RECONCILED', -80_500n);
    const pseRun = (await client.query<{ id: string }>(`select id from reconciliation.runs where rail = 'pse' and status = 'RECONCILED'`)).rows[0]!.id;
    await breakOf('pse', '2026-11-20', pseRun, -500n, 'RESOLVED', 'explain');
    await breakOf('pse', '2026-11-20', pseRun, -9_999n, 'RESOLVED', 'rerun');
    await breakOf('pse', '2026-11-20', pseRun, 4_444n, 'RESOLVED', 'superseded');
    r = await check();
    expect(violationLines(r)).toEqual([]);
    expect(countOf(r, 'PSE')).toBe('L -80000 R -80500 D -500 U 0 unreconciled days none');

    // A negative adjustment on ACH: the provider reported 1,234 less than we booked.
    await book('rail_clearing:ACH', 10_000n, '2026-11-22T14:00:00Z');
    const achRun = await run('ach', '2026-11-22', 'RECONCILED', 8_766n);
    const achKey = await breakOf('ach', '2026-11-22', achRun, -1_234n);
    expect(violationLines(await check())).toEqual([]);
    await adjust('ach', -1_234n, achKey);
    await client.query(`update reconciliation.breaks set status = 'RESOLVED', resolution = 'accept_provider' where break_key = $1`, [achKey.key]);
    r = await check();
    expect(violationLines(r)).toEqual([]);
    expect(countOf(r, 'ACH')).toBe('L 8766 R 8766 D 0 U 0 unreconciled days none');
    expect(countOf(r, 'reconciled days')).toBe(3);
    expect(formatReport(r)).toMatch(
      /^clearing +OK +3 reconciled days, 1 outstanding breaks, BREB L 182000 R 152000 D 0 U 30000 unreconciled days 1 \(2026-11-21\), ACH L 8766 /m,
    );
  });

  it('violated: a report that the ledger does not match and no break explains; an adjustment posted twice over is no cover', async () => {
    // The provider says 5,000 more for the 22nd on Bre-B inbound (breb_settlement −7,000 ours) with no break.
    const id = await run('breb-inbound', '2026-11-22', 'RECONCILED', -2_000n);
    let r = await check();
    expect(r.ok).toBe(false);
    expect(violationLines(r)).toEqual([
      '[clearing] BREB-INBOUND (breb_settlement): ledger L − U = -7000 − 0 = -7000, reports R − D = -2000 − 0 = -2000; difference (R − D) − (L − U) = 5000',
    ]);
    expect(formatReport(r)).toMatch(/^clearing +VIOLATED \(1\) /m);
    // The break that explains it makes it hold again.
    const key = await breakOf('breb-inbound', '2026-11-22', id, 5_000n);
    expect(violationLines(await check())).toEqual([]);
    // Accepted in the ledger but left OPEN in the reconciliation: counted twice, caught.
    await adjust('breb-inbound', 5_000n, key);
    r = await check();
    expect(violationLines(r)).toEqual([
      '[clearing] BREB-INBOUND (breb_settlement): ledger L − U = -2000 − 0 = -2000, reports R − D = -2000 − 5000 = -7000; difference (R − D) − (L − U) = -5000',
    ]);
    await client.query(`update reconciliation.breaks set status = 'RESOLVED', resolution = 'accept_provider' where break_key = $1`, [key.key]);
    expect(violationLines(await check())).toEqual([]);
  });

  it('a reconciled run from before migration 0002 (no report_net_cents) leaves its clearing not checked, said', async () => {
    const id = await run('ach', '2026-11-01', 'RECONCILED', null);
    const r = await check();
    expect(violationLines(r)).toEqual([]);
    expect(clearingOf(r).notChecked).toEqual(['ACH (1 reconciled run(s) without report_net_cents)']);
    expect(formatReport(r)).toMatch(/^clearing +OK .*; not checked: ACH \(1 reconciled run\(s\) without report_net_cents\)$/m);
    await client.query('delete from reconciliation.runs where id = $1', [id]);
  });

  it('the self-test plants a clearing violation, catches it and rolls it back; the journal still holds', async () => {
    const before = (await client.query<{ n: number }>('select count(*)::int as n from reconciliation.runs')).rows[0]!.n;
    const [st] = await selfTest(client, { checks: ['clearing'], partial: true, rail: 'none' });
    expect(st).toMatchObject({ check: 'clearing', caught: true });
    expect(st!.skipped).toBeUndefined();
    expect(violationLines(st!.report)).toEqual([
      expect.stringMatching(/^\[clearing\] BREB \(rail_clearing:BREB\): .*difference \(R − D\) − \(L − U\) = \d{9}$/),
    ]);
    expect((await client.query<{ n: number }>('select count(*)::int as n from reconciliation.runs')).rows[0]!.n).toBe(before);
    const r = await check();
    expect(violationLines(r)).toEqual([]);
    expect(r.checks.map((c) => c.name)).toEqual(['journal', 'clearing']);
  });

  it('reads through the read-only role: the reconciliation reader cannot write, nor read the ledger', async () => {
    await client.query('begin');
    try {
      await client.query('set local role wallet_reconciliation_reader');
      await expect(client.query('select count(*) from reconciliation.runs')).resolves.toBeDefined();
      await client.query('savepoint a');
      await expect(client.query('select count(*) from ledger.entries')).rejects.toMatchObject({ code: '42501' });
      await client.query('rollback to savepoint a');
      await expect(client.query(`update reconciliation.runs set report_net_cents = 0`)).rejects.toMatchObject({ code: '42501' });
    } finally {
      await client.query('rollback');
    }
  });
});
