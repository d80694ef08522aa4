import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { eventually } from '@wallet/platform/testing';
import { walletEventsV1 } from '@wallet/proto';
import { MovementStatus, MovementType, Rail, countRows, expectLedgerConsistent, failure, startHarness, walletOf, type Harness } from './harness.js';

/** Moves between a company's own wallets (docs/wallet-moves.md): one posting, both legs, no fee. */
describe('Move between a company’s own wallets', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h?.stop());
  afterEach(() => expectLedgerConsistent(h));

  async function company(breb: bigint, ach: bigint, rails = [Rail.BREB, Rail.ACH]) {
    const co = h.newCompany();
    await h.api.open(co, rails);
    if (breb > 0n) await h.api.credit(co, { rail: Rail.BREB, amountCents: breb });
    if (ach > 0n) await h.api.credit(co, { rail: Rail.ACH, amountCents: ach });
    return co;
  }
  const available = async (co: string) => {
    const { wallets } = await h.api.balances(co);
    return { BREB: walletOf(wallets, Rail.BREB).availableCents, ACH: walletOf(wallets, Rail.ACH).availableCents };
  };

  it('moves ACH → BREB in one posting of two entries, with a COMPLETED leg on each wallet', async () => {
    const co = await company(0n, 500_000n);
    const r = await h.api.move(co, { fromRail: Rail.ACH, toRail: Rail.BREB, amountCents: 120_000n, reference: 'tope-bre-b', description: 'Tope diario' });
    expect(r.replayed).toBe(false);
    expect(await available(co)).toEqual({ BREB: 120_000n, ACH: 380_000n });
    expect(r.debit).toMatchObject({
      type: MovementType.TRANSFER_OUT,
      rail: Rail.ACH,
      walletRail: Rail.ACH,
      status: MovementStatus.COMPLETED,
      amount: 120_000n,
      totalFee: 0n,
      ivaAmount: 0n,
      netAmount: 120_000n,
      reference: 'tope-bre-b',
      walletMoveId: r.moveId,
      details: { description: 'Tope diario' },
    });
    expect(r.credit).toMatchObject({
      type: MovementType.TRANSFER_IN,
      rail: Rail.BREB,
      walletRail: Rail.BREB,
      status: MovementStatus.COMPLETED,
      amount: 120_000n,
      walletMoveId: r.moveId,
    });
    expect(r.debit!.completedAt).toBe(r.debit!.createdAt);
    // One posting (the move's id), two entries; each wallet's version moved once.
    expect(await countRows(h, "select count(*)::text as n from ledger.postings where id = ? and kind = 'move'", [r.moveId])).toBe(1);
    expect(await countRows(h, 'select count(*)::text as n from ledger.entries where posting_id = ?', [r.moveId])).toBe(2);
    const { wallets } = await h.api.balances(co);
    expect(walletOf(wallets, Rail.ACH).version).toBe(2n);
    expect(walletOf(wallets, Rail.BREB).version).toBe(1n);
    // Each leg is in its own wallet's listing, and reads back by id.
    const breb = await h.api.list(co, { rail: Rail.BREB });
    expect(breb.items.map((i) => i.id)).toEqual([r.credit!.id]);
    expect((await h.api.movement(co, r.debit!.id)).walletMoveId).toBe(r.moveId);
    expect(await h.api.getMove(co, r.moveId)).toEqual({ ...r, replayed: false });
  });

  it('moves BREB → ACH, the whole available balance', async () => {
    const co = await company(75_000n, 0n);
    const r = await h.api.move(co, { fromRail: Rail.BREB, toRail: Rail.ACH, amountCents: 75_000n });
    expect(await available(co)).toEqual({ BREB: 0n, ACH: 75_000n });
    expect(r.debit!.reference).toBeUndefined();
    expect(r.debit!.details).toEqual({});
  });

  it('is idempotent on the company’s key: a replay answers the first move; another body under it is REFERENCE_CONFLICT', async () => {
    const co = await company(0n, 100_000n);
    const first = await h.api.move(co, { idempotencyKey: 'k-1', amountCents: 10_000n, apiKeyId: 'key-a' });
    // From another of the company's API keys, the same key and body are the same move.
    const again = await h.api.move(co, { idempotencyKey: 'k-1', amountCents: 10_000n, apiKeyId: 'key-b' });
    expect(again).toEqual({ ...first, replayed: true });
    expect((await failure(h.api.move(co, { idempotencyKey: 'k-1', amountCents: 10_001n }))).code).toBe('REFERENCE_CONFLICT');
    expect(await available(co)).toEqual({ BREB: 10_000n, ACH: 90_000n });
    // The key is the company's own: another company's move under it is its own move.
    const other = await company(0n, 5_000n);
    const theirs = await h.api.move(other, { idempotencyKey: 'k-1', amountCents: 10_000n - 5_000n });
    expect(theirs.replayed).toBe(false);
    expect(theirs.moveId).not.toBe(first.moveId);
  });

  it('refuses what the wallet does not cover (INSUFFICIENT_BALANCE) and writes nothing', async () => {
    const co = await company(1_000n, 50_000n);
    expect((await failure(h.api.move(co, { fromRail: Rail.BREB, toRail: Rail.ACH, amountCents: 1_001n }))).code).toBe('INSUFFICIENT_BALANCE');
    expect(await available(co)).toEqual({ BREB: 1_000n, ACH: 50_000n });
    expect(await countRows(h, "select count(*)::text as n from ledger.postings where company_id = ? and kind = 'move'", [co])).toBe(0);
  });

  it('needs both wallets: FAST_WALLET_MISSING without BREB, WALLET_NOT_PROVISIONED without ACH or any; nothing written', async () => {
    const achOnly = await company(0n, 10_000n, [Rail.ACH]);
    expect((await failure(h.api.move(achOnly, { fromRail: Rail.ACH, toRail: Rail.BREB, amountCents: 100n }))).code).toBe('FAST_WALLET_MISSING');
    const brebOnly = await company(10_000n, 0n, [Rail.BREB]);
    expect((await failure(h.api.move(brebOnly, { fromRail: Rail.BREB, toRail: Rail.ACH, amountCents: 100n }))).code).toBe('WALLET_NOT_PROVISIONED');
    expect((await failure(h.api.move(h.newCompany(), { amountCents: 100n }))).code).toBe('WALLET_NOT_PROVISIONED');
    expect(await available(achOnly).catch(() => 'no BREB')).toBe('no BREB');
    const { wallets } = await h.api.balances(achOnly);
    expect(walletOf(wallets, Rail.ACH)).toMatchObject({ availableCents: 10_000n, version: 1n });
  });

  it('refuses bad commands field by field', async () => {
    const co = await company(0n, 10_000n);
    const e = await failure(h.api.move(co, { fromRail: Rail.ACH, toRail: Rail.ACH, amountCents: 0n, reference: 'x'.repeat(101), idempotencyKey: '' }));
    expect(e.code).toBe('INVALID_REQUEST');
    expect(JSON.stringify(e.details)).toEqual(expect.stringContaining('amountCents'));
    for (const field of ['to', 'reference', 'idempotencyKey']) expect(JSON.stringify(e.details)).toEqual(expect.stringContaining(field));
    expect((await failure(h.api.move(co, { fromRail: Rail.PSE, amountCents: 1n }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.move(undefined, { amountCents: 1n }))).code).toBeDefined();
  });

  it('another company’s move reads as not found, as does an unknown or malformed id', async () => {
    const co = await company(0n, 10_000n);
    const r = await h.api.move(co, { amountCents: 1_000n });
    for (const [who, id] of [
      [h.newCompany(), r.moveId],
      [co, '00000000-0000-4000-8000-000000000000'],
      [co, 'not-a-uuid'],
      [co, r.debit!.id], // a leg's id is not the move's
    ] as const) {
      expect((await failure(h.api.getMove(who, id))).code).toBe('WALLET_MOVE_NOT_FOUND');
    }
  });

  it('concurrent moves never overdraw: 10 of 100 from 500 → exactly 5 applied', async () => {
    const co = await company(0n, 500n);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => h.api.move(co, { amountCents: 100n })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    expect(ok).toHaveLength(5);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as { code: string }).code).toBe('INSUFFICIENT_BALANCE');
    expect(await available(co)).toEqual({ BREB: 500n, ACH: 0n });
  });

  it('opposite moves at once lock both wallets in one order: no deadlock, no lost update', async () => {
    const co = await company(100_000n, 100_000n);
    const calls = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0
        ? h.api.move(co, { fromRail: Rail.ACH, toRail: Rail.BREB, amountCents: 1_000n })
        : h.api.move(co, { fromRail: Rail.BREB, toRail: Rail.ACH, amountCents: 700n }),
    );
    const results = await Promise.allSettled(calls);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(await available(co)).toEqual({ BREB: 100_000n + 20n * 1_000n - 20n * 700n, ACH: 100_000n - 20n * 1_000n + 20n * 700n });
  });

  it('a leg is no transfer: a status change or an inflow reversal cannot touch it', async () => {
    const co = await company(0n, 10_000n);
    const r = await h.api.move(co, { idempotencyKey: 'leg', amountCents: 4_000n });
    const ctx = { requestId: 'leg', companyId: co };
    await failure(h.client.setMovementStatus({ movementId: r.debit!.id, status: MovementStatus.PENDING, expectedStatus: MovementStatus.COMPLETED }, ctx));
    const reversal = await failure(h.client.reverseInflow({ idempotencyKey: `rev-${r.moveId}`, originalIdempotencyKey: `move:${co}:leg` }, ctx));
    expect(reversal.code).toBe('TRANSACTION_NOT_FOUND');
    expect((await h.api.getMove(co, r.moveId)).credit!.status).toBe(MovementStatus.COMPLETED);
    expect(await available(co)).toEqual({ BREB: 4_000n, ACH: 6_000n });
  });

  it('publishes wallet.moved on the WALLETS stream, from the move’s own statement', async () => {
    const nc: NatsConnection = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
    try {
      const stream = `${h.namespace.toUpperCase()}_WALLETS`;
      const jsm = await jetstreamManager(nc);
      await jsm.consumers.add(stream, { durable_name: 'moves-test', ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
      const co = await company(0n, 10_000n);
      const r = await h.api.move(co, { amountCents: 2_500n, reference: 'ref-ev', description: 'Nómina' });
      const consumer = await jetstream(nc).consumers.get(stream, 'moves-test');
      const events = await eventually(async () => {
        const seen: Array<{ subject: string; e: walletEventsV1.WalletMoved; occurredAt: unknown }> = [];
        for (;;) {
          const m = await consumer.next({ expires: 1_000 });
          if (!m) break;
          const raw = m.json<{ occurredAt?: unknown }>();
          seen.push({ subject: m.subject, e: walletEventsV1.WalletMoved.fromJSON(raw), occurredAt: raw.occurredAt });
        }
        const mine = seen.filter((x) => x.e.moveId === r.moveId);
        return mine.length > 0 ? mine : undefined;
      }, 10_000);
      expect(events).toHaveLength(1);
      expect(events[0]!.subject).toBe(`${h.namespace}.wallet.moved`);
      // The move's own instant, exactly as its legs show it (microseconds).
      expect(events[0]!.occurredAt).toBe(r.debit!.createdAt);
      expect(events[0]!.e).toMatchObject({
        companyId: co,
        moveId: r.moveId,
        fromRail: Rail.ACH,
        toRail: Rail.BREB,
        amountCents: 2_500n,
        reference: 'ref-ev',
        description: 'Nómina',
        debitMovementId: r.debit!.id,
        creditMovementId: r.credit!.id,
      });
    } finally {
      await nc.close();
    }
  });
});
