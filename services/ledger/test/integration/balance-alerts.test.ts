import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { createLogger } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { ledgerV1, walletEventsV1 } from '@wallet/proto';
import { BalanceAlertEvaluator, SetBalanceAlert } from '../../src/app/balance-alerts.js';
import { ledgerDeps } from '../../src/app/deps.js';
import { SqlLedgerStore } from '../../src/persistence/ledger.store.js';
import { Rail, countRows, expectLedgerConsistent, failure, startHarness, type Harness } from './harness.js';

const { BalanceAlertState: State, BalanceAlertKind: Kind } = ledgerV1;

/** Balance alerts (docs/balance-alerts.md): thresholds crossed both ways, once each, through gRPC, on real Postgres and NATS. */
describe('Balance alerts', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ balanceAlertIntervalMs: 50 });
  });
  afterAll(() => h?.stop());
  afterEach(() => expectLedgerConsistent(h));

  const ctx = (co: string) => ({ requestId: randomUUID(), companyId: co });
  const setAlert = (co: string, r: ledgerV1.DeepPartial<ledgerV1.SetBalanceAlertRequest>) =>
    h.client.setBalanceAlert(ledgerV1.SetBalanceAlertRequest.fromPartial({ rail: Rail.BREB, ...r }), ctx(co));
  const alerts = async (co: string) => (await h.client.getBalanceAlerts({}, ctx(co))).alerts;
  const history = (co: string, r: ledgerV1.DeepPartial<ledgerV1.ListBalanceAlertEventsRequest> = {}) =>
    h.client.listBalanceAlertEvents(ledgerV1.ListBalanceAlertEventsRequest.fromPartial(r), ctx(co));
  const debit = (co: string, cents: bigint, rail = Rail.BREB) => h.api.chargeFee(co, { rail, feeCents: cents, ivaCents: 0n });
  const credit = (co: string, cents: bigint, rail = Rail.BREB) => h.api.credit(co, { rail, amountCents: cents });

  async function company(breb: bigint, ach = 0n) {
    const co = h.newCompany();
    await h.api.open(co);
    if (breb > 0n) await credit(co, breb);
    if (ach > 0n) await credit(co, ach, Rail.ACH);
    return co;
  }

  /** Waits until every alert of the company was evaluated at its wallet's current version. */
  async function settled(co: string) {
    await eventually(
      async () =>
        (await countRows(
          h,
          `select count(*)::text as n from ledger.balance_alerts a join ledger.wallets w using (company_id, rail)
            where a.company_id = ? and a.evaluated_version < w.version`,
          [co],
        )) === 0,
      10_000,
    );
  }

  const kinds = async (co: string) => (await history(co, { limit: 100 })).items.map((e) => e.kind).reverse();

  it('crosses down once, stays LOW through more debits, recovers only at low + hysteresis', async () => {
    const co = await company(10_000n);
    const set = await setAlert(co, { lowThresholdCents: 5_000n, hysteresisCents: 1_000n });
    expect(set).toMatchObject({ rail: Rail.BREB, enabled: true, lowThresholdCents: 5_000n, hysteresisCents: 1_000n, state: State.NORMAL });
    expect(set.highThresholdCents).toBeUndefined();

    await debit(co, 6_000n); // 4,000 < 5,000
    await settled(co);
    expect(await kinds(co)).toEqual([Kind.LOW]);
    await debit(co, 1_000n); // 3,000: still low, no second alert
    await debit(co, 500n);
    await settled(co);
    await credit(co, 2_900n); // 5,400: above low, below low + hysteresis (6,000)
    await settled(co);
    expect(await kinds(co)).toEqual([Kind.LOW]);
    expect((await alerts(co))[0]!.state).toBe(State.LOW);

    await credit(co, 600n); // 6,000 = low + hysteresis: recovered
    await settled(co);
    expect(await kinds(co)).toEqual([Kind.LOW, Kind.RECOVERED]);
    const [recovered, low] = (await history(co)).items;
    expect(low).toMatchObject({ kind: Kind.LOW, state: State.LOW, rail: Rail.BREB, availableCents: 4_000n, thresholdCents: 5_000n, hysteresisCents: 1_000n });
    expect(recovered).toMatchObject({ kind: Kind.RECOVERED, state: State.NORMAL, availableCents: 6_000n, thresholdCents: 5_000n });
    expect(recovered!.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect((await alerts(co))[0]!.state).toBe(State.NORMAL);
  });

  it('a wallet already below a new low threshold alerts at once, and once', async () => {
    const co = await company(1_000n);
    const set = await setAlert(co, { lowThresholdCents: 5_000n });
    expect(set.state).toBe(State.LOW);
    expect(await kinds(co)).toEqual([Kind.LOW]);
    // The same settings again: evaluated again, nothing crossed.
    expect((await setAlert(co, { lowThresholdCents: 5_000n })).state).toBe(State.LOW);
    await settled(co);
    expect(await kinds(co)).toEqual([Kind.LOW]);
    // A lower threshold under the balance: recovered at once.
    expect((await setAlert(co, { lowThresholdCents: 500n })).state).toBe(State.NORMAL);
    expect(await kinds(co)).toEqual([Kind.LOW, Kind.RECOVERED]);
  });

  it('the high threshold: HIGH above it, NORMAL at high − hysteresis; a jump across both bands tells both crossings', async () => {
    const co = await company(10_000n);
    await setAlert(co, { lowThresholdCents: 5_000n, highThresholdCents: 20_000n, hysteresisCents: 1_000n });
    await credit(co, 15_000n); // 25,000
    await settled(co);
    expect(await kinds(co)).toEqual([Kind.HIGH]);
    await debit(co, 5_500n); // 19,500: still HIGH
    await settled(co);
    expect((await alerts(co))[0]!.state).toBe(State.HIGH);
    await debit(co, 500n); // 19,000 = high − hysteresis
    await settled(co);
    expect(await kinds(co)).toEqual([Kind.HIGH, Kind.NORMAL]);
    await credit(co, 6_000n); // 25,000: HIGH
    await settled(co);
    await debit(co, 24_000n); // 1,000: through both bands between two looks at most
    await settled(co);
    expect(await kinds(co)).toEqual([Kind.HIGH, Kind.NORMAL, Kind.HIGH, Kind.NORMAL, Kind.LOW]);
    expect((await alerts(co))[0]!.state).toBe(State.LOW);
  });

  it('lists both wallets, set or not; low 0 and no high removes an alert and keeps its history', async () => {
    const co = await company(1_000n);
    const before = await alerts(co);
    expect(before.map((a) => [a.rail, a.enabled, a.state, a.walletExists, a.availableCents])).toEqual([
      [Rail.BREB, false, State.NORMAL, true, 1_000n],
      [Rail.ACH, false, State.NORMAL, true, 0n],
    ]);
    await setAlert(co, { rail: Rail.ACH, lowThresholdCents: 100n });
    const [breb, ach] = await alerts(co);
    expect(breb!.enabled).toBe(false);
    expect(ach).toMatchObject({ enabled: true, state: State.LOW, lowThresholdCents: 100n });
    expect(ach!.updatedAt).toMatch(/Z$/);
    const off = await setAlert(co, { rail: Rail.ACH, lowThresholdCents: 0n });
    expect(off).toMatchObject({ enabled: false, state: State.NORMAL });
    expect((await history(co, { rail: Rail.ACH })).items).toHaveLength(1);
    expect((await history(co, { rail: Rail.BREB })).items).toHaveLength(0);
  });

  it('refuses bad settings, naming the fields', async () => {
    const co = await company(0n);
    const e1 = await failure(setAlert(co, { lowThresholdCents: 1_000n, highThresholdCents: 1_500n, hysteresisCents: 500n }));
    expect(e1.code).toBe('INVALID_REQUEST');
    expect(JSON.stringify(e1.details)).toContain('highThresholdCents');
    const e2 = await failure(setAlert(co, { rail: Rail.PSE, lowThresholdCents: -1n, hysteresisCents: -5n }));
    expect(e2.code).toBe('INVALID_REQUEST');
    for (const f of ['rail', 'lowThresholdCents', 'hysteresisCents']) expect(JSON.stringify(e2.details)).toContain(f);
    expect((await failure(history(co, { cursor: 'nope!' }))).code).toBe('INVALID_REQUEST');
    expect((await failure(history(co, { limit: 101 }))).code).toBe('INVALID_REQUEST');
  });

  it('pages the history newest first; another company sees none of it', async () => {
    const co = await company(0n);
    for (let i = 0; i < 3; i++) {
      await setAlert(co, { lowThresholdCents: 100n }); // LOW
      await setAlert(co, { lowThresholdCents: 0n, highThresholdCents: 1n }); // LOW left silently (its threshold is gone)
    }
    await setAlert(co, { lowThresholdCents: 100n });
    const all = (await history(co, { limit: 100 })).items;
    expect(all.length).toBe(4);
    const p1 = await history(co, { limit: 3 });
    expect(p1).toMatchObject({ hasMore: true });
    const p2 = await history(co, { limit: 3, cursor: p1.nextCursor! });
    expect(p2.hasMore).toBe(false);
    expect([...p1.items, ...p2.items].map((e) => e.id)).toEqual(all.map((e) => e.id));
    const other = await company(0n);
    expect((await history(other)).items).toEqual([]);
    expect((await alerts(other)).every((a) => !a.enabled)).toBe(true);
  });

  it('publishes wallet.balance_low / wallet.balance_recovered on the WALLETS stream, with the history row’s id and instant', async () => {
    const nc: NatsConnection = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
    try {
      const stream = `${h.namespace.toUpperCase()}_WALLETS`;
      const jsm = await jetstreamManager(nc);
      await jsm.consumers.add(stream, { durable_name: 'alerts-test', ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
      const co = await company(10_000n);
      await setAlert(co, { lowThresholdCents: 5_000n, hysteresisCents: 100n });
      await debit(co, 9_000n);
      await settled(co);
      await credit(co, 9_000n);
      await settled(co);
      const consumer = await jetstream(nc).consumers.get(stream, 'alerts-test');
      const seen: Array<{ subject: string; e: walletEventsV1.WalletBalanceAlert; raw: Record<string, unknown> }> = [];
      const mine = await eventually(async () => {
        for (;;) {
          const m = await consumer.next({ expires: 1_000 });
          if (!m) break;
          if (!m.subject.includes('.wallet.balance_')) continue;
          const raw = m.json<Record<string, unknown>>();
          seen.push({ subject: m.subject, e: walletEventsV1.WalletBalanceAlert.fromJSON(raw), raw });
        }
        const x = seen.filter((s) => s.e.companyId === co);
        return x.length >= 2 ? x : undefined;
      }, 10_000);
      expect(mine.map((x) => x.subject)).toEqual([`${h.namespace}.wallet.balance_low`, `${h.namespace}.wallet.balance_recovered`]);
      const hist = (await history(co)).items.reverse();
      expect(mine[0]!.e).toMatchObject({
        companyId: co,
        alertId: hist[0]!.id,
        rail: Rail.BREB,
        kind: Kind.LOW,
        state: State.LOW,
        availableCents: 1_000n,
        thresholdCents: 5_000n,
        lowThresholdCents: 5_000n,
        hysteresisCents: 100n,
      });
      expect(mine[0]!.raw.occurredAt).toBe(hist[0]!.occurredAt);
      expect(mine[1]!.e).toMatchObject({ kind: Kind.RECOVERED, alertId: hist[1]!.id, availableCents: 10_000n });
    } finally {
      await nc.close();
    }
  });

  it('a change of settings answers the state decided after it, even when another pass holds the alert right then', async () => {
    const co = await company(1_000n);
    expect((await setAlert(co, { lowThresholdCents: 5_000n })).state).toBe(State.LOW);
    await settled(co);
    const deps = ledgerDeps(new SqlLedgerStore(h.ledger.db), { nudge: () => undefined });
    const real = new BalanceAlertEvaluator(deps, { intervalMs: 60_000 }, createLogger('test', 'silent'));
    let holding: Promise<void> | undefined;
    // Between the new settings and their evaluation, a pass of another replica holds the alert row
    // (locked, not yet evaluated) for 300 ms: the evaluation waits for it instead of skipping it.
    const evaluator = {
      evaluate: async (companyId: string, rail: 'BREB' | 'ACH') => {
        let locked!: () => void;
        const isLocked = new Promise<void>((r) => (locked = r));
        holding = h.ledger.db.tx(async (tx) => {
          await tx.query('select 1 from ledger.balance_alerts where company_id = ? and rail = ? for update', [companyId, rail]);
          locked();
          await new Promise((r) => setTimeout(r, 300));
        });
        await isLocked;
        return real.evaluate(companyId, rail);
      },
    };
    const set = await new SetBalanceAlert(deps, evaluator).execute(co, { rail: 'BREB', lowThresholdCents: 500n, hysteresisCents: 0n });
    await holding;
    expect(set.state).toBe('NORMAL');
    expect(await kinds(co)).toEqual([Kind.LOW, Kind.RECOVERED]);
  });

  it('replicas: evaluators racing on the same database alert each crossing once', async () => {
    const cos = await Promise.all(Array.from({ length: 12 }, () => company(10_000n)));
    for (const co of cos) await setAlert(co, { lowThresholdCents: 5_000n });
    const replicas = Array.from({ length: 3 }, () => {
      const deps = ledgerDeps(new SqlLedgerStore(h.ledger.db), { nudge: () => undefined });
      return new BalanceAlertEvaluator(deps, { intervalMs: 60_000 }, createLogger('test', 'silent'));
    });
    for (let round = 0; round < 3; round++) {
      // Each round crosses every wallet (down, then up past the threshold), while the replicas and the service's own evaluator race.
      await Promise.all(cos.map((co) => (round % 2 === 0 ? debit(co, 6_000n) : credit(co, 6_000n))));
      await Promise.all([...replicas, ...replicas].map((r) => r.tick()));
      for (const co of cos) await settled(co);
    }
    for (const co of cos) expect(await kinds(co)).toEqual([Kind.LOW, Kind.RECOVERED, Kind.LOW]);
    expect(
      await countRows(
        h,
        "select count(*)::text as n from ledger.outbox where subject like '%wallet.balance_%' and payload->>'companyId' = any(string_to_array(?, ','))",
        [cos.join(',')],
      ),
    ).toBe(cos.length * 3);
  });
});
