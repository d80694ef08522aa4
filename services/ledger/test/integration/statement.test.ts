import { randomUUID } from 'node:crypto';
import { instantFromDate, instantMicros, type Instant } from '@wallet/platform';
import { meshClient } from '@wallet/platform/testing';
import { ledgerV1 } from '@wallet/proto';
import { MovementStatus, MovementType, Rail, expectLedgerConsistent, failure, fee, startHarness, type Harness } from './harness.js';

/**
 * StreamStatement over the real gRPC server (mutual TLS, the gateway identity with its signed caller
 * context) on a real Postgres: the lines of (from, to] added to GetBalanceAt(from) give exactly
 * GetBalanceAt(to), with a transfer pending at `to`, one reserved before `from` and released in the
 * range, fees and IVA; keyset batches across many pages; refusals.
 */
describe('StreamStatement: the lines between two instants', () => {
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

  const ctx = (co?: string) => ({ requestId: randomUUID(), ...(co ? { companyId: co } : {}) });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const mark = async (): Promise<Instant> => {
    await sleep(5);
    const t = instantFromDate(new Date());
    await sleep(5);
    return t;
  };
  const balanceAt = async (co: string, rail: ledgerV1.Rail, at: Instant) =>
    h.client.getBalanceAt(ledgerV1.GetBalanceAtRequest.fromPartial({ rail, at }), ctx(co));
  async function statement(co: string, rail: ledgerV1.Rail, from: Instant, to: Instant, batchSize = 0) {
    const batches: ledgerV1.StatementLine[][] = [];
    for await (const b of h.client.streamStatement(ledgerV1.StreamStatementRequest.fromPartial({ rail, from, to, batchSize }), ctx(co))) batches.push(b.lines);
    return { batches, lines: batches.flat() };
  }
  const EPOCH = '1970-01-01T00:00:00.000000Z';
  const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

  it('opening + lines = closing, both the journal; a send pending at `to`, a release of an earlier reserve, fees and IVA', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 1_000_000n });
    const early = await h.api.reserve(co, { amount: 50_000n, fee: fee(100n, 0n, 19n) }); // reserved before `from`
    const from = await mark();
    const ok = await h.api.reserve(co, { amount: 100_000n, fee: fee(500n, 50n, 105n) });
    await h.api.commit(co, ok.hold!.id);
    await h.api.release(co, early.hold!.id, { errorMessage: 'rechazada' }); // given back in the range
    await h.api.chargeFee(co, { feeCents: 1_000n, ivaCents: 190n });
    const pending = await h.api.reserve(co, { amount: 30_000n, fee: fee(200n, 0n, 38n) }); // still pending at `to`
    const to = await mark();
    await h.api.commit(co, pending.hold!.id); // after `to`: not in the statement
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 5n });

    const opening = await balanceAt(co, Rail.BREB, from);
    const closing = await balanceAt(co, Rail.BREB, to);
    expect(opening).toMatchObject({ availableCents: 1_000_000n - 50_119n, pendingOutCents: 50_119n });
    const { lines } = await statement(co, Rail.BREB, from, to);
    expect(lines.map((l) => [l.postingKind, l.effectCents, l.feeCents, l.ivaCents, l.movement?.type, l.movement?.status])).toEqual([
      ['reserve', -100_655n, 550n, 105n, MovementType.TRANSFER_OUT, MovementStatus.COMPLETED],
      ['release', 50_119n, -100n, -19n, MovementType.TRANSFER_OUT, MovementStatus.FAILED],
      ['fee_charge', -1_190n, 1_000n, 190n, MovementType.FEE_CHARGE, MovementStatus.COMPLETED],
      ['reserve', -30_238n, 200n, 38n, MovementType.TRANSFER_OUT, MovementStatus.COMPLETED], // its status now; pending at `to`
    ]);
    expect(lines[0]!.movement!.id).toBe(ok.movement!.id);
    expect(lines[1]!.movement!.id).toBe(early.movement!.id);
    for (let i = 1; i < lines.length; i++) expect(instantMicros(lines[i]!.postedAt)).toBeGreaterThanOrEqual(instantMicros(lines[i - 1]!.postedAt));
    expect(opening.availableCents + sum(lines.map((l) => l.effectCents))).toBe(closing.availableCents);
    expect(closing).toMatchObject({ availableCents: 1_000_000n - 50_119n - 100_655n + 50_119n - 1_190n - 30_238n, pendingOutCents: 30_238n });
  });

  it("an ACH wallet: PSE inflow (fee deducted) and its reversal; the BREB wallet's lines are not in it", async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const from = await mark();
    const key = `inflow-${randomUUID()}`;
    await h.api.pseInflow(co, key);
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 9_999n });
    await h.api.reverseInflow(co, { originalIdempotencyKey: key });
    const to = await mark();
    const { lines } = await statement(co, Rail.ACH, from, to);
    expect(lines.map((l) => [l.postingKind, l.effectCents, l.feeCents, l.ivaCents])).toEqual([
      ['inflow', 98_810n, 1_000n, 190n],
      ['reversal', -98_810n, -1_000n, -190n],
    ]);
    expect((await statement(co, Rail.BREB, from, to)).lines.map((l) => [l.postingKind, l.effectCents])).toEqual([['credit', 9_999n]]);
  });

  it("a move between the company's wallets is a line on each, with that wallet's own leg", async () => {
    const co = h.newCompany();
    await h.api.open(co);
    await h.api.credit(co, { rail: Rail.ACH, amountCents: 50_000n });
    const from = await mark();
    const m = await h.api.move(co, { fromRail: Rail.ACH, toRail: Rail.BREB, amountCents: 20_000n, description: 'Tope Bre-B' });
    const to = await mark();
    const ach = (await statement(co, Rail.ACH, from, to)).lines;
    const breb = (await statement(co, Rail.BREB, from, to)).lines;
    expect(ach.map((l) => [l.postingId, l.postingKind, l.effectCents, l.feeCents, l.movement?.id, l.movement?.type])).toEqual([
      [m.moveId, 'move', -20_000n, 0n, m.debit!.id, MovementType.TRANSFER_OUT],
    ]);
    expect(breb.map((l) => [l.postingId, l.postingKind, l.effectCents, l.feeCents, l.movement?.id, l.movement?.type])).toEqual([
      [m.moveId, 'move', 20_000n, 0n, m.credit!.id, MovementType.TRANSFER_IN],
    ]);
    expect((await balanceAt(co, Rail.BREB, to)).availableCents - (await balanceAt(co, Rail.BREB, from)).availableCents).toBe(20_000n);
  });

  it("reads many keyset pages in order, none lost or repeated; another company's postings never appear", async () => {
    const co = h.newCompany();
    const other = h.newCompany();
    await h.api.open(co);
    await h.api.open(other);
    const from = await mark();
    const n = 230;
    for (let i = 0; i < n; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, j) => h.api.credit(co, { rail: Rail.BREB, amountCents: BigInt(i + j + 1) })));
      await h.api.credit(other, { rail: Rail.BREB, amountCents: 1n });
    }
    const to = await mark();
    const { batches, lines } = await statement(co, Rail.BREB, from, to, 7);
    expect(batches.length).toBe(Math.ceil(n / 7));
    expect(batches.slice(0, -1).every((b) => b.length === 7)).toBe(true);
    expect(new Set(lines.map((l) => l.postingId)).size).toBe(n);
    expect(sum(lines.map((l) => l.effectCents))).toBe(BigInt((n * (n + 1)) / 2));
    const keys = lines.map((l) => [instantMicros(l.postedAt), l.postingId] as const);
    const sorted = [...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : 1));
    expect(keys.map((k) => k[0])).toEqual(sorted.map((k) => k[0]));
    const closing = await balanceAt(co, Rail.BREB, to);
    expect(closing.availableCents).toBe(BigInt((n * (n + 1)) / 2));
    expect((await statement(co, Rail.BREB, EPOCH, from)).lines).toEqual([]);
  });

  it("a line's own postedAt (microseconds, exactly the journal's) is a bound: statements chained at it hold every line once; history and listing at it count it", async () => {
    const co = h.newCompany();
    await h.api.open(co, [Rail.BREB]);
    const from = await mark();
    // No pause between them: several postings share a millisecond, told apart only by microseconds.
    for (let i = 1; i <= 8; i++) await h.api.credit(co, { rail: Rail.BREB, amountCents: BigInt(i) });
    const to = await mark();
    const all = (await statement(co, Rail.BREB, from, to)).lines;
    expect(all).toHaveLength(8);
    for (const l of all) {
      expect(l.postedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      expect(l.postedAt).toBe(l.movement!.createdAt); // a credit's movement is made with its posting
    }
    const ids = (ls: ledgerV1.StatementLine[]) => ls.map((l) => l.postingId);
    const opening = (await balanceAt(co, Rail.BREB, from)).availableCents;
    for (let k = 0; k < all.length; k++) {
      const cut = all[k]!.postedAt;
      // Postings of one instant (if any) fall on the same side together.
      const upTo = all.filter((l) => l.postedAt <= cut);
      const first = await statement(co, Rail.BREB, from, cut);
      const next = await statement(co, Rail.BREB, cut, to);
      expect(ids(first.lines)).toEqual(ids(upTo));
      expect(ids(first.lines)).toContain(all[k]!.postingId);
      expect(ids(next.lines)).not.toContain(all[k]!.postingId);
      expect([...ids(first.lines), ...ids(next.lines)]).toEqual(ids(all));
      const at = await balanceAt(co, Rail.BREB, cut);
      expect(at.availableCents).toBe(opening + sum(upTo.map((l) => l.effectCents)));
      expect(at.at).toBe(cut);
      // The listing's bounds are inclusive: the movement made at `cut` is in both.
      const mid = all[k]!.movement!.id;
      expect((await h.api.list(co, { to: cut, limit: 100 })).items.map((m) => m.id)).toContain(mid);
      expect((await h.api.list(co, { from: cut, limit: 100 })).items.map((m) => m.id)).toContain(mid);
      expect((await h.api.list(co, { from: cut, to: cut, limit: 100 })).items.map((m) => m.id)).toEqual(
        all.filter((l) => l.postedAt === cut).map((l) => l.movement!.id),
      );
    }
  });

  it('takes bounds with an offset and up to nine fraction digits (past the sixth truncated); refuses other text', async () => {
    const co = h.newCompany();
    await h.api.open(co, [Rail.BREB]);
    const from = await mark();
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 7n });
    const to = await mark();
    const [line] = (await statement(co, Rail.BREB, from, to)).lines;
    const cut = line!.postedAt;
    expect((await statement(co, Rail.BREB, from, `${cut.slice(0, -1)}999Z`)).lines).toHaveLength(1);
    expect((await balanceAt(co, Rail.BREB, `${cut.slice(0, -1)}999Z`)).at).toBe(cut);
    const err = async (r: ledgerV1.DeepPartial<ledgerV1.StreamStatementRequest>) =>
      (
        await failure(
          (async () => {
            for await (const _ of h.client.streamStatement(ledgerV1.StreamStatementRequest.fromPartial(r), ctx(co))) {
              /* drain */
            }
          })(),
        )
      ).code;
    expect(await err({ rail: Rail.BREB, from: '2026-11-01', to })).toBe('INVALID_REQUEST');
    expect(await err({ rail: Rail.BREB, from, to: 'mañana' })).toBe('INVALID_REQUEST');
  });

  it('refuses from >= to, a future `to`, a bad rail or batch size, an unknown wallet, and other identities', async () => {
    const co = h.newCompany();
    await h.api.open(co, [Rail.BREB]);
    const now = instantFromDate(new Date());
    const err = async (r: ledgerV1.DeepPartial<ledgerV1.StreamStatementRequest>, c = co) =>
      (
        await failure(
          (async () => {
            for await (const _ of h.client.streamStatement(ledgerV1.StreamStatementRequest.fromPartial(r), ctx(c))) {
              /* drain */
            }
          })(),
        )
      ).code;
    expect(await err({ rail: Rail.BREB, from: now, to: now })).toBe('INVALID_REQUEST');
    expect(await err({ rail: Rail.BREB, from: EPOCH, to: instantFromDate(new Date(Date.now() + 60_000)) })).toBe('INVALID_REQUEST');
    expect(await err({ rail: Rail.BREB, to: now })).toBe('INVALID_REQUEST');
    expect(await err({ rail: Rail.PSE, from: EPOCH, to: now })).toBe('INVALID_REQUEST');
    expect(await err({ rail: Rail.BREB, from: EPOCH, to: now, batchSize: 1_001 })).toBe('INVALID_REQUEST');
    expect(await err({ rail: Rail.ACH, from: EPOCH, to: now })).toBe('WALLET_NOT_PROVISIONED');
    for (const as of ['transfer', 'ops'] as const) {
      const c = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, h.ledger.address, as, 'ledger', 10_000);
      try {
        const e = await failure(
          (async () => {
            for await (const _ of c.streamStatement(ledgerV1.StreamStatementRequest.fromPartial({ rail: Rail.BREB, from: EPOCH, to: now }), ctx(co))) {
              /* drain */
            }
          })(),
        );
        expect(e.code).toBe('CALLER_NOT_ALLOWED');
      } finally {
        c.close();
      }
    }
  });
});
