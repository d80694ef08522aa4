import fc from 'fast-check';
import { AppError } from '@wallet/platform';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import type { DepositStore, LedgerPort } from '../../src/app/ports.js';
import type { DepositRecord } from '../../src/domain/deposit.js';
import { SqlDepositStore } from '../../src/persistence/deposit.store.js';
import { Choreography } from '@wallet/platform/testing';
import { depositViolations } from './deposit-invariants.js';
import { startHarness, type Harness } from './harness.js';
import { GRACE_SECONDS, buildRig, newDeposit, signedCallback, type CallbackBody } from './rig.js';
import { devMeshTls } from '@wallet/platform';

/**
 * The PSE deposit saga under every interleaving fast-check's scheduler explores, over the real use
 * cases (HandlePseCallback, the Sweeper of two replicas, the saga), the real ledger over gRPC and
 * real Postgres: the provider's callbacks (PAID early, within the grace or late, duplicated or
 * re-sent under a new event id; FAILED; REVERSED, possibly ahead of its PAID), slow ledger replies,
 * and two expiry/step sweepers (grace 0: each acts like a replica whose owner stalled). After each
 * schedule, once nobody runs: the money invariants (deposit-invariants.ts), the provider's truth
 * against ours (every payment the contract says is the company's credited once, every
 * contradiction an open money exception, no exception without one), and the ledger's own.
 *
 * INTERLEAVING_RUNS (default 30) schedules; INTERLEAVING_SEED / INTERLEAVING_PATH replay one.
 * A failing schedule is printed with its scenario and the points in the order they ran.
 */
const RUNS = Number(process.env.INTERLEAVING_RUNS ?? 30);
const NET = 98_810n;

type Link = 'open' | 'expired' | 'long-expired';
type Timing = 'in-time' | 'in-grace' | 'late';
type Script = 'PAID' | 'PAID+REVERSED' | 'FAILED' | 'FAILED+PAID';

interface Scenario {
  /** The link at the start: valid for 10 min, expired 20 s ago (inside the 60 s grace), or 10 min ago. */
  link: Link;
  /** The provider's paidAt against expiresAt: before it, within the grace, or after expiresAt + grace. */
  timing: Timing;
  script: Script;
  /** Deliveries of each callback (the provider's retries of the same event id). */
  copies: number;
  /** The PAID is also sent again under a new event id. */
  resend: boolean;
  ticks: [number, number];
}

const EXPIRES_IN: Record<Link, number> = { open: 600_000, expired: -20_000, 'long-expired': -600_000 };

const scenarios: fc.Arbitrary<Scenario> = fc
  .record({
    link: fc.constantFrom<Link>('open', 'expired', 'long-expired'),
    timing: fc.constantFrom<Timing>('in-time', 'in-grace', 'late'),
    script: fc.constantFrom<Script>('PAID', 'PAID+REVERSED', 'PAID+REVERSED', 'FAILED', 'FAILED+PAID'),
    copies: fc.integer({ min: 1, max: 2 }),
    resend: fc.boolean(),
    ticks: fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 2 })),
  })
  .map((s) => ({
    ...s,
    // A paidAt in our future is not a real provider's: an open link is paid now; a link expired 20 s ago cannot yet be paid late.
    timing: s.link === 'open' ? 'in-time' : s.link === 'expired' && s.timing === 'late' ? 'in-grace' : s.timing,
  }));

function paidAtOf(s: Scenario, d: DepositRecord): Date {
  const exp = d.expiresAt!.getTime();
  if (s.link === 'open') return new Date(Date.now() - 1_000);
  if (s.timing === 'in-time') return new Date(exp - 5_000);
  if (s.timing === 'in-grace') return new Date(exp + (s.link === 'expired' ? 10_000 : 30_000));
  return new Date(exp + (GRACE_SECONDS + 60) * 1000);
}

