import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { AppError, SqlReturnStore, createLogger, devMeshTls, signPayload } from '@wallet/platform';
import { Choreography, eventually } from '@wallet/platform/testing';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import { collectKeyDeps, type CollectKeyDeps } from '../../src/app/deps.js';
import { HttpBrebDirectory } from '../../src/adapters/breb-directory.client.js';
import { AssignPayment } from '../../src/app/assign-payment.js';
import { ReturnPayment } from '../../src/app/return-payment.js';
import { ResolvePaymentException } from '../../src/app/exceptions.js';
import { HandleIncomingPayment } from '../../src/app/incoming-payment.js';
import { PaymentSaga } from '../../src/app/payment-saga.js';
import type { BrebDirectory, CollectKeyStore, LedgerPort } from '../../src/app/ports.js';
import { SettleRegistration } from '../../src/app/settle-registration.js';
import { Sweeper } from '../../src/app/sweeper.js';
import { newKeyId } from '../../src/domain/collect-key.js';
import { SqlCollectKeyStore } from '../../src/persistence/collect-key.store.js';
import { COLLECT_KEY_RETURNS, collectKeyReturns } from '../../src/app/returns.js';
import { Rail, startHarness, type Harness } from './harness.js';

/**
 * The inbound payment saga under every interleaving fast-check's scheduler explores, over the real
 * use cases (HandleIncomingPayment, two sweeper replicas with grace 0, an operator's retry), the
 * real ledger over gRPC and real Postgres: the network delivering the same notification once or
 * more, the company's BREB wallet present from the start or opened at any point of the schedule
 * (so one runner's credit may be refused while another's succeeds), slow ledger replies. After each
 * schedule, once nobody runs (and an operator retried what was left refused): the payment is
 * credited exactly once (one posting under its key, the net in the wallet, one `deposit.paid`), its
 * state says so, and a refusal left no payment both credited and CREDIT_REFUSED.
 *
 * INTERLEAVING_RUNS (default 25) schedules; INTERLEAVING_SEED / INTERLEAVING_PATH replay one.
 */
const RUNS = Number(process.env.INTERLEAVING_RUNS ?? 25);
const SECRET = 'dev-rail-callback-secret';
const AMOUNT = 64_000n;

interface Scenario {
  wallet: 'from-start' | 'opened-during';
  copies: number;
  ticks: [number, number];
}
const scenarios: fc.Arbitrary<Scenario> = fc.record({
  wallet: fc.constantFrom<Scenario['wallet']>('from-start', 'opened-during', 'opened-during'),
  copies: fc.integer({ min: 1, max: 3 }),
  ticks: fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 })),
});

