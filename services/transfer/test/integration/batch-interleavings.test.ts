import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { AppError, createLogger, devMeshTls } from '@wallet/platform';
import { Choreography } from '@wallet/platform/testing';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import { BatchSweeper } from '../../src/app/batch-sweeper.js';
import type { BatchDeps } from '../../src/app/deps.js';
import { CreateBatch } from '../../src/app/create-batch.js';
import { transferDeps } from '../../src/app/deps.js';
import type { BatchStore, LedgerPort, TransferStore } from '../../src/app/ports.js';
import { Sweeper } from '../../src/app/sweeper.js';
import { batchUseCases, transferUseCases, type TransferUseCases } from '../../src/app/use-cases.js';
import { SqlApprovalStore } from '../../src/persistence/approval.store.js';
import { SqlBatchStore } from '../../src/persistence/batch.store.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import { Rail, ctxOf, expectLedgerOk, newCompany, sagaSettings, startHarness, testProtection, type CompanySetup, type Harness } from './harness.js';
import type { TransferRecord } from '../../src/domain/transfer.js';
import { sagaViolations } from './saga-invariants.js';
import { KEY, ScriptedRail, directory } from './interleaving-support.js';

/**
 * Bulk payouts under every interleaving fast-check's scheduler explores, over the real use-case code,
 * the real ledger (ReserveBatch) over gRPC and real Postgres: the execute request, a client retrying
 * it at once, two batch sweepers and a transfer sweeper acting as stalled replicas (lease 0: each may
 * take over at any point, as after a crash), a ReserveBatch whose reply is lost while it still lands
 * (later, at a time the scheduler picks), and a rail that pays or fails each item and calls back.
 * After each schedule: the send saga's cross-service invariants per item, every item dispatched to
 * the rail at most once as a payment (the rail pays each id once), the batch's state agreeing with
 * its items, and the wallet equal to its funding less what the rail paid.
 *
 * INTERLEAVING_RUNS (default 30) schedules; INTERLEAVING_SEED / INTERLEAVING_PATH replay one.
 */
const RUNS = Number(process.env.INTERLEAVING_RUNS ?? 30);
const SECRET = 'batch-interleavings-callback-secret';

interface Scenario {
  /** ReserveBatch answered, or its reply lost at the request while it still lands later. */
  reserve: 'normal' | 'lost-reply';
  /** The wallet covers the whole batch, or not (the reserve is refused, nothing held). */
  funded: boolean;
  /** Items whose amount the rail fails. */
  failing: number;
  retry: boolean;
  ticks: [number, number, number];
}

/** The real ledger over gRPC with every call passed through, one of them (reserveBatch) replaceable. */
function passThroughLedger(real: GrpcLedger, reserveBatch?: LedgerPort['reserveBatch']): LedgerPort {
  return {
    computeFees: (...a) => real.computeFees(...a),
    computeFeesBatch: (...a) => real.computeFeesBatch(...a),
    balances: (...a) => real.balances(...a),
    reserve: (...a) => real.reserve(...a),
    reserveBatch: reserveBatch ?? ((...a) => real.reserveBatch(...a)),
    commit: (...a) => real.commit(...a),
    release: (...a) => real.release(...a),
    setMovementStatus: (...a) => real.setMovementStatus(...a),
    setMovementStatuses: (...a) => real.setMovementStatuses(...a),
    voidReserve: (...a) => real.voidReserve(...a),
    writeOffPayout: (...a) => real.writeOffPayout(...a),
  };
}

/**
 * The batch machinery of one schedule over the real stores: the stores and the ledger wrapped so the
 * named calls are scheduling points, a scripted rail, the runner, two batch sweepers and a transfer
 * sweeper (lease 0: each may take over at any point, as after a crash), and a validated 3-item batch.
 */
