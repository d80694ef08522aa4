import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { AppError, Database, createAsyncClient, createLogger, devMeshTls } from '@wallet/platform';
import { Choreography, createTestDatabase, deleteNamespaceStreams, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { ledgerV1 } from '@wallet/proto';
import { startLedger } from '@wallet/ledger/testing';
import { GrpcClearingLedger } from '../src/adapters/ledger.client.js';
import { ResolveReconciliationException } from '../src/app/exceptions.js';
import type { ClearingLedger, ReconciliationDeps } from '../src/app/deps.js';
import type { OurRecords } from '../src/app/ports.js';
import type { Break, OurRecord } from '../src/domain/matching.js';
import { BreakStore, RECONCILIATION_SCHEMA, RunStore, SqlBreakSink, reconciliationExceptions } from '../src/persistence/reconciliation.store.js';
import { reconciliationMigrations } from '../src/persistence/migrations/index.js';

/**
 * One correction per external movement (docs/reconciliation.md "One case per external movement") under every interleaving fast-check's scheduler explores, over
 * the real reconciliation use case and store, real Postgres and the real ledger over gRPC:
 *
 * 1. One payout the rail made after we released it (ours FAILED, the provider's report COMPLETED: a
 *    status break of +A). Three actors race: the rail's late outcome (the owner opens its money
 *    exception RAIL_COMPLETED_AFTER_RELEASE), the owner's operator (write-off, when that exception
 *    is open) and the reconciliation's operator (accept_provider on the break). Then whoever was
 *    refused tries again. Whatever the order: the movement has exactly one live correcting entry,
 *    rail_clearing moved by A once, and both cases are resolved.
 * 2. A break whose difference the provider corrects (+50,000 → +10,000) while an operator accepts it:
 *    a run refreshing the break races accept_provider. After a last run: the live adjustment is the
 *    report's difference, never the stale one.
 *
 * INTERLEAVING_RUNS (default 15) schedules each; INTERLEAVING_SEED / INTERLEAVING_PATH replay one.
 */
const RUNS = Number(process.env.INTERLEAVING_RUNS ?? 15);
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const A = 77_700n;
const exploration = (): fc.Parameters<unknown> => ({
  numRuns: RUNS,
  ...(process.env.INTERLEAVING_SEED ? { seed: Number(process.env.INTERLEAVING_SEED) } : {}),
  ...(process.env.INTERLEAVING_PATH ? { path: process.env.INTERLEAVING_PATH } : {}),
  endOnFailure: true,
});

describe('one correction per peso: deterministic interleavings (fast-check scheduler)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let namespace: string;
  let ledger: Awaited<ReturnType<typeof startLedger>>;
  let clearing: GrpcClearingLedger;
  let owners: ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>>;
  const log = createLogger('recon-interleavings', 'silent');

  beforeAll(async () => {
    tdb = await createTestDatabase('recon_il');
    namespace = testNamespace();
    ledger = await startLedger({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'silent' });
    db = await Database.open({ url: tdb.url, schema: RECONCILIATION_SCHEMA, migrations: reconciliationMigrations, logger: log, poolMax: 6 });
    await db.migrate();
    clearing = new GrpcClearingLedger(ledger.address, devMeshTls('reconciliation'));
    // The owner's correcting entries are posted by the transfer service.
    owners = createAsyncClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, ledger.address, {
      mesh: { tls: devMeshTls('transfer'), server: 'ledger' },
    });
  }, 120_000);
  afterAll(async () => {
    clearing?.close();
    owners?.close();
    await db?.close();
    await ledger?.stop();
    await deleteNamespaceStreams(NATS_URL, namespace);
    await tdb?.drop();
  });

  const sum = async (sql: string, params: unknown[]) => BigInt((await db.query<{ s: string }>(sql, params))[0]!.s);
  const clearingMoved = (movement: string) =>
    sum(
      `select coalesce(sum(e.amount), 0)::text as s from ledger.entries e join ledger.postings p on p.id = e.posting_id
      where p.corrects = ? and e.account = 'rail_clearing:BREB'`,
      [movement],
    );
  const liveCorrections = (movement: string) =>
    sum(
      `select (count(*) filter (where reverses_posting_id is null) - count(*) filter (where reverses_posting_id is not null))::text as s
       from ledger.postings where corrects = ?`,
      [movement],
    );
  const registerLive = (movement: string) => sum(`select count(*)::text as s from ledger.corrections where movement = ? and reversed_by is null`, [movement]);

  /** A RECONCILED run of `date` that found `breaks` (through the real sink); the breaks' exceptions. */
  async function runFinding(date: string, breaks: Break[]): Promise<void> {
    const runs = new RunStore(db);
    const { run } = await runs.start('breb', date);
    await new SqlBreakSink(db, run.id).open(breaks);
    await runs.finish(run.id, {
      outcome: 'RECONCILED',
      report: { lines: breaks.length, amountCents: 0n, feeCents: 0n, netCents: 0n },
      ours: { count: 0, amountCents: 0n, netCents: 0n },
      matched: { count: 0, amountCents: 0n },
      breaks: { total: breaks.length, opened: breaks.length, byKind: {} },
    } as never);
  }
  const exceptionOfBreak = async (key: string) =>
    (await db.query<{ id: string; status: string }>(`select id, status from reconciliation.money_exceptions where resource_id = ?`, [key]))[0]!;
  const uniqueDate = () => {
    const d = new Date(Date.UTC(2000, 0, 1) + Math.floor(Math.random() * 9000) * 86_400_000);
    return d.toISOString().slice(0, 10);
  };

  /** A Bre-B payout the rail reports COMPLETED while ours is `ours`: a status break of +amount found by a run of `date`; its key and exception. */
  async function statusBreak(date: string, transferId: string, ours: string, amount: bigint): Promise<{ key: string; breakCase: string }> {
    const key = `breb:${date}:status_mismatch:brb_${transferId.slice(0, 8)}`;
    await runFinding(date, [
      {
        key,
        kind: 'status_mismatch',
        rail: 'breb',
        date,
        ourId: transferId,
        providerId: `brb_${transferId.slice(0, 8)}`,
        ours: { ourId: transferId, status: ours, amountCents: amount.toString() } as never,
        theirs: { status: 'COMPLETED', amountCents: amount.toString() } as never,
        differenceCents: amount,
      } as Break,
    ]);
    return { key, breakCase: (await exceptionOfBreak(key)).id };
  }

  function useCase(c: Choreography, ours: OurRecords): ResolveReconciliationException {
    const deps: ReconciliationDeps = {
      day: undefined as never,
      runs: new RunStore(db),
      breaks: c.wrap('breaks', new BreakStore(db), ['get', 'resolve', 'markAdjusted']),
      exceptions: reconciliationExceptions(db),
      ledger: c.wrap<ClearingLedger>(
        'ledger',
        { postClearingAdjustment: (a) => clearing.postClearingAdjustment(a), reverseCorrection: (a) => clearing.reverseCorrection(a) },
        ['postClearingAdjustment', 'reverseCorrection'],
      ),
      ours: c.wrap('owner', ours, ['find']),
      decodeCursor: () => undefined,
      log,
    };
    return new ResolveReconciliationException(deps);
  }

  it("1: a late rail outcome, the owner's write-off and accept_provider on one payout: one correction, A once, both cases resolved", async () => {
    const company = randomUUID();
    let choreo: Choreography | undefined;
    const schedules = fc.scheduler({
      act: Choreography.act(() => choreo),
    });
    await fc.assert(
      fc.asyncProperty(schedules, async (s) => {
        const c = new Choreography(s);
        choreo = c;
        const transferId = randomUUID();
        const movement = `breb:our:${transferId}`;
        const date = uniqueDate();
        const { key, breakCase } = await statusBreak(date, transferId, 'FAILED', A);

        // The owner (the transfer service), in memory: its record and its money exception.
        const owner = { exception: null as null | { id: string; status: 'OPEN' | 'RESOLVED' } };
        const record = (): OurRecord => ({
          ourId: transferId,
          providerId: `brb_${transferId.slice(0, 8)}`,
          status: 'FAILED',
          amountCents: A,
          settledAt: `${date}T15:00:00.000Z`,
          ...(owner.exception?.status === 'OPEN' ? { openExceptionId: owner.exception.id } : {}),
        });
        const ours: OurRecords = {
          settled: async function* () {
            /* unused */
          },
          find: async () => [record()],
        };
        const writeOff = async (): Promise<'done' | 'nothing'> => {
          const e = owner.exception;
          if (!e || e.status !== 'OPEN') return 'nothing';
          await c.point('owner: write_off');
          try {
            await owners.postCorrection(
              {
                idempotencyKey: `exception:${e.id}:write_off`,
                type: ledgerV1.CorrectionType.WRITE_OFF_PAYOUT,
                rail: ledgerV1.Rail.BREB,
                amount: A,
                reason: `${e.id}: paid after release`,
                movement,
                caseId: e.id,
              },
              { companyId: company, requestId: randomUUID() },
            );
          } catch (err) {
            // The break's accept_provider corrected it first: the operator dismisses the owner's case.
            if (!(err instanceof AppError && err.code === 'MOVEMENT_ALREADY_CORRECTED')) throw err;
          }
          e.status = 'RESOLVED';
          return 'done';
        };
        const accept = async (): Promise<'done' | 'refused'> => {
          try {
            await useCase(c, ours).execute({ id: breakCase, action: 'accept_provider', note: 'El proveedor pagó', resolvedBy: 'operator:recon' });
            return 'done';
          } catch (err) {
            if (err instanceof AppError && err.code === 'CASE_NOT_FINAL') return 'refused';
            throw err;
          }
        };

        const results = await Promise.all([
          c.actor('rail', async () => {
            await c.point('late COMPLETED');
            owner.exception = { id: `exc_${randomUUID().replace(/-/g, '')}`, status: 'OPEN' };
          }),
          c.actor('owner operator', async () => {
            await c.point('looks');
            return writeOff();
          }),
          c.actor('recon operator', async () => {
            await c.point('opens the break');
            return accept();
          }),
          (async () => {
            await c.finish();
          })(),
        ]);
        // Whoever had nothing to do or was refused tries once more, now that the others are done.
        if (owner.exception?.status === 'OPEN') await writeOff();
        if (results[2] === 'refused') expect(await accept()).toBe('done');

        expect(await liveCorrections(movement)).toBe(1n);
        expect(await registerLive(movement)).toBe(1n);
        expect(await clearingMoved(movement)).toBe(A);
        expect((await exceptionOfBreak(key)).status).toBe('RESOLVED');
        expect(owner.exception?.status).toBe('RESOLVED');
        const [b] = await db.query<{ resolution: string }>(`select resolution from reconciliation.breaks where break_key = ?`, [key]);
        expect(['accept_provider', 'linked']).toContain(b!.resolution);
        const rpc = await createAsyncClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, ledger.address, {
          mesh: { tls: devMeshTls('ops'), server: 'ledger' },
        }).checkInvariants({}, { requestId: randomUUID() });
        expect(rpc.violations).toEqual([]);
      }),
      exploration(),
    );
  }, 300_000);

  it("accept_provider waits while the owner's record is PENDING or owes a money step (a status break against a transfer not final yet), then posts once", async () => {
    const transferId = randomUUID();
    const date = uniqueDate();
    const { key, breakCase } = await statusBreak(date, transferId, 'PENDING', 5_000n);
    let owner: Partial<OurRecord> = { status: 'PENDING', settledAt: null };
    const ours: OurRecords = {
      settled: async function* () {
        /* unused */
      },
      find: async () => [{ ourId: transferId, providerId: null, amountCents: 5_000n, status: 'PENDING', settledAt: null, ...owner } as OurRecord],
    };
    const free = new Choreography({ schedule: (p) => p, waitFor: (p) => p });
    const accept = () => useCase(free, ours).execute({ id: breakCase, action: 'accept_provider', note: 'El proveedor pagó', resolvedBy: 'operator:recon' });
    for (const [state, reason] of [
      [{ status: 'PENDING', settledAt: null }, 'pending'],
      [{ status: 'FAILED', settledAt: `${date}T15:00:00.000Z`, stepOwed: true }, 'step_owed'],
    ] as const) {
      owner = state as Partial<OurRecord>;
      const refused = await accept().then(
        () => undefined,
        (e: unknown) => e as AppError,
      );
      expect(refused).toMatchObject({ code: 'CASE_NOT_FINAL', details: { reason } });
      expect((await exceptionOfBreak(key)).status).toBe('OPEN');
    }
    expect(await liveCorrections(`breb:our:${transferId}`)).toBe(0n);
    owner = { status: 'FAILED', settledAt: `${date}T15:00:00.000Z` };
    await accept();
    expect(await liveCorrections(`breb:our:${transferId}`)).toBe(1n);
    expect(await clearingMoved(`breb:our:${transferId}`)).toBe(5_000n);
  });

  it("2: a run refreshing a break's difference races accept_provider: after the next run the live adjustment is the report's difference", async () => {
    let choreo: Choreography | undefined;
    const schedules = fc.scheduler({
      act: Choreography.act(() => choreo),
    });
    await fc.assert(
      fc.asyncProperty(schedules, async (s) => {
        const c = new Choreography(s);
        choreo = c;
        const transferId = randomUUID();
        const movement = `breb:our:${transferId}`;
        const date = uniqueDate();
        const key = `breb:${date}:amount_mismatch:brb_${transferId.slice(0, 8)}`;
        const found = (diff: bigint): Break =>
          ({
            key,
            kind: 'amount_mismatch',
            rail: 'breb',
            date,
            ourId: transferId,
            providerId: `brb_${transferId.slice(0, 8)}`,
            ours: { ourId: transferId, status: 'COMPLETED', amountCents: '200000' } as never,
            theirs: { status: 'COMPLETED', amountCents: (200_000n + diff).toString() } as never,
            differenceCents: diff,
          }) as Break;
        await runFinding(date, [found(50_000n)]);
        const breakCase = (await exceptionOfBreak(key)).id;
        const ours: OurRecords = {
          settled: async function* () {
            /* unused */
          },
          find: async () => [
            { ourId: transferId, providerId: `brb_${transferId.slice(0, 8)}`, status: 'COMPLETED', amountCents: 200_000n, settledAt: `${date}T15:00:00.000Z` },
          ],
        };
        const sink = c.wrap('run', { open: (b: Break[]) => runFinding(date, b) }, ['open']);
        await Promise.all([
          c.actor('corrected report', () => sink.open([found(10_000n)])),
          c.actor('recon operator', async () => {
            await c.point('opens the break');
            await useCase(c, ours)
              .execute({ id: breakCase, action: 'accept_provider', note: 'Aceptado', resolvedBy: 'operator:recon' })
              .catch((err: unknown) => {
                if (!(err instanceof AppError && err.code === 'EXCEPTION_NOT_OPEN')) throw err;
              });
          }),
          (async () => {
            await c.finish();
          })(),
        ]);
        // The next run of the day (the provider's +10,000 still there), then its undoing step; the
        // operator accepts whatever is open again.
        await runFinding(date, [found(10_000n)]);
        const free = new Choreography({ schedule: (p) => p, waitFor: (p) => p });
        const uc = useCase(free, ours);
        const { reverseAdjustments } = await import('../src/app/exceptions.js');
        await reverseAdjustments({ breaks: new BreakStore(db), ledger: clearing, log });
        if ((await exceptionOfBreak(key)).status === 'OPEN')
          await uc.execute({ id: breakCase, action: 'accept_provider', note: 'Aceptado de nuevo', resolvedBy: 'operator:recon' });

        expect(await liveCorrections(movement)).toBe(1n);
        expect(await clearingMoved(movement)).toBe(10_000n);
        const [b] = await db.query<{ status: string; adjusted: string; state: string }>(
          `select status, adjusted_cents::text as adjusted, adjustment_state as state from reconciliation.breaks where break_key = ?`,
          [key],
        );
        expect(b).toEqual({ status: 'RESOLVED', adjusted: '10000', state: 'POSTED' });
        if (process.env.TRACE) console.log(c.trace.join(' / '));
      }),
      exploration(),
    );
  }, 300_000);
});
