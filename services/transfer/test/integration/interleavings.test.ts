import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { AppError, createLogger } from '@wallet/platform';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import { transferDeps, type TransferDeps } from '../../src/app/deps.js';
import type { LedgerPort, TransferStore } from '../../src/app/ports.js';
import { Sweeper } from '../../src/app/sweeper.js';
import { transferUseCases, type TransferUseCases } from '../../src/app/use-cases.js';
import { SqlApprovalStore } from '../../src/persistence/approval.store.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import { Choreography } from '@wallet/platform/testing';
import { Rail, ctxOf, expectLedgerOk, newCompany, sagaSettings, startHarness, testProtection, type Harness } from './harness.js';
import { sagaViolations } from './saga-invariants.js';
import { KEY, ScriptedRail, directory } from './interleaving-support.js';
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
});

describe('send saga: deterministic interleavings (fast-check scheduler)', () => {
  let h: Harness;
  let choreo: Choreography | undefined;
  /** The scheduler of each run; after each release it waits until every actor is stopped at a point again. */
  const schedules = fc.scheduler({
    act: Choreography.act(() => choreo),
  });
  let explored = 0;
  const violations: string[] = [];

  beforeAll(async () => {
    // The service instance migrates the schema; its own sweeper is kept out of the way.
    h = await startHarness({ transferEnv: { SWEEPER_INTERVAL_MS: '3600000' } });
  }, 60_000);
  afterAll(async () => {
    console.log(`[interleavings] ${explored} schedules explored, ${violations.length} violations`);
    await h?.stop();
  });

  function build(
    c: Choreography,
    scenario: Pick<Scenario, 'reserve' | 'outcome' | 'callbacks'> & { contradict?: boolean },
    ledgerReal: GrpcLedger,
    approvalTtlSeconds = 3600,
  ) {
    const store = c.wrap('store', new SqlTransferStore(h.transfer!.db, testProtection) as TransferStore, ['transition'], false);
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
        release: (...a: Parameters<LedgerPort['release']>) => ledgerReal.release(...a),
        setMovementStatus: (...a: Parameters<LedgerPort['setMovementStatus']>) => ledgerReal.setMovementStatus(...a),
        voidReserve: (...a: Parameters<LedgerPort['voidReserve']>) => ledgerReal.voidReserve(...a),
      } as LedgerPort,
      ['reserve', 'commit', 'release', 'voidReserve'],
    );
    let uc: TransferUseCases | undefined;
    const rails = new ScriptedRail(c, () => uc!, {
      secret: SECRET,
      outcome: scenario.outcome,
      callbacks: scenario.callbacks,
      contradict: scenario.contradict ?? false,
    });
    const deps: TransferDeps = transferDeps({
      store,
      approvals: new SqlApprovalStore(h.transfer!.db, testProtection),
      ledger,
      directory,
      rails,
      settings: sagaSettings(SECRET, { approvalTtlSeconds }),
      log: createLogger('interleavings', process.env.TEST_LOG_LEVEL ?? 'silent'),
      eventsWritten: () => undefined,
      destinationFingerprint: (d) => testProtection.destinationFingerprint(d),
    });
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
              return uc.send
                .execute(
                  { companyId: co.id },
                  {
                    amount,
                    brebKey: { type: 'PHONE', value: KEY.keyValue },
                    targetName: KEY.recipient.fullName,
                    targetDocument: KEY.recipient.idValue,
                    company: co.profile,
                    requestHash: retry?.requestHash ?? randomUUID(),
                    ...(retry ? { reference: retry.reference } : {}),
                  },
                )
                .then(
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
            const sent = await uc.send.execute(
              { companyId: co.id },
              {
                amount,
                brebKey: { type: 'PHONE', value: KEY.keyValue },
                targetName: KEY.recipient.fullName,
                targetDocument: KEY.recipient.idValue,
                company: co.profile,
                requestHash: randomUUID(),
              },
            );
            expect(sent.transfer.state).toBe('AWAITING_APPROVAL');
            const approvalId = sent.transfer.approval!.id;
            const outcomes: string[] = [];
            const act = (label: string, fn: () => Promise<unknown>) =>
              c.actor(label, async () => {
                await c.point('call');
                outcomes.push(
                  await fn().then(
                    () => `${label}: ok`,
                    (e: unknown) => `${label}: ${(e as AppError).code ?? String(e)}`,
                  ),
                );
              });
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
