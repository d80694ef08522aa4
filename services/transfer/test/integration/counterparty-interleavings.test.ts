import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { createLogger } from '@wallet/platform';
import { Choreography } from '@wallet/platform/testing';
import type { CounterpartyDeps } from '../../src/app/counterparty-verifier.js';
import type { AchPrenotePort, CounterpartyStore } from '../../src/app/ports.js';
import { counterpartyUseCases } from '../../src/app/use-cases.js';
import { SqlCounterpartyStore } from '../../src/persistence/counterparty.store.js';
import { sagaSettings, startHarness, testProtection, type Harness } from './harness.js';

/**
 * A prenote's callback racing a change of the account, under every interleaving fast-check's
 * scheduler explores, over the real use cases and real Postgres: the callback (the rail accepted the
 * OLD prenote) and the update (a new account) each stop at every store call. Whatever the order,
 * exactly one outcome: the callback applied before the change (VERIFIED, then reset), or ignored;
 * the counterparty always ends PENDING with the new prenote, never VERIFIED by the old one.
 */
const RUNS = Number(process.env.INTERLEAVING_RUNS ?? 25);

describe('counterparty verification: a prenote callback racing an account change (fast-check scheduler)', () => {
  let h: Harness;
  let choreo: Choreography | undefined;
  const schedules = fc.scheduler({
    act: Choreography.act(() => choreo),
  });

  beforeAll(async () => {
    h = await startHarness({ transferEnv: { SWEEPER_INTERVAL_MS: '3600000' } });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  const account = (n: string) => ({
    bankId: 1,
    accountTypeId: 20,
    accountNumber: n,
    documentTypeId: 1,
    documentNumber: '1020304050',
    holderFirstName: 'Ana',
    holderLastName: 'Pérez',
    bankName: 'Bancolombia',
    bankAchCode: '1007',
  });

  function build(c: Choreography) {
    const store = c.wrap('store', new SqlCounterpartyStore(h.transfer!.db, testProtection) as CounterpartyStore, [
      'get',
      'getByPrenote',
      'update',
      'transition',
    ]);
    const prenotes: AchPrenotePort = {
      submitPrenote: async () => ({ outcome: 'accepted' }),
      prenoteStatus: async () => ({ found: true, status: 'PENDING' }),
    };
    const deps = {
      settings: sagaSettings('secret'),
      log: createLogger('counterparty-interleavings', process.env.TEST_LOG_LEVEL ?? 'silent'),
      now: () => new Date(),
      newId: randomUUID,
      eventsWritten: () => undefined,
      counterparties: store,
      prenotes,
      counterpartySettings: { prenoteCheckMs: 3_600_000, retryMs: 3_600_000 },
    } as unknown as CounterpartyDeps;
    return counterpartyUseCases(deps);
  }

  it(`ends PENDING with the new prenote in ${RUNS} explored schedules`, async () => {
    const outcomes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(schedules, async (s) => {
        const c = new Choreography(s);
        choreo = c;
        const uc = build(c);
        const companyId = randomUUID();
        // Outside any actor: no points.
        const created = await uc.create.execute(companyId, { name: 'Carrera', bankAccount: account('55500011122'), tags: [] });
        const old = created.prenoteId!;
        expect(created.status).toBe('PENDING');

        const callback = c.actor('rail', async () => {
          await c.point('callback arrives');
          return uc.prenoteCallback.execute({ type: 'ach.prenote', prenoteId: old, status: 'ACCEPTED', settledAt: new Date().toISOString() });
        });
        const change = c.actor('client', async () => {
          await c.point('update arrives');
          return uc.update.execute(companyId, created.id, { bankAccount: account('55500033344'), replaceTags: false });
        });
        await c.finish();
        const [cb, changed] = await Promise.all([callback, change]);

        const now = await h.transfer!.db.query<{ status: string; prenote_id: string; version: number }>(
          'select status, prenote_id, version from transfer.counterparties where id = ?',
          [created.id],
        );
        const history = await h.transfer!.db.query<{ event: string; verification_id: string }>(
          'select event, verification_id from transfer.counterparty_history where counterparty_id = ? order by seq',
          [created.id],
        );
        const events = history.map((x) => x.event);
        expect(now[0]!.status).toBe('PENDING');
        expect(now[0]!.prenote_id).not.toBe(old);
        expect(changed.prenoteId).toBe(now[0]!.prenote_id);
        expect(events.filter((e) => e === 'identity_changed')).toHaveLength(1);
        // Exactly one outcome for the callback: applied before the change, or ignored.
        const applied = !cb.duplicate;
        if (applied) {
          expect(events).toEqual(['created', 'verify', 'verified', 'identity_changed']);
          expect(history[2]!.verification_id).toBe(old);
          outcomes.add('applied, then reset');
        } else {
          expect(events).toEqual(['created', 'verify', 'identity_changed']);
          outcomes.add('ignored');
        }
        // Nothing decided the new attempt.
        expect(history[history.length - 1]!.verification_id).toBe(now[0]!.prenote_id);
      }),
      {
        numRuns: RUNS,
        ...(process.env.INTERLEAVING_SEED ? { seed: Number(process.env.INTERLEAVING_SEED) } : {}),
        ...(process.env.INTERLEAVING_PATH ? { path: process.env.INTERLEAVING_PATH } : {}),
        endOnFailure: true,
      },
    );
    // Both orders were explored (the property is not vacuous).
    expect([...outcomes].sort()).toEqual(['applied, then reset', 'ignored']);
  }, 120_000);
});
