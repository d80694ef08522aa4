import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { AppError, createLogger, signPayload } from '@wallet/platform';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import { transferDeps, type TransferDeps } from '../../src/app/deps.js';
import type { LedgerPort, RailPort, TransferStore } from '../../src/app/ports.js';
import { Sweeper } from '../../src/app/sweeper.js';
import { transferUseCases, type TransferUseCases } from '../../src/app/use-cases.js';
import { SqlApprovalStore } from '../../src/persistence/approval.store.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import { Choreography } from '@wallet/platform/testing';
import { Rail, ctxOf, expectLedgerOk, newCompany, sagaSettings, startHarness, testProtection, type Harness } from './harness.js';
import { sagaViolations } from './saga-invariants.js';
import { ScriptedRail, directory, recordedActor, sendToKey } from './interleaving-support.js';
import { devMeshTls } from '@wallet/platform';

/**
 * The send saga under every interleaving fast-check's scheduler explores, over the real use-case
 * code, the real ledger over gRPC and real Postgres: a request, two sweeper replicas (grace 0 and
 * lease 0, so each acts like a stalled replica whose lease ran out), slow ledger replies, a Reserve
 * that lands after its deadline, and a rail that pays (or fails) and calls back, early, late or twice.
 * After each schedule: the saga's cross-service invariants (saga-invariants.ts) and the ledger's own.
 *
 * INTERLEAVING_RUNS (default 30) schedules; INTERLEAVING_SEED / INTERLEAVING_PATH replay one.
 * A failing schedule is printed with its seed, path and the points in the order they ran.
 */
const RUNS = Number(process.env.INTERLEAVING_RUNS ?? 30);
const SECRET = 'interleavings-callback-secret';

interface Scenario {
  /** The request's reserve: answered normally, or it times out at the request while still landing later. */
  reserve: 'normal' | 'deadline';
  outcome: 'COMPLETED' | 'FAILED';
  callbacks: number;
  /** After its callbacks, the rail reports the opposite outcome: one money exception per such transfer. */
  contradict: boolean;
  ticks: [number, number];
  /** A second send: none, another payment (the balance covers one), or the same request again under the same reference (a client retry). */
  secondSend: 'none' | 'other' | 'same-reference';
  /** The rail's callbacks as pages of outcomes: a COMPLETED one moves in bulk (one ledger CommitBatch). */
  bulkCallbacks: boolean;
}

/** fast-check's options for every property here: RUNS schedules, or the one INTERLEAVING_SEED/PATH names. */
const exploration = (): fc.Parameters<unknown> => ({
  numRuns: RUNS,
  ...(process.env.INTERLEAVING_SEED ? { seed: Number(process.env.INTERLEAVING_SEED) } : {}),
  ...(process.env.INTERLEAVING_PATH ? { path: process.env.INTERLEAVING_PATH } : {}),
  endOnFailure: true,
});

const scenarios: fc.Arbitrary<Scenario> = fc.record({
  reserve: fc.constantFrom('normal', 'normal', 'deadline'),
  outcome: fc.constantFrom('COMPLETED', 'COMPLETED', 'FAILED'),
  callbacks: fc.integer({ min: 1, max: 2 }),
  contradict: fc.constantFrom(false, false, false, true),
  ticks: fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 2 })),
  secondSend: fc.constantFrom('none', 'other', 'same-reference'),
  bulkCallbacks: fc.boolean(),
});

