import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { AppError, SqlReturnStore, createLogger, devMeshTls, type ReturnStore } from '@wallet/platform';
import { Choreography, eventually } from '@wallet/platform/testing';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import { cobroUseCases, type CobroDeps, type CobroKeysPort } from '../../src/app/cobros.js';
import { depositDeps } from '../../src/app/deps.js';
import type { DepositStore, LedgerPort, PseLinkRequest, PseProvider } from '../../src/app/ports.js';
import { PSE_RETURNS } from '../../src/app/returns.js';
import { Sweeper } from '../../src/app/sweeper.js';
import { depositUseCases } from '../../src/app/use-cases.js';
import { SqlCobroStore } from '../../src/persistence/cobro.store.js';
import { SqlDepositStore } from '../../src/persistence/deposit.store.js';
import { depositViolations } from './deposit-invariants.js';
import { Rail, payer, startHarness, type Harness } from './harness.js';
import { RIG_SECRET, signedCallback } from './rig.js';

/**
 * A refund (devolución) of a credited PSE payment racing the provider's late reversal of the SAME payment
 * (docs/returns.md, docs/cobros.md "Reversals"), under every interleaving fast-check's scheduler explores, over
 * the real use cases (CreateDepositReturn and the return saga, HandlePseCallback and the deposit saga, the
 * sweeper of another replica with grace 0), the real ledger over gRPC and real Postgres. The provider is a
 * stand-in with the sandbox's contract (sandbox/src/app/pse-links.ts): a refund of a payment it reversed is
 * refused (NOT_PAID) and a payment with a refund is no longer reversed (ALREADY_REFUNDED), both decided
 * atomically; a refund is idempotent by its id, and may be unanswered (down) or answered and lost.
 *
 * After each schedule, once nobody runs (the sweeper then settles what is owed, the provider redelivers what
 * was not acknowledged), for every schedule:
 *   - money moves at most once: the payer never gets back more than the gross between the refunds and the
 *     reversal; our RETURNED refunds are exactly the provider's refunds and our deposit is REVERSED exactly when
 *     the provider reversed it; the company's ACH wallet is debited exactly once for that money
 *     (available = net − refunds − (reversed ? net : 0), nothing left pending);
 *   - every saga ends final (the refund RETURNED or FAILED, never parked; the deposit ASSIGNED or REVERSED),
 *     with exactly one closing event each, and no money exception left open. A reversal that meets a refund
 *     under way is refused by the ledger (it would debit the company twice if the provider made the refund
 *     too) and parked as REVERSAL_REFUSED; the operator's retry once the refund has ended posts it;
 *   - the ledger's invariants and the cross-service `deposits` check hold;
 *   - the cobro the payment paid agrees with it once the listing consumer has every event of the deposit:
 *     paidAmount, returnedAmount and the payment's returned / reversed cents.
 *
 * Bre-B has no such race: a credited Bre-B payment is final at the network (docs/cobros.md "Reversals"), and
 * collect-key publishes no reversal of one (its REVERSED is an UNASSIGNED payment returned whole, which no
 * refund can take).
 *
 * RETURN_REVERSAL_RUNS (default 16) schedules; RETURN_REVERSAL_SEED / RETURN_REVERSAL_PATH replay one.
 */
const RUNS = Number(process.env.RETURN_REVERSAL_RUNS ?? 16);
const GROSS = 100_000n;
/** PSE_INFLOW fee of the harness's companies: 1,000 + 19 % IVA. */
const NET = GROSS - 1_000n - 190n;

type RefundFault = 'none' | 'down' | 'lost';

interface Scenario {
  /** The refund asked for: part of the payment, or all the wallet holds of it. */
  amount: bigint;
  /** The provider's answer to the first refund call: as decided, none (down), or decided and lost on the way. */
  firstRefund: RefundFault;
  /** Deliveries of the REVERSED callback (the provider's retries of the same event). */
  copies: number;
  /** Ticks of the other replica's sweeper during the schedule. */
  ticks: number;
  /**
   * How late the provider reverses: points it waits at first (a refund takes several steps to reach the provider; without
   * these the reversal nearly always came first).
   */
  lateness: number;
}