async function raceStack(
  h: Harness,
  c: Choreography,
  co: CompanySetup,
  o: {
    ledger: LedgerPort;
    ledgerPoints: Array<keyof LedgerPort>;
    batchPoints: Array<keyof BatchStore>;
    outcome: (t: TransferRecord) => 'COMPLETED' | 'FAILED';
    amounts: bigint[];
  },
) {
  const store = c.wrap('store', new SqlTransferStore(h.transfer!.db, testProtection) as TransferStore, ['transition'], false);
  const batches = c.wrap('batches', new SqlBatchStore(h.transfer!.db, testProtection) as BatchStore, o.batchPoints, false);
  const ledger = c.wrap('ledger', o.ledger, o.ledgerPoints);
  let uc: TransferUseCases | undefined;
  const rails = new ScriptedRail(c, () => uc!, { secret: SECRET, callbacks: 1, outcome: o.outcome });
  const base = transferDeps({
    store,
    approvals: new SqlApprovalStore(h.transfer!.db, testProtection),
    ledger,
    directory,
    rails,
    settings: sagaSettings(SECRET),
    log: createLogger('batch-interleavings', process.env.TEST_LOG_LEVEL ?? 'silent'),
    eventsWritten: () => undefined,
    destinationFingerprint: (d) => testProtection.destinationFingerprint(d),
  });
  uc = transferUseCases(base);
  const deps: BatchDeps = {
    ...base,
    batches,
    batchSettings: { dispatchConcurrency: 2, lookupConcurrency: 2, fundingLeaseMs: 0, pollMs: 0, awaitDispatch: true },
  };
  const batchUc = batchUseCases(deps, uc.saga);
  const runner = batchUc.runner;
  const batchSweepers = [0, 1].map(() => new BatchSweeper(deps, runner, { intervalMs: 3_600_000, batch: 5, leaseMs: 0 }));
  const transferSweeper = new Sweeper(base, uc.saga, { intervalMs: 3_600_000, batch: 10, leaseMs: 0 });
  // The batch is validated before the race (validation moves nothing).
  const created = await new CreateBatch(deps).execute({ companyId: co.id }, co.profile, {
    mode: 'ALL',
    source: 'JSON',
    requestHash: randomUUID(),
    items: o.amounts.map((amount, i) => ({
      seq: i + 1,
      line: 0,
      send: {
        amount,
        brebKey: { type: 'PHONE', value: KEY.keyValue },
        targetName: KEY.recipient.fullName,
        targetDocument: KEY.recipient.idValue,
        reference: `item-${i + 1}`,
      },
    })),
  });
  expect(created.batch.state).toBe('VALIDATED');
  const tick = (label: string, n: number, f: () => Promise<unknown>) =>
    c.actor(label, async () => {
      for (let i = 0; i < n; i++) {
        await c.point(`tick ${i + 1}`);
        await f();
      }
    });
  /** The three sweepers as actors, `ticks` times each; then, once nobody else runs, the sweepers settle what is left. */
  const sweep = (ticks: [number, number, number]) => {
    void tick('batch-sweeper-1', ticks[0], () => batchSweepers[0]!.tick());
    void tick('batch-sweeper-2', ticks[1], () => batchSweepers[1]!.tick());
    void tick('transfer-sweeper', ticks[2], () => transferSweeper.tick());
  };
  const settle = async () => {
    await c.finish();
    // (The rail's settlements those ticks start are actors too: `finish` drives them to the end.)
    for (let i = 0; i < 6; i++) {
      await batchSweepers[0]!.tick();
      await transferSweeper.tick();
      await c.finish();
    }
  };
  return { batchId: created.batch.id, batchUc, rails, sweep, settle };
}

/** The wallet must be short of exactly what the rail paid (its own truth), with nothing held. */
async function walletProblem(h: Harness, companyId: string, funding: bigint, truth: ReadonlyMap<string, string>): Promise<string | undefined> {
  const w = (await h.ledgerClient.getBalances({ ivaApplicable: false }, ctxOf(companyId))).wallets.find((x) => x.rail === Rail.BREB)!;
  const paidIds = [...truth.entries()].filter(([, v]) => v === 'COMPLETED').map(([id]) => id);
  const paid =
    paidIds.length === 0
      ? 0n
      : BigInt(
          (
            await h.transfer!.db.prepared<{ s: string }>('select coalesce(sum(amount), 0)::text as s from transfer.transfers where id = any($1::uuid[])', [
              paidIds,
            ])
          )[0]!.s,
        );
  return w.pendingOutCents !== 0n || w.availableCents !== funding - paid
    ? `wallet ${w.availableCents}/${w.pendingOutCents}; funded ${funding}, paid ${paid}`
    : undefined;
}

/** Fails a schedule with everything needed to replay and read it. */
function failIfAny(found: string[], sc: object, outcomes: string[], c: Choreography): void {
  if (found.length > 0)
    throw new Error(`${found.join('\n')}\nscenario ${JSON.stringify(sc)}\noutcomes ${outcomes.join('; ')}\npoints in order:\n  ${c.trace.join('\n  ')}`);
}

/** INTERLEAVING_RUNS schedules; INTERLEAVING_SEED / INTERLEAVING_PATH replay one. */
const runsOptions = () => ({
  numRuns: RUNS,
  endOnFailure: true,
  ...(process.env.INTERLEAVING_SEED ? { seed: Number(process.env.INTERLEAVING_SEED) } : {}),
  ...(process.env.INTERLEAVING_PATH ? { path: process.env.INTERLEAVING_PATH } : {}),
});

