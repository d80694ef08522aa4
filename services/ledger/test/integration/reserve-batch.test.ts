import { randomUUID } from 'node:crypto';
import { ledgerV1 } from '@wallet/proto';
import {
  FeeOperation,
  HoldStatus,
  MovementStatus,
  MovementType,
  Rail,
  countRows,
  expectLedgerConsistent,
  failure,
  fee,
  fundedCompany,
  startHarness,
  walletOf,
  zeroFee,
  type Harness,
} from './harness.js';

const ctx = (companyId: string) => ({ companyId, requestId: randomUUID() });
type Item = ledgerV1.ReserveRequest;

/** ReserveBatch (bulk payouts, docs/batches.md): N holds in one transaction, all or nothing; ComputeFeesBatch. */
describe('ReserveBatch', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerConsistent(h);
  });

  const funded = (breb: bigint, ach: bigint) => fundedCompany(h, breb, ach);
  /** One send of a batch, as the transfer service builds it: key `transfer:<id>:reserve`, movement id = transfer id. */
  function item(rail: ledgerV1.Rail, amount: bigint, f = zeroFee(), batchId = randomUUID(), status = MovementStatus.PENDING): Item {
    const id = randomUUID();
    return ledgerV1.ReserveRequest.fromPartial({
      idempotencyKey: `transfer:${id}:reserve`,
      rail,
      amount,
      fee: f,
      movement: { id, status, reference: `ref-${id.slice(0, 8)}`, details: { batchId, targetName: 'Ana Pérez', bankAccountNumber: '0001234567' } },
    });
  }
  const batch = (co: string, items: ledgerV1.DeepPartial<Item>[]) => h.client.reserveBatch(ledgerV1.ReserveBatchRequest.fromPartial({ items }), ctx(co));
  const total = (items: Item[], rail: ledgerV1.Rail) =>
    items.filter((i) => i.rail === rail).reduce((s, i) => s + i.amount! + i.fee!.subtotalFee! + i.fee!.ivaAmount!, 0n);
  const balances = async (co: string) => {
    const ws = (await h.api.balances(co)).wallets;
    return { breb: walletOf(ws, Rail.BREB), ach: walletOf(ws, Rail.ACH) };
  };
  const writtenFor = (items: Item[]) =>
    countRows(h, 'select count(*)::text as n from ledger.postings where idempotency_key = any(array[?]::text[])', [items.map((i) => i.idempotencyKey)]);
  const movementsFor = (items: Item[]) =>
    countRows(h, 'select count(*)::text as n from ledger.movements where id = any(array[?]::uuid[])', [items.map((i) => i.movement!.id)]);

  it('reserves every item on both rails in one call: balances move by exactly the sums, N holds, movements and events', async () => {
    const co = await funded(5_000_000n, 9_000_000n);
    const before = await balances(co);
    const batchId = randomUUID();
    const items = [
      item(Rail.BREB, 100_000n, fee(500n, 25n, 100n), batchId),
      item(Rail.ACH, 2_000_000n, fee(1_000n, 0n, 190n), batchId),
      item(Rail.BREB, 250_000n, fee(500n, 63n, 0n), batchId, MovementStatus.AWAITING_APPROVAL),
      item(Rail.ACH, 10_000n, zeroFee(), batchId),
      item(Rail.BREB, 1_000n, zeroFee(), batchId),
    ];
    const r = await batch(co, items);
    expect(r.replayed).toBe(false);
    expect(r.holdIds).toHaveLength(items.length);
    expect(new Set(r.holdIds).size).toBe(items.length);

    const after = await balances(co);
    const brebT = total(items, Rail.BREB);
    const achT = total(items, Rail.ACH);
    expect(brebT).toBe(100_625n + 250_563n + 1_000n);
    expect(after.breb).toMatchObject({ availableCents: before.breb.availableCents - brebT, pendingOutCents: brebT, version: before.breb.version + 3n });
    expect(after.ach).toMatchObject({ availableCents: before.ach.availableCents - achT, pendingOutCents: achT, version: before.ach.version + 2n });

    // Each item: an OPEN hold of its amounts on its movement, in request order.
    const holds = await h.ledger.db.query<{ id: string; status: string; rail: string; total: string; movement_id: string }>(
      'select id::text as id, status, rail, total::text as total, movement_id::text as movement_id from ledger.holds where id = any(array[?]::uuid[])',
      [r.holdIds],
    );
    expect(holds).toHaveLength(items.length);
    items.forEach((it, i) => {
      const hold = holds.find((x) => x.id === r.holdIds[i])!;
      expect(hold).toMatchObject({ status: 'OPEN', rail: it.rail === Rail.BREB ? 'BREB' : 'ACH', movement_id: it.movement!.id });
      expect(BigInt(hold.total)).toBe(it.amount! + it.fee!.subtotalFee! + it.fee!.ivaAmount!);
    });
    // Each item: its TRANSFER_OUT movement (id = the transfer id) with the batch id among its details.
    for (const it of items) {
      const m = await h.api.movement(co, it.movement!.id!);
      expect(m).toMatchObject({
        id: it.movement!.id,
        type: MovementType.TRANSFER_OUT,
        rail: it.rail,
        walletRail: it.rail,
        status: it.movement!.status,
        amount: it.amount,
        totalFee: it.fee!.subtotalFee,
        ivaAmount: it.fee!.ivaAmount,
        netAmount: it.amount! - it.fee!.subtotalFee!,
        reference: it.movement!.reference,
        details: { batchId, targetName: 'Ana Pérez', bankAccountNumber: '****4567' },
      });
    }
    const stored = await countRows(h, `select count(*)::text as n from ledger.movements where details->>'batchId' = ?`, [batchId]);
    expect(stored).toBe(items.length);
    // One `ledger.reserved` event per item, naming its hold, like Reserve's.
    const events = await h.ledger.db.query<{ hold_id: string; key: string; kind: string }>(
      `select payload->>'holdId' as hold_id, payload->>'idempotencyKey' as key, payload->>'kind' as kind from ledger.outbox
        where subject = 'ledger.reserved' and payload->>'holdId' = any(array[?]::text[])`,
      [r.holdIds],
    );
    expect(events).toHaveLength(items.length);
    expect(new Set(events.map((e) => e.key))).toEqual(new Set(items.map((i) => i.idempotencyKey)));
    expect(events.every((e) => e.kind === 'reserve')).toBe(true);
    // The postings are Reserve's: kind reserve, each with its movement and hold.
    expect(await countRows(h, `select count(*)::text as n from ledger.postings where kind = 'reserve' and hold_id = any(array[?]::uuid[])`, [r.holdIds])).toBe(
      items.length,
    );

    // Each hold then lives on its own: commit one, release another.
    await h.api.commit(co, r.holdIds[0]!);
    await h.api.release(co, r.holdIds[3]!);
  });

  it('all or nothing: a short wallet refuses the whole batch, naming each short wallet with its exact shortfall', async () => {
    const co = await funded(100_000n, 1_000_000n);
    const before = await balances(co);
    const ok = [item(Rail.ACH, 500_000n, fee(1_000n, 0n, 190n)), item(Rail.ACH, 400_000n)];
    const short = [item(Rail.BREB, 60_000n, fee(500n, 0n, 95n)), item(Rail.BREB, 40_000n)];
    const items = [ok[0]!, short[0]!, ok[1]!, short[1]!];
    const err = await failure(batch(co, items));
    expect(err.code).toBe('INSUFFICIENT_BALANCE');
    expect(err.details).toEqual({ wallets: [{ rail: 'BREB', requiredCents: '100595', availableCents: '100000', shortfallCents: '595' }] });
    expect(await balances(co)).toEqual(before);
    expect(await writtenFor(items)).toBe(0);
    expect(await movementsFor(items)).toBe(0);

    // Both short: one entry per wallet, in rail order.
    const both = [item(Rail.ACH, 1_000_001n), item(Rail.BREB, 100_001n)];
    const err2 = await failure(batch(co, both));
    expect(err2.code).toBe('INSUFFICIENT_BALANCE');
    expect(err2.details).toEqual({
      wallets: [
        { rail: 'BREB', requiredCents: '100001', availableCents: '100000', shortfallCents: '1' },
        { rail: 'ACH', requiredCents: '1000001', availableCents: '1000000', shortfallCents: '1' },
      ],
    });
    expect(await balances(co)).toEqual(before);

    // The keys were not taken: the same items fit once the BREB wallet is covered.
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 595n });
    const r = await batch(co, items);
    expect(r.replayed).toBe(false);
    expect((await balances(co)).breb.availableCents).toBe(0n);
  });

  it('a missing wallet reads as for Reserve: FAST_WALLET_MISSING / WALLET_NOT_PROVISIONED', async () => {
    const achOnly = h.newCompany();
    await h.api.open(achOnly, [Rail.ACH]);
    await h.api.credit(achOnly, { rail: Rail.ACH, amountCents: 1_000_000n });
    expect((await failure(batch(achOnly, [item(Rail.ACH, 1_000n), item(Rail.BREB, 1_000n)]))).code).toBe('FAST_WALLET_MISSING');
    expect((await failure(batch(h.newCompany(), [item(Rail.ACH, 1_000n)]))).code).toBe('WALLET_NOT_PROVISIONED');
    expect(walletOf((await h.api.balances(achOnly)).wallets, Rail.ACH)).toMatchObject({ availableCents: 1_000_000n, pendingOutCents: 0n });
  });

  it('replays the same request with the same holds; a changed item or a partial batch is a REFERENCE_CONFLICT', async () => {
    const co = await funded(1_000_000n, 1_000_000n);
    const items = [item(Rail.BREB, 10_000n, fee(500n, 0n, 95n)), item(Rail.ACH, 20_000n), item(Rail.BREB, 30_000n)];
    const first = await batch(co, items);
    const after = await balances(co);

    const again = await batch(co, items);
    expect(again).toEqual({ holdIds: first.holdIds, replayed: true });
    expect(await balances(co)).toEqual(after);

    const changed = items.map((it, i) => (i === 1 ? { ...it, amount: 20_001n } : it));
    const conflict = await failure(batch(co, changed));
    expect(conflict.code).toBe('REFERENCE_CONFLICT');
    expect(conflict.details).toEqual({ index: 1 });

    const partial = await failure(batch(co, [items[0]!, item(Rail.BREB, 1_000n)]));
    expect(partial.code).toBe('REFERENCE_CONFLICT');
    expect(await balances(co)).toEqual(after);
    expect(await writtenFor(items)).toBe(3);
  });

  it("a single Reserve of an item afterwards replays that item's hold", async () => {
    const co = await funded(1_000_000n, 0n);
    const items = [item(Rail.BREB, 10_000n, fee(500n, 25n, 100n)), item(Rail.BREB, 20_000n)];
    const r = await batch(co, items);
    const after = await balances(co);
    const single = await h.client.reserve(ledgerV1.ReserveRequest.fromPartial(items[1]!), ctx(co));
    expect(single.replayed).toBe(true);
    expect(single.hold).toMatchObject({ id: r.holdIds[1], status: HoldStatus.OPEN, amount: 20_000n });
    expect(single.movement).toMatchObject({ id: items[1]!.movement!.id, details: { batchId: items[1]!.movement!.details!.batchId } });
    const fst = await h.client.reserve(ledgerV1.ReserveRequest.fromPartial(items[0]!), ctx(co));
    expect(fst).toMatchObject({ replayed: true, hold: { id: r.holdIds[0], total: 10_625n } });
    expect(await balances(co)).toEqual(after);
    // Changed, it conflicts, exactly as a Reserve retry with another body does.
    expect((await failure(h.client.reserve(ledgerV1.ReserveRequest.fromPartial({ ...items[0]!, amount: 10_001n }), ctx(co)))).code).toBe('REFERENCE_CONFLICT');
  });

  it('a voided key refuses the batch with RESERVE_VOIDED and writes nothing', async () => {
    const co = await funded(1_000_000n, 1_000_000n);
    const before = await balances(co);
    const items = [item(Rail.BREB, 10_000n), item(Rail.ACH, 10_000n), item(Rail.BREB, 5_000n)];
    const v = await h.client.voidReserve(ledgerV1.VoidReserveRequest.fromPartial({ idempotencyKey: items[2]!.idempotencyKey, rail: Rail.BREB }), ctx(co));
    expect(v.voided).toBe(true);
    const err = await failure(batch(co, items));
    expect(err.code).toBe('RESERVE_VOIDED');
    expect(err.details).toEqual({ index: 2 });
    expect(await balances(co)).toEqual(before);
    expect(await writtenFor(items.slice(0, 2))).toBe(0);
    expect(await movementsFor(items)).toBe(0);
  });

  it('checks every item as Reserve does, naming its index; 1 to 10,000 items; keys and movement ids unique', async () => {
    const co = await funded(1_000_000n, 0n);
    const items = [item(Rail.BREB, 1_000n), item(Rail.BREB, 1_000n), item(Rail.BREB, 1_000n), item(Rail.BREB, 0n)];
    items[1] = { ...items[1]!, fee: { ...fee(100n, 0n, 0n), totalCharged: 1n } };
    items[2] = { ...items[2]!, rail: Rail.PSE, movement: { ...items[2]!.movement!, id: 'not-a-uuid' } };
    const err = await failure(batch(co, items));
    expect(err.code).toBe('INVALID_REQUEST');
    const paths = (err.details!.fields as Array<{ path: string }>).map((f) => f.path);
    expect(paths).toEqual(['items.1.fee.totalCharged', 'items.2.rail', 'items.2.movement.id', 'items.3.amount']);

    expect((await failure(batch(co, []))).details).toEqual({ fields: [{ path: 'items', message: 'must have 1 to 10000 items' }] });
    const tooMany = Array.from({ length: 10_001 }, () => ({ idempotencyKey: 'k', rail: Rail.BREB, amount: 1n, fee: zeroFee() }));
    expect((await failure(batch(co, tooMany))).details).toEqual({ fields: [{ path: 'items', message: 'must have 1 to 10000 items' }] });

    const a = item(Rail.BREB, 1_000n);
    const dupKey = await failure(batch(co, [a, item(Rail.BREB, 1_000n), { ...item(Rail.BREB, 1_000n), idempotencyKey: a.idempotencyKey }]));
    expect(dupKey.details).toEqual({ fields: [{ path: 'items.2.idempotencyKey', message: 'repeats item 0' }] });
    const dupMovement = await failure(batch(co, [a, { ...item(Rail.BREB, 1_000n), movement: { ...a.movement, id: a.movement!.id!.toUpperCase() } }]));
    expect(dupMovement.details).toEqual({ fields: [{ path: 'items.1.movement.id', message: 'repeats item 0' }] });

    const capped = await failure(batch(co, [a, item(Rail.BREB, 1_200_000_001n)]));
    expect(capped.code).toBe('AMOUNT_EXCEEDS_BREB_CAP');
    expect(capped.details).toEqual({ index: 1, path: 'items.1.amount' });
    expect(await writtenFor([a])).toBe(0);
  });

  it('two identical batches at once: one applies, the other replays the same holds', async () => {
    for (let round = 0; round < 5; round++) {
      const co = await funded(10_000_000n, 10_000_000n);
      const items = Array.from({ length: 40 }, (_, i) => item(i % 2 ? Rail.ACH : Rail.BREB, 10_000n + BigInt(i), fee(100n, 0n, 19n)));
      const [x, y] = await Promise.all([batch(co, items), batch(co, items)]);
      expect(x.holdIds).toEqual(y.holdIds);
      expect([x.replayed, y.replayed].sort()).toEqual([false, true]);
      const b = await balances(co);
      expect(b.breb.pendingOutCents).toBe(total(items, Rail.BREB));
      expect(b.ach.pendingOutCents).toBe(total(items, Rail.ACH));
      expect(await writtenFor(items)).toBe(items.length);
    }
  });

  it('two different batches racing for a balance that covers one: exactly one wins', async () => {
    for (let round = 0; round < 5; round++) {
      const co = await funded(1_000_000n, 1_000_000n);
      const a = [item(Rail.ACH, 300_000n), item(Rail.BREB, 600_000n), item(Rail.BREB, 100_000n)];
      const b = [item(Rail.BREB, 500_000n), item(Rail.ACH, 10_000n), item(Rail.BREB, 200_000n)];
      const [ra, rb] = await Promise.allSettled([batch(co, a), batch(co, b)]);
      const won = [ra, rb].filter((r) => r.status === 'fulfilled');
      const lost = [ra, rb].filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect((lost[0]!.reason as { code?: string }).code).toBe('INSUFFICIENT_BALANCE');
      const winner = ra.status === 'fulfilled' ? a : b;
      const loser = ra.status === 'fulfilled' ? b : a;
      const bal = await balances(co);
      expect(bal.breb.availableCents).toBe(1_000_000n - total(winner, Rail.BREB));
      expect(bal.ach.availableCents).toBe(1_000_000n - total(winner, Rail.ACH));
      expect(await writtenFor(loser)).toBe(0);
    }
  });

  it('5,000 items in one call', async () => {
    const co = await funded(1_000_000_000n, 1_000_000_000n);
    const batchId = randomUUID();
    const items = Array.from({ length: 5_000 }, (_, i) => item(i % 3 ? Rail.BREB : Rail.ACH, 10_000n + BigInt(i), fee(500n, 25n, 100n), batchId));
    const started = performance.now();
    const r = await batch(co, items);
    const ms = performance.now() - started;
    console.log(`ReserveBatch of ${items.length} items: ${ms.toFixed(0)} ms`);
    expect(r.holdIds).toHaveLength(5_000);
    const b = await balances(co);
    expect(b.breb.pendingOutCents).toBe(total(items, Rail.BREB));
    expect(b.ach.pendingOutCents).toBe(total(items, Rail.ACH));
    expect(b.breb.version + b.ach.version).toBe(2n + 5_000n);
    expect(await countRows(h, `select count(*)::text as n from ledger.movements where details->>'batchId' = ?`, [batchId])).toBe(5_000);
    const started2 = performance.now();
    expect((await batch(co, items)).replayed).toBe(true);
    console.log(`ReserveBatch replay of ${items.length} items: ${(performance.now() - started2).toFixed(0)} ms`);
  });
});