const scenarios: fc.Arbitrary<Scenario> = fc.record({
  amount: fc.constantFrom(30_000n, NET),
  firstRefund: fc.constantFrom<RefundFault>('none', 'down', 'lost'),
  copies: fc.integer({ min: 1, max: 2 }),
  ticks: fc.integer({ min: 1, max: 2 }),
  lateness: fc.integer({ min: 0, max: 10 }),
});

/** The PSE provider as the sandbox behaves (sandbox/src/app/pse-links.ts `refund` and `reverse`), for one link. */
class ProviderBook implements PseProvider {
  status: 'PENDING' | 'PAID' | 'REVERSED' = 'PENDING';
  amount = 0n;
  readonly refunds = new Map<string, bigint>();
  fault: RefundFault = 'none';

  async createLink(r: PseLinkRequest) {
    this.amount = r.amountCents;
    return { linkId: `lnk_${r.depositId}`, paygatewayUrl: `http://127.0.0.1:1/pse/pay/${r.depositId}` };
  }

  async refund(r: { refundId: string; depositId: string; amountCents: bigint }) {
    const fault = this.fault;
    this.fault = 'none';
    if (fault === 'down') return { outcome: 'UNAVAILABLE' as const, returnedAt: null };
    const out = this.decide(r);
    return fault === 'lost' ? { outcome: 'UNAVAILABLE' as const, returnedAt: null } : out;
  }

  private decide(r: { refundId: string; amountCents: bigint }) {
    const refused = (code: string) => ({ outcome: 'REFUSED' as const, returnedAt: null, code });
    const existing = this.refunds.get(r.refundId);
    if (existing !== undefined) return existing === r.amountCents ? { outcome: 'RETURNED' as const, returnedAt: new Date() } : refused('ALREADY_REFUNDED');
    if (this.status !== 'PAID') return refused('NOT_PAID');
    if (this.refunded() + r.amountCents > this.amount) return refused('REFUND_EXCEEDS_PAYMENT');
    this.refunds.set(r.refundId, r.amountCents);
    return { outcome: 'RETURNED' as const, returnedAt: new Date() };
  }

  refunded(): bigint {
    let s = 0n;
    for (const a of this.refunds.values()) s += a;
    return s;
  }

  isReversed(): boolean {
    return this.status === 'REVERSED';
  }

  /** The provider reverses the payment: refused when it is not paid or has a refund. */
  reverse(): boolean {
    if (this.status !== 'PAID' || this.refunds.size > 0) return false;
    this.status = 'REVERSED';
    return true;
  }
}

class KeysStandIn implements CobroKeysPort {
  async issue(_companyId: string, r: { cobroId: string; transactionId: string }) {
    return { keyId: `bkey_${r.cobroId.slice(4)}`, keyValue: `@c${r.cobroId.slice(4, 14)}`, qrPayload: `000201010212|${r.transactionId}` };
  }
  async close() {}
}