describe('send saga: deterministic interleavings (fast-check scheduler)', () => {
  let h: Harness;
  let choreo: Choreography | undefined;
  /** The scheduler of each run; after each release it waits until every actor is stopped at a point again. */
  const schedules = fc.scheduler({
    act: Choreography.act(() => choreo),
  });
  let explored = 0;
  /** Schedules in which a page of outcomes reached the ledger's CommitBatch (the bulk money step). */
  let bulkCommits = 0;
  const violations: string[] = [];

  beforeAll(async () => {
    // The service instance migrates the schema; its own sweeper is kept out of the way.
    h = await startHarness({ transferEnv: { SWEEPER_INTERVAL_MS: '3600000' } });
  }, 60_000);
  afterAll(async () => {
    console.log(`[interleavings] ${explored} schedules explored (${bulkCommits} with a bulk commit), ${violations.length} violations`);
    await h?.stop();
  });

  /** The use cases' ports over this harness's database, with the store, ledger and rail a test wraps. */
  function depsOf(store: TransferStore, ledger: LedgerPort, rails: RailPort, settings: TransferDeps['settings']): TransferDeps {
    return transferDeps({
      store,
      approvals: new SqlApprovalStore(h.transfer!.db, testProtection),
      ledger,
      directory,
      rails,
      settings,
      log: createLogger('interleavings', process.env.TEST_LOG_LEVEL ?? 'silent'),
      eventsWritten: () => undefined,
      destinationFingerprint: (d) => testProtection.destinationFingerprint(d),
    });
  }

  function build(
    c: Choreography,
    scenario: Pick<Scenario, 'reserve' | 'outcome' | 'callbacks'> & { contradict?: boolean; bulkCallbacks?: boolean },
    ledgerReal: GrpcLedger,
    approvalTtlSeconds = 3600,
  ) {
    const store = c.wrap(
      'store',
      new SqlTransferStore(h.transfer!.db, testProtection) as TransferStore,
      ['transition', 'transitionOnCallbacks', 'finishMany'],
      false,
    );
    const ledger: LedgerPort = c.wrap(
      'ledger',
      {
        computeFees: (...a: Parameters<LedgerPort['computeFees']>) => ledgerReal.computeFees(...a),
        balances: (...a: Parameters<LedgerPort['balances']>) => ledgerReal.balances(...a),
        reserve: async (cmd: Parameters<LedgerPort['reserve']>[0]) => {
          if (scenario.reserve === 'normal') return ledgerReal.reserve(cmd);
          // A gRPC deadline: the request gives up, the call still reaches the ledger, at a time the scheduler picks.
          void c.actor('network', async () => {
            await c.point('late reserve lands');
            await ledgerReal.reserve(cmd).catch(() => undefined);
          });
          throw new AppError('SERVICE_UNAVAILABLE', 'deadline exceeded');
        },
        commit: (...a: Parameters<LedgerPort['commit']>) => ledgerReal.commit(...a),
        commitMany: (...a: Parameters<NonNullable<LedgerPort['commitMany']>>) => ledgerReal.commitMany(...a),
        release: (...a: Parameters<LedgerPort['release']>) => ledgerReal.release(...a),
        setMovementStatus: (...a: Parameters<LedgerPort['setMovementStatus']>) => ledgerReal.setMovementStatus(...a),
        voidReserve: (...a: Parameters<LedgerPort['voidReserve']>) => ledgerReal.voidReserve(...a),
      } as LedgerPort,
      ['reserve', 'commit', 'commitMany', 'release', 'voidReserve'],
    );
    let uc: TransferUseCases | undefined;
    const rails = new ScriptedRail(c, () => uc!, {
      secret: SECRET,
      outcome: scenario.outcome,
      callbacks: scenario.callbacks,
      contradict: scenario.contradict ?? false,
      bulk: scenario.bulkCallbacks ?? false,
    });
    const deps = depsOf(store, ledger, rails, sagaSettings(SECRET, { approvalTtlSeconds }));
    uc = transferUseCases(deps);
    const sweepers = [0, 1].map(() => new Sweeper(deps, uc!.saga, { intervalMs: 3_600_000, batch: 10, leaseMs: 0 }));
    return { uc, sweepers, rails };
  }

  it(`keeps every invariant in ${RUNS} explored schedules`, async () => {
    const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('transfer'));
    try {
      await fc.assert(
        fc.asyncProperty(schedules, scenarios, async (s, scenario) => {
          const c = new Choreography(s);
          choreo = c;
          explored++;
          const amount = 10_000n;
          const co = await newCompany(h, { breb: amount });
          const { uc, sweepers, rails } = build(c, scenario, ledgerReal);
          const retry = scenario.secondSend === 'same-reference' ? { reference: `ref-${co.id}`, requestHash: randomUUID() } : undefined;
          const sendOnce = (label: string) =>
            c.actor(label, async () => {
              await c.point('send');
              return sendToKey(uc, co, amount, retry ?? {}).then(
                (r) => r.transfer.state,
                (e: unknown) => (e as AppError).code ?? String(e),
              );
            });
          const sweep = (label: string, ticks: number) =>
            c.actor(label, async () => {
              for (let i = 0; i < ticks; i++) {
                await c.point(`tick ${i + 1}`);
                await sweepers[label === 'sweeper-1' ? 0 : 1]!.tick();
              }
            });
          void sendOnce('request-1');
          if (scenario.secondSend !== 'none') void sendOnce('request-2');
          void sweep('sweeper-1', scenario.ticks[0]);
          void sweep('sweeper-2', scenario.ticks[1]);
          await c.finish();
          if (c.trace.some((p) => p.includes('ledger.commitMany'))) bulkCommits++;
          // Whatever the schedule left undecided, the sweeper settles once nobody else is running.
          for (let i = 0; i < 2; i++) await sweepers[0]!.tick();

          const found = await sagaViolations(h.tdb.url, co.id, rails.truth);
          const open = await h.transfer!.db.query<{ kind: string }>(
            `select kind from transfer.money_exceptions e join transfer.transfers t on t.id::text = e.resource_id where t.company_id = ? and e.status = 'OPEN'`,
            [co.id],
          );
          // Every contradiction is an open exception, and nothing else is.
          const settledAtRail = [...rails.truth.values()].filter((v) => v !== 'PENDING').length;
          const expected = scenario.contradict
            ? Array.from({ length: settledAtRail }, () => (scenario.outcome === 'COMPLETED' ? 'RAIL_FAILED_AFTER_COMPLETION' : 'RAIL_COMPLETED_AFTER_RELEASE'))
            : [];
          // One reference, one transfer: a retry under the reference never makes a second one that holds money.
          const byReference = await h.transfer!.db.query<{ n: number }>(
            `select count(*)::int as n from transfer.transfers where company_id = ? and reference is not null and state <> 'REJECTED'`,
            [co.id],
          );
          if (byReference[0]!.n > 1) found.push(`the reference names ${byReference[0]!.n} transfers that are not REJECTED`);
          const kinds = open.map((o) => o.kind).sort();
          if (kinds.join() !== expected.join()) found.push(`money exceptions ${kinds.join(', ') || 'none'}; expected ${expected.join(', ') || 'none'}`);
          const w = (await h.ledgerClient.getBalances({ ivaApplicable: false }, ctxOf(co.id))).wallets.find((x) => x.rail === Rail.BREB)!;
          const paid = [...rails.truth.values()].filter((v) => v === 'COMPLETED').length;
          if (BigInt(paid) * amount > amount) found.push(`overdraft: the rail paid ${paid} sends of a balance for one`);
          if (w.availableCents < 0n || w.availableCents + w.pendingOutCents + BigInt(paid) * amount !== amount) {
            found.push(`wallet ${w.availableCents}/${w.pendingOutCents} does not match the ${paid} paid send(s)`);
          }
          if (found.length > 0) {
            violations.push(...found);
            throw new Error(`${found.join('\n')}\nscenario ${JSON.stringify(scenario)}\npoints in order:\n  ${c.trace.join('\n  ')}`);
          }
        }),
        exploration(),
      );
    } finally {
      ledgerReal.close();
    }
    await expectLedgerOk(h);
  }, 300_000);

  it(`a page of outcomes races the sweeper's status lookups and a single callback in ${RUNS} explored schedules`, async () => {
    const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('transfer'));
    const signed = (uc: TransferUseCases, body: unknown) => {
      const raw = Buffer.from(JSON.stringify(body));
      return uc.handleRailCallback.execute({ rail: 'BREB', rawBody: raw, signature: signPayload(SECRET, raw, Math.floor(Date.now() / 1000)) });
    };
    const completed = (id: string, eventId: string) => ({ eventId, transactionId: id, providerTransferId: `prov-${id}`, rail: 'BREB', status: 'COMPLETED' });
    try {
      await fc.assert(
        fc.asyncProperty(
          schedules,
          fc.record({ transfers: fc.integer({ min: 1, max: 3 }), ticks: fc.integer({ min: 0, max: 2 }), single: fc.boolean(), pageTwice: fc.boolean() }),
          async (s, sc) => {
            const c = new Choreography(s);
            choreo = c;
            explored++;
            const amount = 10_000n;
            const co = await newCompany(h, { breb: amount * BigInt(sc.transfers) });
            // The sends are not raced: each is DISPATCHED first, the rail has paid them all.
            const truth = new Map<string, 'COMPLETED'>();
            const rails: RailPort = {
              dispatch: async (t) => {
                truth.set(t.id, 'COMPLETED');
                return { outcome: 'accepted', providerTransferId: `prov-${t.id}` };
              },
              status: async (_r, id) => {
                await c.point('rail.status');
                return truth.has(id) ? { found: true, status: 'COMPLETED', providerTransferId: `prov-${id}`, errorMessage: null } : { found: false };
              },
              validateAchAccount: async () => ({ result: 'valid' as const }),
            };
            const store = c.wrap(
              'store',
              new SqlTransferStore(h.transfer!.db, testProtection) as TransferStore,
              ['transition', 'transitionOnCallback', 'transitionOnCallbacks', 'finishMany'],
              false,
            );
            const ledger = c.wrap('ledger', ledgerReal as LedgerPort, ['commit', 'commitMany']);
            // confirmTimeoutSeconds 0: the sweeper asks the rail about a DISPATCHED transfer at once.
            const deps = depsOf(store, ledger, rails, sagaSettings(SECRET, { confirmTimeoutSeconds: 0 }));
            const uc = transferUseCases(deps);
            const sweeper = new Sweeper(deps, uc.saga, { intervalMs: 3_600_000, batch: 10, leaseMs: 0 });
            const ids: string[] = [];
            for (let i = 0; i < sc.transfers; i++) {
              const sent = await sendToKey(uc, co, amount);
              expect(sent.transfer.state).toBe('DISPATCHED');
              ids.push(sent.transfer.id);
            }
            const page = { type: 'rail.outcomes', outcomes: ids.map((id) => completed(id, `page-${id}`)) };
            const answers: string[] = [];
            const act = (label: string, fn: () => Promise<unknown>) => recordedActor(c, answers, label, fn, (r) => JSON.stringify(r));
            void act('rail page', () => signed(uc, page));
            if (sc.pageTwice) void act('rail page again', () => signed(uc, page));
            if (sc.single) void act('rail single', () => signed(uc, completed(ids[0]!, `single-${ids[0]}`)));
            void c.actor('sweeper', async () => {
              for (let i = 0; i < sc.ticks; i++) {
                await c.point(`tick ${i + 1}`);
                await sweeper.tick();
              }
            });
            await c.finish();
            if (c.trace.some((p) => p.includes('ledger.commitMany'))) bulkCommits++;
            for (let i = 0; i < 2; i++) await sweeper.tick();

            const found = await sagaViolations(h.tdb.url, co.id, truth);
            const states = await h.transfer!.db.query<{ state: string; n: number }>(
              'select state, count(*)::int as n from transfer.transfers where company_id = ? group by state',
              [co.id],
            );
            if (states.length !== 1 || states[0]!.state !== 'COMPLETED') found.push(`states ${JSON.stringify(states)}`);
            const commits = await h.ledger.db.query<{ n: number }>(
              "select count(*)::int as n from ledger.postings where kind = 'commit' and idempotency_key = any(array[?]::text[])",
              [ids.map((id) => `transfer:${id}:commit`)],
            );
            if (commits[0]!.n !== ids.length) found.push(`${commits[0]!.n} commit postings for ${ids.length} transfers`);
            const open = await h.transfer!.db.query<{ kind: string }>(
              `select kind from transfer.money_exceptions e join transfer.transfers t on t.id::text = e.resource_id where t.company_id = ? and e.status = 'OPEN'`,
              [co.id],
            );
            if (open.length > 0) found.push(`money exceptions ${open.map((o) => o.kind).join(', ')}`);
            const events = await h.transfer!.db.query<{ n: number }>(
              "select count(*)::int as n from transfer.outbox where subject = 'transfer.completed' and payload->>'transferId' = any(array[?]::text[])",
              [ids],
            );
            if (events[0]!.n !== ids.length) found.push(`${events[0]!.n} transfer.completed events for ${ids.length} transfers`);
            const w = (await h.ledgerClient.getBalances({ ivaApplicable: false }, ctxOf(co.id))).wallets.find((x) => x.rail === Rail.BREB)!;
            if (w.availableCents !== 0n || w.pendingOutCents !== 0n) found.push(`wallet ${w.availableCents}/${w.pendingOutCents} after every send was paid`);
            if (answers.some((a) => !a.includes('"accepted":true'))) found.push(`answers ${answers.join('; ')}`);
            if (found.length > 0) {
              violations.push(...found);
              throw new Error(
                `${found.join('\n')}\nscenario ${JSON.stringify(sc)}\nanswers ${answers.join('; ')}\npoints in order:\n  ${c.trace.join('\n  ')}`,
              );
            }
          },
        ),
        exploration(),
      );
    } finally {
      ledgerReal.close();
    }
    // The bulk money step was among what was explored: with no sweeper tick it is always reached.
    if (RUNS >= 20 && !process.env.INTERLEAVING_SEED) expect(bulkCommits).toBeGreaterThan(0);
    await expectLedgerOk(h);
  }, 300_000);
  it(`multi-signature: signatures, a rejection and the expiry sweeper race in ${RUNS} explored schedules`, async () => {
    const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('transfer'));
    const signer = (n: number, role = 'OPERATOR') => ({ userId: `user-${n}`, email: `firmante${n}@empresa.co`, role });
    try {
      await fc.assert(
        fc.asyncProperty(
          schedules,
          fc.record({
            signers: fc.integer({ min: 1, max: 3 }),
            sameSignerTwice: fc.boolean(),
            reject: fc.boolean(),
            expired: fc.boolean(),
            outcome: fc.constantFrom<'COMPLETED' | 'FAILED'>('COMPLETED', 'FAILED'),
            ticks: fc.integer({ min: 0, max: 2 }),
          }),
          async (s, sc) => {
            const c = new Choreography(s);
            choreo = c;
            explored++;
            const amount = 10_000n;
            const co = await newCompany(h, { breb: amount, multiSig: 2 });
            // The send itself is not raced here: it is accepted first (AWAITING_APPROVAL, funds held).
            const { uc, sweepers, rails } = build(c, { reserve: 'normal', outcome: sc.outcome, callbacks: 1 }, ledgerReal, sc.expired ? 0 : 3600);
            const sent = await sendToKey(uc, co, amount);
            expect(sent.transfer.state).toBe('AWAITING_APPROVAL');
            const approvalId = sent.transfer.approval!.id;
            const outcomes: string[] = [];
            const act = (label: string, fn: () => Promise<unknown>) => recordedActor(c, outcomes, label, fn);
            for (let i = 1; i <= sc.signers; i++) void act(`signer-${i}`, () => uc.signApproval.execute(co.id, { approvalId, signer: signer(i) }));
            if (sc.sameSignerTwice) void act('signer-1-again', () => uc.signApproval.execute(co.id, { approvalId, signer: signer(1) }));
            if (sc.reject) void act('rejecter', () => uc.rejectApproval.execute(co.id, { approvalId, signer: signer(9, 'ADMIN'), reason: 'No corresponde' }));
            void c.actor('sweeper-1', async () => {
              for (let i = 0; i < sc.ticks; i++) {
                await c.point(`tick ${i + 1}`);
                await sweepers[0]!.tick();
              }
            });
            await c.finish();
            for (let i = 0; i < 2; i++) await sweepers[1]!.tick();

            const found = await sagaViolations(h.tdb.url, co.id, rails.truth);
            const [a] = await h.transfer!.db.query<{ status: string; n: number; state: string }>(
              `select a.status, (select count(*)::int from transfer.approval_signatures s where s.approval_id = a.id) as n, t.state
               from transfer.approvals a join transfer.transfers t on t.id = a.transfer_id where a.id = ?`,
              [approvalId],
            );
            const dispatchedOrLater = ['EXECUTING', 'DISPATCHED', 'COMPLETING', 'COMPLETED', 'RELEASING', 'FAILED'];
            if (a!.status === 'APPROVED' && !dispatchedOrLater.includes(a!.state)) found.push(`approval APPROVED but the transfer is ${a!.state}`);
            if (a!.status === 'APPROVED' && a!.n < 2) found.push(`approval APPROVED with ${a!.n} signatures`);
            if (a!.status === 'REJECTED' && a!.state !== 'FAILED') found.push(`approval REJECTED but the transfer is ${a!.state}`);
            if (a!.status === 'EXPIRED' && a!.state !== 'EXPIRED') found.push(`approval EXPIRED but the transfer is ${a!.state}`);
            if (a!.status !== 'APPROVED' && rails.truth.size > 0) found.push(`the rail received a transfer whose approval is ${a!.status}`);
            if (rails.truth.size > 1) found.push('dispatched more than once');
            const paid = [...rails.truth.values()].filter((v) => v === 'COMPLETED').length;
            const w = (await h.ledgerClient.getBalances({ ivaApplicable: false }, ctxOf(co.id))).wallets.find((x) => x.rail === Rail.BREB)!;
            if (w.availableCents + w.pendingOutCents + BigInt(paid) * amount !== amount)
              found.push(`wallet ${w.availableCents}/${w.pendingOutCents} with ${paid} paid`);
            if (found.length > 0) {
              violations.push(...found);
              throw new Error(
                `${found.join('\n')}\nscenario ${JSON.stringify(sc)}\noutcomes ${outcomes.join('; ')}\npoints in order:\n  ${c.trace.join('\n  ')}`,
              );
            }
          },
        ),
        exploration(),
      );
    } finally {
      ledgerReal.close();
    }
    await expectLedgerOk(h);
  }, 300_000);
});