describe('inbound payment saga: deterministic interleavings (fast-check scheduler)', () => {
  let h: Harness;
  let choreo: Choreography | undefined;
  let explored = 0;
  beforeAll(async () => {
    h = await startHarness({ env: { SWEEPER_INTERVAL_MS: '3600000' } });
  }, 60_000);
  afterAll(async () => {
    console.log(`[interleavings] ${explored} schedules explored`);
    await h?.stop();
  });

  it(`credits each payment exactly once in ${RUNS} explored schedules`, async () => {
    const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('collect-key'));
    const plainStore = new SqlCollectKeyStore(h.service.db);
    const log = createLogger('ck-interleavings', process.env.TEST_LOG_LEVEL ?? 'silent');
    const directory: BrebDirectory = {
      register: async () => ({ outcome: 'UNAVAILABLE', anchorHandle: null }),
      unregister: async () => undefined,
      returnPayment: async () => ({ outcome: 'UNAVAILABLE', returnedAt: null }),
    };
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
            const store = c.wrap(
              'store',
              new SqlCollectKeyStore(h.service.db) as CollectKeyStore,
              ['recordIntent', 'transitionPayment', 'leaseStalePayments'],
              false,
            );
            const ledger: LedgerPort = c.wrap(
              'ledger',
              {
                computeBrebInflowFees: (...a: Parameters<LedgerPort['computeBrebInflowFees']>) => ledgerReal.computeBrebInflowFees(...a),
                recordInflow: (...a: Parameters<LedgerPort['recordInflow']>) => ledgerReal.recordInflow(...a),
                hasBrebWallet: (...a: Parameters<LedgerPort['hasBrebWallet']>) => ledgerReal.hasBrebWallet(...a),
                returnHeld: (...a: Parameters<LedgerPort['returnHeld']>) => ledgerReal.returnHeld(...a),
              } as LedgerPort,
              ['recordInflow', 'returnHeld'],
            );
            const deps: CollectKeyDeps = collectKeyDeps({
              store,
              returns: new SqlReturnStore(h.service.db, COLLECT_KEY_RETURNS),
              ledger,
              directory,
              log,
              settings: {
                incomingCallbackUrl: 'http://127.0.0.1/cb',
                callbackSecret: SECRET,
                merchantName: 'M',
                merchantCity: 'BOGOTA',
                sweeperGraceSeconds: 0,
              },
            });
            const saga = new PaymentSaga(deps);
            const handler = new HandleIncomingPayment(deps, saga);
            const sweepers = [0, 1].map(
              () => new Sweeper(deps, saga, collectKeyReturns(deps).saga, new SettleRegistration(deps), { intervalMs: 3_600_000, batch: 10 }),
            );

            // The company (ACH only unless the wallet is there from the start) and its key, ACTIVE.
            const co = `co-${randomUUID()}`;
            await h.ledgerClient.openWallets({ rails: scenario.wallet === 'from-start' ? [Rail.BREB, Rail.ACH] : [Rail.ACH] }, h.ctx(co));
            const k = await plainStore.insertKey({
              id: newKeyId(),
              companyId: co,
              externalId: 'ilv',
              name: 'Interleavings',
              keyType: 'ALPHANUM',
              keyValue: `@ilv${randomBytes(6).toString('hex')}`,
              ivaApplicable: false,
              state: 'REGISTERING',
              createdAt: new Date(),
              deletedAt: null,
            });
            if (typeof k === 'string') throw new Error(k);
            await plainStore.setState(k.id, ['REGISTERING'], 'ACTIVE');
            const ptid = `brb_in_${randomBytes(12).toString('hex')}`;
            const at = new Date().toISOString();
            const raw = Buffer.from(
              JSON.stringify({
                eventId: randomUUID(),
                providerTransferId: ptid,
                keyValue: k.keyValue,
                amountCents: Number(AMOUNT),
                payerName: 'Ana',
                payerDocument: 'CC 1',
                payerBank: 'Nequi',
                receivedAt: at,
                occurredAt: at,
              }),
            );

            const errors: string[] = [];
            const transient = (err: unknown) => err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE';
            void c.actor('network', async () => {
              for (let i = 0; i < scenario.copies; i++) {
                await c.point(`delivery ${i + 1}`);
                await handler.execute({ rawBody: raw, signature: signPayload(SECRET, raw, Math.floor(Date.now() / 1000)) }).catch((err: unknown) => {
                  if (!transient(err)) errors.push(`delivery: ${(err as Error).message}`);
                });
              }
            });
            for (const [i, ticks] of scenario.ticks.entries()) {
              void c.actor(`sweeper-${i + 1}`, async () => {
                for (let t = 0; t < ticks; t++) {
                  await c.point(`tick ${t + 1}`);
                  await sweepers[i]!.tick();
                }
              });
            }
            if (scenario.wallet === 'opened-during') {
              void c.actor('admin', async () => {
                await c.point('open the BREB wallet');
                await h.ledgerClient.openWallets({ rails: [Rail.BREB] }, h.ctx(co));
              });
            }
            await c.finish();

            // Nobody runs any more: the sweeper finishes what is owed; an operator retries what was refused.
            await sweepers[0]!.tick();
            const found = [...errors];
            let p = await plainStore.paymentByTransfer(ptid);
            if (!p) found.push('the payment was never recorded');
            if (p?.status === 'CREDIT_REFUSED') {
              // Refused means nothing was booked: a credit some other runner posted meanwhile must have been recorded as such.
              const before = await h.service.db.query<{ n: number }>(`select count(*)::int as n from ledger.postings where idempotency_key = ?`, [
                `collectkey:payment:${ptid}`,
              ]);
              if (before[0]!.n !== 0) found.push(`CREDIT_REFUSED while the ledger holds its credit (${before[0]!.n} posting)`);
              const open = (await plainStore.exceptions.list({ status: 'OPEN', kind: 'CREDIT_REFUSED', limit: 1000 })).filter(
                (e) => e.resourceId === p!.depositId,
              );
              if (open.length !== 1) found.push(`CREDIT_REFUSED with ${open.length} open exceptions`);
              else {
                const plain = { ...deps, store: plainStore, ledger: ledgerReal };
                await new ResolvePaymentException(
                  plain,
                  new PaymentSaga(plain),
                  new ReturnPayment(plain, new PaymentSaga(plain)),
                  collectKeyReturns(plain).saga,
                )
                  .execute({ id: open[0]!.id, action: 'retry', note: 'wallet opened', resolvedBy: 'operator:test' })
                  .catch((err: unknown) => found.push(`retry failed: ${(err as Error).message}`));
              }
              p = await plainStore.paymentByTransfer(ptid);
            }
            const postings = await h.service.db.query<{ n: number }>(`select count(*)::int as n from ledger.postings where idempotency_key = ?`, [
              `collectkey:payment:${ptid}`,
            ]);
            const paid = await h.service.db.query<{ n: number }>(
              `select count(*)::int as n from collect_key.outbox where subject = 'deposit.paid' and payload #>> '{deposit,providerTransferId}' = ?`,
              [ptid],
            );
            const wallet = await h.brebAvailable(co);
            if (p?.status !== 'ASSIGNED') found.push(`ends ${p?.status}, not ASSIGNED`);
            if (postings[0]!.n !== 1) found.push(`${postings[0]!.n} postings under the payment's key`);
            if (paid[0]!.n !== 1) found.push(`${paid[0]!.n} deposit.paid events`);
            if (wallet !== AMOUNT) found.push(`wallet ${wallet}, not ${AMOUNT}`);
            if (found.length > 0) throw new Error(`${found.join('\n')}\nscenario ${JSON.stringify(scenario)}\npoints in order:\n  ${c.trace.join('\n  ')}`);
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
  }, 300_000);

  it(`assigns a held payment exactly once under concurrent assignments and sweepers in ${RUNS} explored schedules`, async () => {
    const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('collect-key'));
    const plainStore = new SqlCollectKeyStore(h.service.db);
    const log = createLogger('ck-interleavings', process.env.TEST_LOG_LEVEL ?? 'silent');
    const directory: BrebDirectory = {
      register: async () => ({ outcome: 'UNAVAILABLE', anchorHandle: null }),
      unregister: async () => undefined,
      returnPayment: async () => ({ outcome: 'UNAVAILABLE', returnedAt: null }),
    };
    const settings = { incomingCallbackUrl: 'http://127.0.0.1/cb', callbackSecret: SECRET, merchantName: 'M', merchantCity: 'BOGOTA', sweeperGraceSeconds: 0 };
    const plainDeps = collectKeyDeps({
      store: plainStore,
      returns: new SqlReturnStore(h.service.db, COLLECT_KEY_RETURNS),
      ledger: ledgerReal,
      directory,
      log,
      settings,
    });
    const assignScenarios = fc.record({ company: fc.integer({ min: 1, max: 3 }), operator: fc.boolean(), ticks: fc.integer({ min: 0, max: 2 }) });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler({
            act: Choreography.act(() => choreo),
          }),
          assignScenarios,
          async (sch, scenario) => {
            // A payment held UNASSIGNED (its key deleted), recorded outside the schedule.
            const co = await h.newCompany();
            const k = await plainStore.insertKey({
              id: newKeyId(),
              companyId: co,
              externalId: 'held',
              name: 'Retenido',
              keyType: 'ALPHANUM',
              keyValue: `@hld${randomBytes(6).toString('hex')}`,
              ivaApplicable: false,
              state: 'REGISTERING',
              createdAt: new Date(),
              deletedAt: null,
            });
            if (typeof k === 'string') throw new Error(k);
            await plainStore.setState(k.id, ['REGISTERING'], 'DELETED');
            const ptid = `brb_in_${randomBytes(12).toString('hex')}`;
            const at = new Date().toISOString();
            const raw = Buffer.from(
              JSON.stringify({ eventId: randomUUID(), providerTransferId: ptid, keyValue: k.keyValue, amountCents: Number(AMOUNT), receivedAt: at }),
            );
            await new HandleIncomingPayment(plainDeps, new PaymentSaga(plainDeps)).execute({
              rawBody: raw,
              signature: signPayload(SECRET, raw, Math.floor(Date.now() / 1000)),
            });
            const held = (await plainStore.paymentByTransfer(ptid))!;
            if (held.status !== 'UNASSIGNED') throw new Error(`setup: ${held.status}`);

            const c = new Choreography(sch);
            choreo = c;
            explored++;
            const store = c.wrap('store', new SqlCollectKeyStore(h.service.db) as CollectKeyStore, ['transitionPayment', 'leaseStalePayments'], false);
            const ledger: LedgerPort = c.wrap(
              'ledger',
              {
                computeBrebInflowFees: (...a: Parameters<LedgerPort['computeBrebInflowFees']>) => ledgerReal.computeBrebInflowFees(...a),
                recordInflow: (...a: Parameters<LedgerPort['recordInflow']>) => ledgerReal.recordInflow(...a),
                hasBrebWallet: (...a: Parameters<LedgerPort['hasBrebWallet']>) => ledgerReal.hasBrebWallet(...a),
                returnHeld: (...a: Parameters<LedgerPort['returnHeld']>) => ledgerReal.returnHeld(...a),
              } as LedgerPort,
              ['recordInflow', 'returnHeld'],
            );
            const deps = collectKeyDeps({ store, returns: new SqlReturnStore(h.service.db, COLLECT_KEY_RETURNS), ledger, directory, log, settings });
            const saga = new PaymentSaga(deps);
            const assign = new AssignPayment(deps, saga);
            const sweeper = new Sweeper(deps, saga, collectKeyReturns(deps).saga, new SettleRegistration(deps), { intervalMs: 3_600_000, batch: 10 });
            const errors: string[] = [];
            const answers: string[] = [];
            const run = (who: string, companyId: string | undefined) =>
              c.actor(who, async () => {
                await c.point('assign');
                await assign.execute(companyId, { depositId: held.depositId, by: companyId ? 'company' : 'operator:test', note: 'n' }).then(
                  (p) => answers.push(p.status),
                  (err: unknown) => errors.push(`${who}: ${(err as Error).message}`),
                );
              });
            for (let i = 0; i < scenario.company; i++) void run(`company-${i + 1}`, co);
            if (scenario.operator) void run('operator', undefined);
            void c.actor('sweeper', async () => {
              for (let t = 0; t < scenario.ticks; t++) {
                await c.point(`tick ${t + 1}`);
                await sweeper.tick();
              }
            });
            await c.finish();

            const found = [...errors];
            const p = await plainStore.paymentByTransfer(ptid);
            const postings = await h.service.db.query<{ n: number }>(`select count(*)::int as n from ledger.postings where idempotency_key = ?`, [
              `collectkey:payment:${ptid}:assign`,
            ]);
            const paid = await h.service.db.query<{ n: number }>(
              `select count(*)::int as n from collect_key.outbox where subject = 'deposit.paid' and payload #>> '{deposit,providerTransferId}' = ?`,
              [ptid],
            );
            if (p?.status !== 'ASSIGNED') found.push(`ends ${p?.status}`);
            if (answers.some((a) => a !== 'ASSIGNED')) found.push(`answers ${answers.join(', ')}`);
            if (postings[0]!.n !== 1) found.push(`${postings[0]!.n} assignment postings`);
            if (paid[0]!.n !== 1) found.push(`${paid[0]!.n} deposit.paid events`);
            if ((await h.brebAvailable(co)) !== AMOUNT) found.push(`wallet ${await h.brebAvailable(co)}`);
            if (found.length > 0) throw new Error(`${found.join('\n')}\nscenario ${JSON.stringify(scenario)}\npoints in order:\n  ${c.trace.join('\n  ')}`);
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
  }, 300_000);

  it(`assignment and return of one held payment exclude each other: exactly one wins, in ${RUNS} explored schedules`, async () => {
    const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('collect-key'));
    const plainStore = new SqlCollectKeyStore(h.service.db);
    const log = createLogger('ck-interleavings', process.env.TEST_LOG_LEVEL ?? 'silent');
    const network = new HttpBrebDirectory(h.sandbox.url, 5_000, log);
    const settings = { incomingCallbackUrl: 'http://127.0.0.1/cb', callbackSecret: SECRET, merchantName: 'M', merchantCity: 'BOGOTA', sweeperGraceSeconds: 0 };
    const raceScenarios = fc.record({
      assigns: fc.integer({ min: 1, max: 2 }),
      returns: fc.integer({ min: 1, max: 2 }),
      operatorReturns: fc.boolean(),
      ticks: fc.integer({ min: 0, max: 2 }),
    });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler({
            act: Choreography.act(() => choreo),
          }),
          raceScenarios,
          async (sch, scenario) => {
            // A real held payment: paid through the sandbox's network to a deleted key, recorded outside the schedule.
            const co = await h.newCompany();
            const k = (await h.client.createKey({ externalId: `race-${randomBytes(3).toString('hex')}`, name: 'Carrera' }, h.ctx(co))).key!;
            await h.client.deleteKey({ id: k.id }, h.ctx(co));
            const paid = await h.sandboxPost('/sandbox/breb/incoming', {
              keyValue: k.keyValue,
              amountCents: Number(AMOUNT),
              payerName: 'Ana',
              payerDocument: 'CC 1',
              payerBank: 'Nequi',
            });
            const ptid = String(paid.body.providerTransferId);
            const held = await eventually(async () => {
              const p = await plainStore.paymentByTransfer(ptid);
              return p?.status === 'UNASSIGNED' ? p : undefined;
            }, 15_000);

            const c = new Choreography(sch);
            choreo = c;
            explored++;
            const store = c.wrap('store', new SqlCollectKeyStore(h.service.db) as CollectKeyStore, ['transitionPayment', 'leaseStalePayments'], false);
            const ledger: LedgerPort = c.wrap(
              'ledger',
              {
                computeBrebInflowFees: (...a: Parameters<LedgerPort['computeBrebInflowFees']>) => ledgerReal.computeBrebInflowFees(...a),
                recordInflow: (...a: Parameters<LedgerPort['recordInflow']>) => ledgerReal.recordInflow(...a),
                hasBrebWallet: (...a: Parameters<LedgerPort['hasBrebWallet']>) => ledgerReal.hasBrebWallet(...a),
                returnHeld: (...a: Parameters<LedgerPort['returnHeld']>) => ledgerReal.returnHeld(...a),
              } as LedgerPort,
              ['recordInflow', 'returnHeld'],
            );
            const directory = c.wrap('network', network as BrebDirectory, ['returnPayment']);
            const deps = collectKeyDeps({ store, returns: new SqlReturnStore(h.service.db, COLLECT_KEY_RETURNS), ledger, directory, log, settings });
            const saga = new PaymentSaga(deps);
            const assign = new AssignPayment(deps, saga);
            const giveBack = new ReturnPayment(deps, saga);
            const sweeper = new Sweeper(deps, saga, collectKeyReturns(deps).saga, new SettleRegistration(deps), { intervalMs: 3_600_000, batch: 10 });
            const outcomes: Array<{ op: string; result: string }> = [];
            const run = (op: 'assign' | 'return', who: string, companyId: string | undefined) =>
              c.actor(who, async () => {
                await c.point(op);
                const call =
                  op === 'assign'
                    ? assign.execute(companyId, { depositId: held.depositId, by: who, note: 'n' })
                    : giveBack.execute(companyId, { depositId: held.depositId, by: who, note: 'n' });
                await call.then(
                  (p) => outcomes.push({ op, result: p.status }),
                  (err: unknown) => outcomes.push({ op, result: err instanceof AppError ? err.code : (err as Error).message }),
                );
              });
            for (let i = 0; i < scenario.assigns; i++) void run('assign', `assign-${i + 1}`, co);
            for (let i = 0; i < scenario.returns; i++) void run('return', `return-${i + 1}`, co);
            if (scenario.operatorReturns) void run('return', 'operator-return', undefined);
            void c.actor('sweeper', async () => {
              for (let t = 0; t < scenario.ticks; t++) {
                await c.point(`tick ${t + 1}`);
                await sweeper.tick();
              }
            });
            await c.finish();

            const found: string[] = [];
            const p = (await plainStore.paymentByTransfer(ptid))!;
            const n = async (key: string) =>
              (await h.service.db.query<{ n: number }>(`select count(*)::int as n from ledger.postings where idempotency_key = ?`, [key]))[0]!.n;
            const assigned = await n(`collectkey:payment:${ptid}:assign`);
            const returned = await n(`collectkey:payment:${ptid}:returned`);
            const atNetwork = (
              await h.service.db.query<{ return_id: string | null }>(`select return_id from sandbox.breb_incoming where provider_transfer_id = ?`, [ptid])
            )[0]!.return_id;
            const winner = p.status === 'ASSIGNED' ? 'assign' : p.status === 'RETURNED' ? 'return' : null;
            if (!winner) found.push(`ends ${p.status}`);
            if (winner === 'assign' && (assigned !== 1 || returned !== 0 || atNetwork !== null))
              found.push(`assigned, yet ${assigned} assignment / ${returned} return postings, network return ${atNetwork}`);
            if (winner === 'return' && (returned !== 1 || assigned !== 0 || atNetwork !== p.depositId))
              found.push(`returned, yet ${returned} return / ${assigned} assignment postings, network return ${atNetwork}`);
            if ((await h.brebAvailable(co)) !== (winner === 'assign' ? AMOUNT : 0n)) found.push(`wallet ${await h.brebAvailable(co)}`);
            for (const o of outcomes) {
              const ok = o.op === winner ? ['ASSIGNED', 'REVERSED'].includes(o.result) || o.result === p.status : o.result === 'INVALID_STATE_TRANSITION';
              if (!ok) found.push(`${o.op} answered ${o.result} (winner ${winner})`);
            }
            if (found.length > 0) throw new Error(`${found.join('\n')}\nscenario ${JSON.stringify(scenario)}\npoints in order:\n  ${c.trace.join('\n  ')}`);
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
  }, 300_000);
});
