import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { eventually } from '@wallet/platform/testing';
import { eventsV1, ledgerV1 } from '@wallet/proto';
import { InflowSource, NATS_URL, countRows, Rail, expectLedgerConsistent, fee, startHarness, zeroFee, type Harness } from './harness.js';

interface Received {
  subject: string;
  ceId: string;
  ceType: string;
  ceSource: string;
  payload: Record<string, unknown>;
}

describe('ledger events on JetStream', () => {
  let h: Harness;
  let nc: NatsConnection;
  const received: Received[] = [];
  let stopConsuming: () => Promise<void>;

  beforeAll(async () => {
    h = await startHarness();
    nc = await connect({ servers: NATS_URL });
    const stream = `${h.namespace.toUpperCase()}_LEDGER`;
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add(stream, { durable_name: 'test', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All });
    const messages = await jetstream(nc)
      .consumers.get(stream, 'test')
      .then((c) => c.consume());
    const loop = (async () => {
      for await (const m of messages) {
        received.push({
          subject: m.subject,
          ceId: m.headers?.get('ce-id') ?? '',
          ceType: m.headers?.get('ce-type') ?? '',
          ceSource: m.headers?.get('ce-source') ?? '',
          payload: m.json(),
        });
        m.ack();
      }
    })();
    stopConsuming = async () => {
      await messages.close();
      await loop;
    };
  });
  afterAll(async () => {
    await stopConsuming?.();
    await nc?.close();
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerConsistent(h);
  });

  it('publishes one event per posting, with CloudEvents headers, after commit', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    await h.api.open(co); // nothing new: no second wallets_opened
    const credit = await h.api.credit(co, { rail: Rail.BREB, amountCents: 10_000n, idempotencyKey: `k-${co}` });
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 10_000n, idempotencyKey: `k-${co}` }); // replay: no event
    const r1 = await h.api.reserve(co, { amount: 1_000n, fee: fee(100n, 0n, 19n) });
    const r2 = await h.api.reserve(co, { amount: 2_000n });
    await h.api.commit(co, r1.hold!.id);
    await h.api.release(co, r2.hold!.id);
    await h.api.chargeFee(co, { feeCents: 50n, ivaCents: 0n });
    await h.api.inflow(co, { source: InflowSource.BREB, grossCents: 500n, fee: zeroFee() });
    await h.api.inflow(co, { source: InflowSource.BREB, grossCents: 500n, assign: false });
    await h.api.reserve(h.newCompany(), { amount: 1n }).catch(() => undefined); // refused: no event

    const mine = () => received.filter((r) => r.payload.companyId === co);
    await eventually(async () => mine().length >= 9, 10_000);
    await new Promise((r) => setTimeout(r, 300)); // nothing else arrives
    const events = mine();
    expect(events.map((e) => e.ceType)).toEqual([
      'ledger.wallets_opened',
      'ledger.credited',
      'ledger.reserved',
      'ledger.reserved',
      'ledger.committed',
      'ledger.released',
      'ledger.fee_charged',
      'ledger.inflow_recorded',
      'ledger.inflow_recorded',
    ]);
    for (const e of events) {
      expect(e.subject).toBe(`${h.namespace}.${e.ceType}`);
      expect(e.ceId).toBe(e.payload.eventId);
      expect(e.ceSource).toBe('ledger');
    }
    expect(new Set(events.map((e) => e.ceId)).size).toBe(events.length);
    const opened = eventsV1.LedgerWalletsOpened.fromJSON(events[0]!.payload);
    expect(opened.rails).toEqual([Rail.BREB, Rail.ACH]);

    const postings = events.slice(1).map((e) => eventsV1.LedgerPostingRecorded.fromJSON(e.payload));
    expect(new Set(postings.map((p) => p.postingId)).size).toBe(8);
    for (const p of postings) expect(p.entries.reduce((s, e) => s + e.amount, 0n)).toBe(0n);
    expect(postings[0]).toMatchObject({
      postingId: credit.postingId,
      kind: 'credit',
      companyId: co,
      rail: ledgerV1.Rail.BREB,
      movementId: credit.movement!.id,
      idempotencyKey: `k-${co}`,
      entries: [
        { account: 'funding', amount: -10_000n },
        { account: `wallet_available:${co}:BREB`, amount: 10_000n },
      ],
    });
    expect(postings[0]!.occurredAt).toBeInstanceOf(Date);
    expect(postings[3]).toMatchObject({ kind: 'commit', holdId: r1.hold!.id, movementId: r1.movement!.id });
    expect(postings[7]).toMatchObject({
      kind: 'inflow',
      entries: [
        { account: 'breb_settlement', amount: -500n },
        { account: 'unassigned_funds:BREB', amount: 500n },
      ],
    });
    expect(postings[7]!.movementId).toBeUndefined();

    // Every outbox row was relayed, exactly once per event id.
    await eventually(async () => {
      return (await countRows(h, 'select count(*)::text as n from ledger.outbox where published_at is null')) === 0;
    });
    const n = await countRows(h, 'select count(*)::text as n from ledger.outbox');
    expect(received.filter((r) => r.subject.startsWith(`${h.namespace}.ledger.`))).toHaveLength(n);
  });

  it('concurrent identical reserves publish one event', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    await h.api.credit(co, { amountCents: 5_000n });
    const req = { idempotencyKey: `same-${randomUUID()}`, amount: 1_000n, movement: { id: randomUUID(), status: ledgerV1.MovementStatus.PENDING } };
    await Promise.all(Array.from({ length: 8 }, () => h.api.reserve(co, req)));
    await eventually(async () => received.filter((r) => r.payload.companyId === co && r.ceType === 'ledger.reserved').length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(received.filter((r) => r.payload.companyId === co && r.ceType === 'ledger.reserved')).toHaveLength(1);
  });
});