/** The money exceptions the provider's script can justify (anything else open is a violation). */
function allowedExceptions(s: Scenario): string[] {
  const out: string[] = [];
  const paid = s.script !== 'FAILED';
  if (paid && s.timing === 'late') out.push('PAID_AFTER_EXPIRY');
  if (s.script === 'FAILED+PAID') out.push('PAID_AFTER_FAILURE', 'FAILED_AFTER_PAYMENT');
  // A reversal that overtakes its payment once the link can no longer be paid is kept for an operator.
  if (s.script === 'PAID+REVERSED' && (s.link === 'long-expired' || s.timing === 'late')) out.push('REVERSED_WITHOUT_PAYMENT');
  return out;
}

describe('PSE deposit saga: deterministic interleavings (fast-check scheduler)', () => {
  let h: Harness;
  let choreo: Choreography | undefined;
  let explored = 0;
  const violations: string[] = [];

  beforeAll(async () => {
    // The service instance migrates the schema; its own sweeper is kept out of the way.
    h = await startHarness({ depositEnv: { SWEEPER_INTERVAL_MS: '3600000', PSE_PAID_GRACE_SECONDS: String(GRACE_SECONDS) } });
  }, 60_000);
  afterAll(async () => {
    console.log(`[interleavings] ${explored} schedules explored, ${violations.length} violations`);
    await h?.stop();
  });

  it(`keeps every invariant in ${RUNS} explored schedules`, async () => {
    const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('pse-deposit'));
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler({
            act: Choreography.act(() => choreo),
          }),
          scenarios,
          async (sch, scenario) => {
            const c = new Choreography(sch);
            choreo = c;
            explored++;
            const store = c.wrap('store', new SqlDepositStore(h.deposit.db) as DepositStore, ['transition', 'dueForExpiry', 'leaseStaleSteps'], false);
            const ledger: LedgerPort = c.wrap(
              'ledger',
              {
                computeFees: (...a: Parameters<LedgerPort['computeFees']>) => ledgerReal.computeFees(...a),
                recordPseInflow: (...a: Parameters<LedgerPort['recordPseInflow']>) => ledgerReal.recordPseInflow(...a),
                reversePseInflow: (...a: Parameters<LedgerPort['reversePseInflow']>) => ledgerReal.reversePseInflow(...a),
              } as LedgerPort,
              ['recordPseInflow', 'reversePseInflow'],
            );
            const rig = buildRig(h, { store, ledger, replicas: 2 });

            const co = await h.newCompany();
            const d = await newDeposit(h, rig, co, EXPIRES_IN[scenario.link]);
            const paidAt = paidAtOf(scenario, d);
            const paid: CallbackBody = { eventId: `evt-paid-${d.id}`, status: 'PAID', paidAt, providerTransferId: `pse-${d.id}` };
            const deliveries: Array<{ label: string; body: CallbackBody; times: number }> = [];
            if (scenario.script !== 'FAILED') deliveries.push({ label: 'PAID', body: paid, times: scenario.copies });
            if (scenario.resend && scenario.script !== 'FAILED')
              deliveries.push({ label: 'PAID again', body: { ...paid, eventId: `evt-paid2-${d.id}` }, times: 1 });
            if (scenario.script === 'FAILED' || scenario.script === 'FAILED+PAID') {
              deliveries.push({
                label: 'FAILED',
                body: { eventId: `evt-failed-${d.id}`, status: 'FAILED', errorMessage: 'Transacción rechazada por el banco' },
                times: scenario.copies,
              });
            }
            if (scenario.script === 'PAID+REVERSED')
              deliveries.push({ label: 'REVERSED', body: { eventId: `evt-rev-${d.id}`, status: 'REVERSED', paidAt }, times: scenario.copies });

            // The provider: each event delivered (and retried on 503, a few times) by its own sender.
            const unacknowledged = new Set<CallbackBody>();
            const deliver = async (body: CallbackBody, label: string) => {
              for (let attempt = 1; attempt <= 4; attempt++) {
                await c.point(`${label} attempt ${attempt}`);
                try {
                  await rig.uc.handlePseCallback.execute(signedCallback(d.id, body));
                  unacknowledged.delete(body);
                  return;
                } catch (err) {
                  if (!(err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE')) throw err;
                  unacknowledged.add(body);
                }
              }
            };
            const actorErrors: string[] = [];
            for (const x of deliveries) {
              void c.actor(`provider ${x.label}`, async () => {
                try {
                  for (let i = 0; i < x.times; i++) await deliver(x.body, `#${i + 1}`);
                } catch (err) {
                  actorErrors.push(`provider ${x.label}: ${(err as Error).message}`);
                }
              });
            }
            const sweep = (i: number, ticks: number) =>
              c.actor(`sweeper-${i + 1}`, async () => {
                for (let t = 0; t < ticks; t++) {
                  await c.point(`tick ${t + 1}`);
                  await rig.sweepers[i]!.tick();
                }
              });
            void sweep(0, scenario.ticks[0]);
            void sweep(1, scenario.ticks[1]);
            await c.finish();

            // Nobody runs any more: the sweeper settles what is left; the provider redelivers what it never got acknowledged.
            const found: string[] = [...actorErrors];
            try {
              for (let i = 0; i < 2; i++) await rig.sweepers[0]!.tick();
              for (const body of [...unacknowledged]) {
                for (let i = 0; i < 3 && unacknowledged.has(body); i++) {
                  await rig.uc.handlePseCallback.execute(signedCallback(d.id, body)).then(
                    () => unacknowledged.delete(body),
                    () => undefined,
                  );
                }
              }
              await rig.sweepers[0]!.tick();
            } catch (err) {
              found.push(`settling after the schedule failed: ${(err as Error).message}`);
            }

            const { violations: v, facts } = await depositViolations(h.deposit.db, h.tdb.url, co, { settled: true });
            found.push(...v);
            const f = facts[0]!;
            const open = f.openExceptions;
            const wallet = await h.achAvailable(co);
            if (wallet !== (f.status === 'ASSIGNED' ? NET : 0n)) found.push(`wallet ${wallet} for a deposit ${f.status}`);
            const paidInTime = scenario.script !== 'FAILED' && scenario.timing !== 'late';
            // The provider's truth against ours.
            if (paidInTime && scenario.script !== 'FAILED+PAID' && !f.credited) found.push(`paid in time at the provider but ${f.status}, not credited`);
            if (scenario.script === 'FAILED+PAID' && paidInTime && !f.credited && !open.includes('PAID_AFTER_FAILURE'))
              found.push(`paid after failing, ${f.status}: neither credited nor an exception`);
            if (scenario.script === 'FAILED+PAID' && f.credited && scenario.link === 'open' && !open.includes('FAILED_AFTER_PAYMENT'))
              found.push('failed after the credit with no exception');
            if (scenario.timing === 'late' && scenario.script !== 'FAILED' && (f.credited || !open.includes('PAID_AFTER_EXPIRY')))
              found.push(`paid late: ${f.status}, exceptions [${open.join(', ')}]`);
            if (scenario.script === 'PAID+REVERSED' && f.credited && f.status !== 'REVERSED') found.push(`reversed at the provider but ${f.status}`);
            if (scenario.script === 'PAID+REVERSED' && !f.credited && !open.includes('REVERSED_WITHOUT_PAYMENT'))
              found.push(`reversed at the provider, never credited, no exception (${f.status})`);
            if (scenario.script === 'FAILED' && !['FAILED', 'EXPIRED'].includes(f.status)) found.push(`failed at the provider but ${f.status}`);
            const unexpected = open.filter((k) => !allowedExceptions(scenario).includes(k));
            if (unexpected.length > 0) found.push(`unexpected money exceptions: ${unexpected.join(', ')}`);
            if (found.length > 0) {
              violations.push(...found);
              throw new Error(`${found.join('\n')}\nscenario ${JSON.stringify(scenario)}\npoints in order:\n  ${c.trace.join('\n  ')}`);
            }
          },
        ),
        {
          numRuns: RUNS,
          ...(process.env.INTERLEAVING_SEED ? { seed: Number(process.env.INTERLEAVING_SEED) } : {}),
          ...(process.env.INTERLEAVING_PATH ? { path: process.env.INTERLEAVING_PATH } : {}),
          endOnFailure: true,
        },
      );
    } finally {
      ledgerReal.close();
    }
    await h.expectInvariants();
  }, 120_000);
});