describe('bulk payouts: deterministic interleavings (fast-check scheduler)', () => {
  let h: Harness;
  let choreo: Choreography | undefined;
  const schedules = fc.scheduler({
    act: Choreography.act(() => choreo),
  });
  let explored = 0;

  beforeAll(async () => {
    h = await startHarness({ transferEnv: { SWEEPER_INTERVAL_MS: '3600000' } });
  }, 60_000);
  afterAll(async () => {
    console.log(`[batch interleavings] ${explored} schedules explored`);
    await h?.stop();
  });

  it(`execute, its retry, stalled sweepers and a lost ReserveBatch reply keep every invariant in ${RUNS} schedules`, async () => {
    const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('transfer'));
    try {
      await fc.assert(
        fc.asyncProperty(
          schedules,
          fc.record({
            reserve: fc.constantFrom<Scenario['reserve']>('normal', 'lost-reply'),
            funded: fc.constantFrom(true, true, false),
            failing: fc.integer({ min: 0, max: 3 }),
            retry: fc.boolean(),
            ticks: fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 })),
          }),
          async (s, sc: Scenario) => {
            const c = new Choreography(s);
            choreo = c;
            explored++;
            const amounts = [10_000n, 20_000n, 30_000n];
            const total = amounts.reduce((a, b) => a + b, 0n);
            const co = await newCompany(h, { breb: sc.funded ? total : total - 1n });
            let replyLost = false;
            const failing = new Set(amounts.slice(0, sc.failing).map(String));
            const { batchId, batchUc, rails, sweep, settle } = await raceStack(h, c, co, {
              amounts,
              batchPoints: ['startExecution', 'transitionTransfers', 'transition', 'leaseDispatchable', 'markDispatched'],
              ledgerPoints: ['reserveBatch', 'voidReserve', 'commit', 'release'],
              ledger: passThroughLedger(ledgerReal, async (...a) => {
                // The first call's reply is lost (it lands later); the calls after it are answered.
                if (sc.reserve === 'normal' || replyLost) return ledgerReal.reserveBatch(...a);
                replyLost = true;
                void c.actor('network', async () => {
                  await c.point('late ReserveBatch lands');
                  await ledgerReal.reserveBatch(...a).catch(() => undefined);
                });
                throw new AppError('SERVICE_UNAVAILABLE', 'deadline exceeded');
              }),
              outcome: (t) => (failing.has(t.amount.toString()) ? 'FAILED' : 'COMPLETED'),
            });
            const outcomes: string[] = [];
            const execute = (label: string) =>
              c.actor(label, async () => {
                await c.point('execute');
                outcomes.push(
                  await batchUc.execute.execute({ companyId: co.id }, co.profile, batchId).then(
                    (b) => `${label}: ${b.state}`,
                    (e: unknown) => `${label}: ${(e as AppError).code ?? String(e)}`,
                  ),
                );
              });
            void execute('request');
            if (sc.retry) void execute('retry');
            sweep(sc.ticks);
            await settle();

            const found = await sagaViolations(h.tdb.url, co.id, rails.truth);
            const [b] = await h.transfer!.db.query<{ state: string }>('select state from transfer.batches where id = ?::uuid', [batchId]);
            const live = await h.transfer!.db.query<{ state: string; n: number }>(
              `select state, count(*)::int as n from transfer.transfers where batch_id = ?::uuid group by state`,
              [batchId],
            );
            const states = Object.fromEntries(live.map((r) => [r.state, r.n]));
            if (sc.funded) {
              const expected = sc.failing === 0 ? 'COMPLETED' : sc.failing === 3 ? 'FAILED' : 'PARTIALLY_FAILED';
              if (b!.state !== expected) found.push(`batch ${b!.state}, expected ${expected}`);
              if (rails.truth.size !== 3) found.push(`the rail got ${rails.truth.size} of 3 items`);
            } else {
              if (b!.state !== 'VALIDATED') found.push(`an unfunded batch is ${b!.state}, expected VALIDATED again`);
              if (rails.truth.size > 0) found.push(`the rail got ${rails.truth.size} items of an unfunded batch`);
              if (Object.keys(states).some((st) => st !== 'REJECTED')) found.push(`an unfunded batch left transfers ${JSON.stringify(states)}`);
            }
            if ((states.RESERVED ?? 0) + (states.RECEIVED ?? 0) + (states.DISPATCHED ?? 0) > 0) found.push(`live transfers left: ${JSON.stringify(states)}`);
            const accepted = live.filter((r) => r.state !== 'REJECTED').reduce((n, r) => n + r.n, 0);
            if (accepted > 3) found.push(`${accepted} accepted transfers for 3 items`);
            const wallet = await walletProblem(h, co.id, sc.funded ? total : total - 1n, rails.truth);
            if (wallet) found.push(wallet);
            failIfAny(found, sc, outcomes, c);
          },
        ),
        runsOptions(),
      );
    } finally {
      ledgerReal.close();
    }
    await expectLedgerOk(h);
  }, 300_000);
  it(`a multi-signature batch: the last signature, a rejection, the deadline and stalled sweepers decide it once in ${RUNS} schedules`, async () => {
    const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('transfer'));
    const signer = (userId: string, role = 'OPERATOR') => ({ userId, email: `${userId}@empresa.co`, role });
    try {
      await fc.assert(
        fc.asyncProperty(
          schedules,
          fc.record({
            reject: fc.boolean(),
            deadline: fc.boolean(),
            ticks: fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 })),
          }),
          async (s, sc) => {
            const c = new Choreography(s);
            choreo = c;
            explored++;
            const amounts = [10_000n, 20_000n, 30_000n];
            const funding = 100_000n;
            const co = await newCompany(h, { breb: funding, multiSig: 2 });
            const { batchId, batchUc, rails, sweep, settle } = await raceStack(h, c, co, {
              amounts,
              batchPoints: [
                'signApproval',
                'rejectApproval',
                'expireApprovalIfDue',
                'transitionTransfers',
                'transition',
                'leaseDispatchable',
                'markDispatched',
              ],
              ledgerPoints: ['setMovementStatuses', 'commit', 'release'],
              ledger: passThroughLedger(ledgerReal),
              outcome: () => 'COMPLETED',
            });
            // Executed before the race (funds held, AWAITING_APPROVAL), with one signature of two.
            // (Outside any actor a point is a no-op: these run straight through.)
            expect((await batchUc.execute.execute({ companyId: co.id }, co.profile, batchId)).state).toBe('AWAITING_APPROVAL');
            await batchUc.sign.execute(co.id, { batchId, signer: signer('first', 'ADMIN') });

            const outcomes: string[] = [];
            const decide = (label: string, f: () => Promise<unknown>) =>
              c.actor(label, async () => {
                await c.point(label);
                outcomes.push(
                  await f().then(
                    () => `${label}: ok`,
                    (e: unknown) => `${label}: ${(e as AppError).code ?? String(e)}`,
                  ),
                );
              });
            void decide('last signature', () => batchUc.sign.execute(co.id, { batchId, signer: signer('second') }));
            if (sc.reject) void decide('rejection', () => batchUc.reject.execute(co.id, { batchId, signer: signer('third'), reason: 'no' }));
            if (sc.deadline) {
              void c.actor('clock', async () => {
                await c.point('the deadline passes');
                await h.transfer!.db.query(`update transfer.approvals set expires_at = now() - interval '1 second' where batch_id = ?::uuid`, [batchId]);
                await h.transfer!.db.query(`update transfer.batches set next_attempt_at = now() where id = ?::uuid and state = 'AWAITING_APPROVAL'`, [batchId]);
              });
            }
            sweep(sc.ticks);
            await settle();

            const found = await sagaViolations(h.tdb.url, co.id, rails.truth);
            const [a] = await h.transfer!.db.query<{ status: string }>('select status from transfer.approvals where batch_id = ?::uuid', [batchId]);
            const [b] = await h.transfer!.db.query<{ state: string }>('select state from transfer.batches where id = ?::uuid', [batchId]);
            const items = (await h.transfer!.db.query<{ state: string }>('select state from transfer.transfers where batch_id = ?::uuid', [batchId])).map(
              (r) => r.state,
            );
            const expected = { APPROVED: ['COMPLETED', 'COMPLETED'], REJECTED: ['FAILED', 'FAILED'], EXPIRED: ['EXPIRED', 'EXPIRED'] }[a!.status as 'APPROVED'];
            if (!expected) found.push(`the approval is still ${a!.status}`);
            else {
              if (b!.state !== expected[0]) found.push(`approval ${a!.status} but the batch is ${b!.state}`);
              if (items.some((st) => st !== expected[1])) found.push(`approval ${a!.status} but items ${items.join(',')}`);
            }
            const won = outcomes.filter((o) => o.endsWith(': ok')).map((o) => o.split(':')[0]);
            if (a!.status === 'APPROVED' && !won.includes('last signature')) found.push(`APPROVED though the signature did not win: ${outcomes.join('; ')}`);
            if (a!.status === 'REJECTED' && !won.includes('rejection')) found.push(`REJECTED though the rejection did not win: ${outcomes.join('; ')}`);
            if (won.length > 1) found.push(`two decisions won: ${outcomes.join('; ')}`);
            if (a!.status !== 'APPROVED' && rails.truth.size > 0) found.push(`the rail got ${rails.truth.size} items of a batch not approved`);
            if (a!.status === 'APPROVED' && rails.truth.size !== 3) found.push(`the rail got ${rails.truth.size} of 3 items of an approved batch`);
            const wallet = await walletProblem(h, co.id, funding, rails.truth);
            if (wallet) found.push(wallet);
            failIfAny(found, sc, outcomes, c);
          },
        ),
        runsOptions(),
      );
    } finally {
      ledgerReal.close();
    }
    await expectLedgerOk(h);
  }, 300_000);
});