describe('ComputeFeesBatch', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  const feesBatch = (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.ComputeFeesBatchRequest>) =>
    h.client.computeFeesBatch(ledgerV1.ComputeFeesBatchRequest.fromPartial(r), { requestId: randomUUID(), ...(co ? { companyId: co } : {}) });

  it('equals ComputeFees for each amount, in the order given', async () => {
    const co = h.newCompany();
    await h.api.setFee({ operation: FeeOperation.BREB_OUTFLOW, companyId: co, fixedFeeCents: 500n, variableBps: 25 });
    await h.api.setFee({ operation: FeeOperation.ACH_OUTFLOW, fixedFeeCents: 1_000n, variableBps: 7 });
    const amounts = [100n, 19_999n, 20_000n, 1_234_567n, 1_200_000_000n, 1n, 100n];
    for (const [operation, iva] of [
      [FeeOperation.BREB_OUTFLOW, true],
      [FeeOperation.BREB_OUTFLOW, false],
      [FeeOperation.ACH_OUTFLOW, true],
    ] as const) {
      const r = await feesBatch(co, { operation, amounts, ivaApplicable: iva });
      const one = await Promise.all(amounts.map((amount) => h.api.computeFees(co, { operation, amount, ivaApplicable: iva })));
      expect(r.fees).toEqual(one);
    }
    const r = await feesBatch(co, { operation: FeeOperation.BREB_OUTFLOW, amounts: [10_000n], ivaApplicable: true });
    expect(r.fees[0]).toMatchObject({ fixedFee: 500n, variableFee: 25n, subtotalFee: 525n, ivaAmount: 100n, totalCharged: 625n });
  });

  it('refuses non-positive amounts by index, more than 10,000 amounts, and an unknown operation', async () => {
    const co = h.newCompany();
    const err = await failure(feesBatch(co, { operation: FeeOperation.BREB_OUTFLOW, amounts: [1n, 0n, -5n] }));
    expect(err.code).toBe('INVALID_REQUEST');
    expect((err.details!.fields as Array<{ path: string }>).map((f) => f.path)).toEqual(['amounts.1', 'amounts.2']);
    const many = await failure(feesBatch(co, { operation: FeeOperation.BREB_OUTFLOW, amounts: Array.from({ length: 10_001 }, () => 1n) }));
    expect(many.details).toEqual({ fields: [{ path: 'amounts', message: 'must have at most 10000 amounts' }] });
    expect((await failure(feesBatch(co, { amounts: [1n] }))).code).toBe('INVALID_REQUEST');
    const max = await feesBatch(co, { operation: FeeOperation.ACH_OUTFLOW, amounts: Array.from({ length: 10_000 }, (_, i) => BigInt(i + 1)) });
    expect(max.fees).toHaveLength(10_000);
  });
});