describe('a PSE refund racing the provider’s late reversal of the same payment (fast-check scheduler)', () => {
  let h: Harness;
  let choreo: Choreography | undefined;
  let cobros: ReturnType<typeof cobroUseCases>;
  /** How the explored schedules ended (printed after the run: a reader sees both sides of the race were reached). */
  const ends = new Map<string, number>();
  const log = createLogger('return-vs-reversal', process.env.TEST_LOG_LEVEL ?? 'silent');

  beforeAll(async () => {
    // The service instance migrates the schema, relays the outbox and runs the listing consumer (the cobros); its own sweeper is kept out of the way.
    h = await startHarness({ depositEnv: { SWEEPER_INTERVAL_MS: '3600000' } });
    const deps: CobroDeps = {
      store: new SqlCobroStore(h.deposit.db),
      keys: new KeysStandIn(),
      returns: {
        request: () => Promise.reject(new AppError('SERVICE_UNAVAILABLE')),
      },
      pseLinks: { create: () => Promise.reject(new AppError('PSE_PROVIDER_NOT_CONFIGURED')) },
      log,
      now: () => new Date(),
      newId: () => randomUUID(),
      expiryGraceSeconds: 60,
    };
    cobros = cobroUseCases(deps);
  }, 120_000);
  afterAll(async () => {
    console.log(`[return-vs-reversal] ends: ${[...ends].map(([k, n]) => `${k} ×${n}`).join('; ')}`);
    await h?.stop();
  });

  it(`moves the money once, ends every saga and keeps the books and the cobro in ${RUNS} explored schedules`, async () => {
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
            const provider = new ProviderBook();
            const deps = depositDeps({
              store: c.wrap('deposit', new SqlDepositStore(h.deposit.db) as DepositStore, ['transition'], false),
              returns: c.wrap('return', new SqlReturnStore(h.deposit.db, PSE_RETURNS) as ReturnStore, ['transition'], false),
              ledger: c.wrap('ledger', ledgerReal as LedgerPort, ['reserveReturn', 'commitReturn', 'releaseReturn', 'reversePseInflow']),
              pse: c.wrap('provider', provider as PseProvider, ['refund']),
              mailer: { send: async () => ({ messageId: 'none' }) },
              settings: {
                inflowEnabled: true,
                linkTtlSeconds: 3600,
                paidGraceSeconds: 60,
                callbackUrl: 'http://127.0.0.1:1/webhooks/pse',
                callbackSecret: RIG_SECRET,
                sweeperGraceSeconds: 0,
              },
              log,
            });
            const uc = depositUseCases(deps);
            const sweeper = new Sweeper(deps, uc.saga, { intervalMs: 3_600_000, batch: 50 }, uc.returnSaga);

            // Before the race (outside any actor: no points): a cobro paid by a credited PSE payment.
            const co = await h.newCompany();
            const reference = `INV-${randomUUID().slice(0, 8)}`;
            const { cobro } = await cobros.create.execute(
              co,
              { reference, amountCents: GROSS, expiresAt: new Date(Date.now() + 3600_000), methods: ['BREB_KEY'] },
              { name: 'Acme S.A.S.', ivaApplicable: true },
            );
            const d = await uc.createPse.execute(co, undefined, {
              ...payer(),
              amountCents: GROSS,
              internalRef: reference,
              company: { name: 'Acme S.A.S.', ivaApplicable: true },
            });
            const paidAt = new Date(Date.now() - 1_000);
            provider.status = 'PAID';
            await uc.handlePseCallback.execute(
              signedCallback(d.id, { eventId: `evt-paid-${d.id}`, status: 'PAID', paidAt, providerTransferId: `pse-${d.id}` }),
            );
            expect((await deps.store.getById(d.id))?.status).toBe('ASSIGNED');
            await eventually(async () => (await cobros.get.execute(co, cobro.id)).state === 'PAID', 30_000);
            provider.fault = scenario.firstRefund;

            // The race.
            const asked: string[] = [];
            void c.actor('company', async () => {
              await c.point('asks for the refund');
              try {
                const r = await uc.createDepositReturn.execute(co, {
                  depositId: d.id,
                  amountCents: scenario.amount,
                  reason: 'CUSTOMER_REQUEST',
                  requestedBy: 'test',
                });
                asked.push(`${r.status}`);
              } catch (err) {
                asked.push(err instanceof AppError ? err.code : `thrown: ${(err as Error).message}`);
              }
            });
            const reversed = { body: { eventId: `evt-rev-${d.id}`, status: 'REVERSED' as const, paidAt }, acknowledged: false, sent: false };
            const actorErrors: string[] = [];
            void c.actor('provider', async () => {
              for (let i = 1; i <= scenario.lateness; i++) await c.point(`waits ${i}`);
              await c.point('reverses the payment');
              if (!provider.reverse()) return; // it has a refund: the provider no longer reverses it
              reversed.sent = true;
              try {
                for (let copy = 1; copy <= scenario.copies; copy++) {
                  for (let attempt = 1; attempt <= 3; attempt++) {
                    await c.point(`REVERSED #${copy} attempt ${attempt}`);
                    try {
                      await uc.handlePseCallback.execute(signedCallback(d.id, reversed.body));
                      reversed.acknowledged = true;
                      break;
                    } catch (err) {
                      if (!(err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE')) throw err;
                    }
                  }
                }
              } catch (err) {
                actorErrors.push(`provider: ${(err as Error).message}`);
              }
            });
            void c.actor('sweeper', async () => {
              for (let t = 1; t <= scenario.ticks; t++) {
                await c.point(`tick ${t}`);
                await sweeper.tick();
              }
            });
            await c.finish();

            // Nobody runs any more: the provider redelivers an unacknowledged reversal; the sweeper settles what is owed.
            const found: string[] = [...actorErrors];
            let operatorRetries = 0;
            try {
              for (let i = 0; i < 3 && reversed.sent && !reversed.acknowledged; i++) {
                await uc.handlePseCallback.execute(signedCallback(d.id, reversed.body)).then(
                  () => (reversed.acknowledged = true),
                  () => undefined,
                );
              }
              for (let i = 0; i < 2; i++) await sweeper.tick();
              // A reversal that met a refund under way was refused by the ledger (the payer might get the money
              // twice): parked for an operator, with its REVERSAL_REFUSED exception. The refund has ended now;
              // the operator's retry posts the same reversal (if the refund was made instead, the retry is
              // refused again and the exception stays open, a contradiction the checks below report).
              const parked = await h.deposit.db.prepared<{ id: string }>(
                `select id from pse_deposit.money_exceptions where resource_id = $1 and kind = 'REVERSAL_REFUSED' and status = 'OPEN'`,
                [d.id],
              );
              for (const e of parked) {
                operatorRetries++;
                await uc.resolveException
                  .execute({ id: e.id, action: 'retry', note: 'la devolución terminó', resolvedBy: 'operator:test' })
                  .catch(() => undefined);
              }
            } catch (err) {
              found.push(`settling after the schedule failed: ${(err as Error).message}`);
            }

            // Every saga final, each with its one closing event; no money exception.
            const deposit = await deps.store.getById(d.id);
            const returns = await h.deposit.db.prepared<{
              id: string;
              status: string;
              amount: string;
              parked: boolean;
              failure_code: string | null;
              events: string[] | null;
            }>(
              `select r.id, r.status, r.amount::text as amount, r.parked, r.failure_code,
                      (select array_agg(o.subject order by o.seq) from pse_deposit.outbox o where o.payload #>> '{depositReturn,id}' = r.id) as events
                 from pse_deposit.deposit_returns r where r.deposit_id = $1`,
              [d.id],
            );
            for (const r of returns) {
              if (r.parked || (r.status !== 'RETURNED' && r.status !== 'FAILED')) found.push(`refund ${r.id} ended ${r.status}${r.parked ? ' (parked)' : ''}`);
              const want = r.status === 'RETURNED' ? 'deposit.returned' : 'deposit.return_failed';
              if ((r.events ?? []).join() !== want) found.push(`refund ${r.id} ${r.status} with events [${(r.events ?? []).join(', ')}], not [${want}]`);
            }
            if (deposit?.status !== (provider.isReversed() ? 'REVERSED' : 'ASSIGNED'))
              found.push(`the provider's payment is ${provider.status}, ours ${deposit?.status}`);
            const exceptions = await h.deposit.db.prepared<{ kind: string; resource_id: string }>(
              `select kind, resource_id from pse_deposit.money_exceptions where company_id = $1 and status <> 'RESOLVED'`,
              [co],
            );
            for (const e of exceptions) found.push(`money exception ${e.kind} open on ${e.resource_id}`);

            // Money moves at most once: the provider's truth, ours, and the wallet.
            const refundedHere = returns.filter((r) => r.status === 'RETURNED');
            const returnedCents = refundedHere.reduce((s, r) => s + BigInt(r.amount), 0n);
            const atProvider = [...provider.refunds.entries()].map(([id, a]) => `${id} ${a}`).sort();
            const ours = refundedHere.map((r) => `${r.id} ${r.amount}`).sort();
            if (ours.join() !== atProvider.join()) found.push(`RETURNED here [${ours.join(', ')}], refunded by the provider [${atProvider.join(', ')}]`);
            const toPayer = provider.refunded() + (provider.isReversed() ? GROSS : 0n);
            if (toPayer > GROSS) found.push(`the payer got ${toPayer} back of a payment of ${GROSS}`);
            const wallet = (await h.ledgerClient.getBalances({ ivaApplicable: true }, h.ctx(co))).wallets.find((w) => w.rail === Rail.ACH)!;
            // What the provider moved, not what we recorded: the refunds it made and its reversal, each once.
            const want = NET - provider.refunded() - (provider.isReversed() ? NET : 0n);
            if (wallet.availableCents !== want || wallet.pendingOutCents !== 0n)
              found.push(
                `ACH wallet available ${wallet.availableCents} pending ${wallet.pendingOutCents}, not ${want} and 0 (the provider refunded ${provider.refunded()}, ${provider.status})`,
              );

            // The books: the ledger's invariants and the cross-service deposits check.
            const ledger = await h.ledgerClient.checkInvariants({}, h.ctx());
            found.push(...ledger.violations.map((v) => `ledger: ${v}`));
            found.push(...(await depositViolations(h.deposit.db, h.tdb.url, co, { settled: true })).violations);

            // The cobro, once the listing consumer has every event of the deposit (the refunds' and the reversal's).
            try {
              await eventually(async () => {
                const [left] = await h.deposit.db.prepared<{ n: number }>(
                  `select count(*)::int as n from pse_deposit.outbox o
                    where (o.payload #>> '{deposit,id}' = $1 or o.payload #>> '{depositReturn,depositId}' = $1)
                      and not exists (select 1 from pse_deposit.inbox i where i.event_id = o.id::text)`,
                  [d.id],
                );
                return left!.n === 0;
              }, 30_000);
            } catch {
              found.push('the listing consumer did not take every event of the deposit');
            }
            const after = await cobros.get.execute(co, cobro.id);
            const gone = deposit?.status === 'REVERSED';
            const got = {
              state: after.state,
              paid: after.paidAmount,
              returned: after.returnedAmount,
              payments: after.payments.map((p) => [p.depositId, p.disposition, p.returned, p.reversed]),
            };
            const expected = {
              state: gone ? 'OPEN' : 'PAID',
              paid: gone ? 0n : GROSS,
              returned: gone ? 0n : returnedCents,
              payments: [[d.id, 'COUNTED', returnedCents, gone ? GROSS : 0n]],
            };
            if (JSON.stringify(got, big) !== JSON.stringify(expected, big))
              found.push(`cobro ${JSON.stringify(got, big)}, not ${JSON.stringify(expected, big)}`);

            const end =
              `deposit ${deposit?.status}, refund ${returns.map((r) => `${r.status}${r.failure_code ? ` ${r.failure_code}` : ''}`).join('+') || 'not recorded'}` +
              (operatorRetries ? ', the reversal parked and retried by an operator' : '');
            ends.set(end, (ends.get(end) ?? 0) + 1);
            if (found.length > 0) {
              throw new Error(
                `${found.join('\n')}\nscenario ${JSON.stringify(scenario, big)}; the company's call answered ${asked.join()}\npoints in order:\n  ${c.trace.join('\n  ')}`,
              );
            }
          },
        ),
        {
          numRuns: RUNS,
          ...(process.env.RETURN_REVERSAL_SEED ? { seed: Number(process.env.RETURN_REVERSAL_SEED) } : {}),
          ...(process.env.RETURN_REVERSAL_PATH ? { path: process.env.RETURN_REVERSAL_PATH } : {}),
          endOnFailure: true,
        },
      );
    } finally {
      ledgerReal.close();
    }
  }, 600_000);
});

const big = (_k: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
