import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { eventually } from '@wallet/platform/testing';
import { ledgerV1 } from '@wallet/proto';
import {
  HoldStatus,
  MovementStatus,
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

interface Reserved {
  transferId: string;
  holdId: string;
  rail: ledgerV1.Rail;
  amount: bigint;
  fee: bigint;
  iva: bigint;
}

/**
 * CommitBatch (docs/batches.md "Confirmations a page at a time"): many Commits of one company in one
 * transaction, each applied only where its hold is the open hold it expects, written exactly as a
 * single Commit writes it; the others left to a single Commit.
 */
describe('CommitBatch', () => {
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
  /** A send's hold as the transfer service reserves it: key `transfer:<id>:reserve`, movement id = transfer id. */
  async function reserve(co: string, rail: ledgerV1.Rail, amount: bigint, f = zeroFee()): Promise<Reserved> {
    const transferId = randomUUID();
    const r = await h.api.reserve(co, { idempotencyKey: `transfer:${transferId}:reserve`, rail, amount, fee: f, movement: { id: transferId } });
    return { transferId, holdId: r.hold!.id, rail, amount, fee: f.subtotalFee, iva: f.ivaAmount };
  }
  /** Four sends on both rails, with and without fees. */
  const fourSends = async (co: string) => [
    await reserve(co, Rail.BREB, 100_000n, fee(500n, 25n, 100n)),
    await reserve(co, Rail.ACH, 2_000_000n, fee(1_000n, 0n, 190n)),
    await reserve(co, Rail.BREB, 250_000n),
    await reserve(co, Rail.ACH, 10_000n, fee(300n, 0n, 57n)),
  ];
  /** The commit the transfer service sends for `r`, with its expectation. */
  const commitOf = (r: Reserved, over: Partial<ledgerV1.HoldExpectation> = {}): ledgerV1.CommitRequest =>
    ledgerV1.CommitRequest.fromPartial({
      idempotencyKey: `transfer:${r.transferId}:commit`,
      holdId: r.holdId,
      expected: { rail: r.rail, amount: r.amount, fee: r.fee, iva: r.iva, movementId: r.transferId, ...over },
    });
  const commitBatch = (co: string, items: ledgerV1.CommitRequest[]) => h.client.commitBatch(ledgerV1.CommitBatchRequest.fromPartial({ items }), h.ctx(co));
  const balances = async (co: string) => {
    const ws = (await h.api.balances(co)).wallets;
    return { breb: walletOf(ws, Rail.BREB), ach: walletOf(ws, Rail.ACH) };
  };
  const holdTotal = (r: Reserved) => r.amount + r.fee + r.iva;
  /** What a committed send left in the ledger, without ids and instants: to compare a batch's rows with a single Commit's. */
  const rowsOf = async (co: string, r: Reserved) => {
    const [p] = await h.ledger.db.query<{ kind: string; key: string; rail: string; entries: Array<{ account: string; amount: string }> }>(
      `select p.kind, p.idempotency_key as key, p.rail,
              (select json_agg(json_build_object('account', replace(e.account, ?, '<co>'), 'amount', e.amount::text) order by e.seq)
                 from ledger.entries e where e.posting_id = p.id) as entries
         from ledger.postings p where p.hold_id = ?::uuid and p.kind = 'commit'`,
      [co, r.holdId],
    );
    const [m] = await h.ledger.db.query<{ status: string; completed: boolean }>(
      'select status, completed_at is not null as completed from ledger.movements where id = ?::uuid',
      [r.transferId],
    );
    const [hold] = await h.ledger.db.query<{ status: string; closed: boolean }>(
      'select status, closed_at is not null as closed from ledger.holds where id = ?::uuid',
      [r.holdId],
    );
    const events = await countRows(h, `select count(*)::text as n from ledger.outbox where subject = 'ledger.committed' and payload->>'holdId' = ?`, [
      r.holdId,
    ]);
    return { posting: p && { ...p, key: p.key.replace(r.transferId, '<id>') }, movement: m, hold, events };
  };

  it('commits every item in one call, as single Commits would: the same rows, pending lowered by the sums, a later Commit replays', async () => {
    const co = await funded(5_000_000n, 9_000_000n);
    const items = await fourSends(co);
    const before = await balances(co);
    const r = await commitBatch(
      co,
      items.map((i) => commitOf(i)),
    );
    expect(r.items.map((i) => i.applied)).toEqual([true, true, true, true]);
    expect(r.items.every((i) => typeof i.completedAt === 'string' && !Number.isNaN(Date.parse(i.completedAt)))).toBe(true);
    const after = await balances(co);
    const sum = (rail: ledgerV1.Rail) => items.filter((i) => i.rail === rail).reduce((s, i) => s + holdTotal(i), 0n);
    expect(before.breb.pendingOutCents - after.breb.pendingOutCents).toBe(sum(Rail.BREB));
    expect(before.ach.pendingOutCents - after.ach.pendingOutCents).toBe(sum(Rail.ACH));
    expect(after.breb.availableCents).toBe(before.breb.availableCents);
    expect(after.ach.availableCents).toBe(before.ach.availableCents);

    // The same sends in another company, each committed alone: the batch wrote exactly their rows.
    const co2 = await funded(5_000_000n, 9_000_000n);
    const twins = await fourSends(co2);
    for (const t of twins) await h.client.commit(commitOf(t), h.ctx(co2));
    for (let i = 0; i < items.length; i++) {
      const batch = await rowsOf(co, items[i]!);
      expect(batch.posting).toBeDefined();
      expect(batch).toEqual(await rowsOf(co2, twins[i]!));
      expect(batch.hold).toEqual({ status: 'COMMITTED', closed: true });
      expect(batch.movement).toEqual({ status: 'COMPLETED', completed: true });
      expect(batch.events).toBe(1);
    }

    // A later single Commit of an item (the caller retrying) replays: same movement, nothing written.
    const again = await h.client.commit(commitOf(items[0]!), h.ctx(co));
    expect(again.replayed).toBe(true);
    expect(again.hold!.status).toBe(HoldStatus.COMMITTED);
    expect(again.movement!.completedAt).toBe(r.items[0]!.completedAt);
    // And the whole batch again: nothing applies (every hold is closed), nothing moves.
    const twice = await commitBatch(
      co,
      items.map((i) => commitOf(i)),
    );
    expect(twice.items.map((i) => i.applied)).toEqual([false, false, false, false]);
    expect(await balances(co)).toEqual(after);
  });

  it('applies the items whose hold is as expected and leaves the others: released, committed before, other amounts, another company', async () => {
    const co = await funded(9_000_000n, 0n);
    const other = await funded(1_000_000n, 0n);
    const ok1 = await reserve(co, Rail.BREB, 100_000n, fee(500n, 0n, 95n));
    const released = await reserve(co, Rail.BREB, 200_000n);
    const committed = await reserve(co, Rail.BREB, 300_000n);
    const otherAmount = await reserve(co, Rail.BREB, 400_000n);
    const awaiting = await h.api.reserve(co, {
      idempotencyKey: `transfer:${randomUUID()}:reserve`,
      amount: 50_000n,
      movement: { id: randomUUID(), status: MovementStatus.AWAITING_APPROVAL },
    });
    const awaitingItem: Reserved = { transferId: awaiting.movement!.id, holdId: awaiting.hold!.id, rail: Rail.BREB, amount: 50_000n, fee: 0n, iva: 0n };
    const foreign = await reserve(other, Rail.BREB, 10_000n);
    const ok2 = await reserve(co, Rail.BREB, 700_000n);
    await h.api.release(co, released.holdId);
    await h.client.commit(commitOf(committed), h.ctx(co));
    const before = await balances(co);
    const foreignBefore = await balances(other);

    const r = await commitBatch(co, [
      commitOf(ok1),
      commitOf(released),
      commitOf(committed),
      commitOf(otherAmount, { amount: 400_001n }),
      commitOf(awaitingItem),
      commitOf(foreign),
      commitOf(ok2),
    ]);
    expect(r.items.map((i) => i.applied)).toEqual([true, false, false, false, false, false, true]);
    expect(r.items.filter((i) => !i.applied).every((i) => i.completedAt === undefined)).toBe(true);
    const after = await balances(co);
    expect(before.breb.pendingOutCents - after.breb.pendingOutCents).toBe(holdTotal(ok1) + holdTotal(ok2));
    expect(await balances(other)).toEqual(foreignBefore);
    // Nothing of the skipped items was written; a single Commit answers each exactly.
    for (const skipped of [otherAmount, awaitingItem, foreign]) {
      expect(await countRows(h, "select count(*)::text as n from ledger.postings where hold_id = ?::uuid and kind = 'commit'", [skipped.holdId])).toBe(0);
    }
    expect((await failure(h.client.commit(commitOf(released), h.ctx(co)))).code).toBe('INVALID_STATE_TRANSITION');
    expect((await failure(h.client.commit(commitOf(foreign), h.ctx(co)))).code).toBe('HOLD_NOT_FOUND');
    expect((await h.client.commit(commitOf(otherAmount), h.ctx(co))).hold!.status).toBe(HoldStatus.COMMITTED);
    await h.client.commit(commitOf(foreign), h.ctx(other));
  });

  it('closes each hold once when batches, single Commits and Releases of the same holds race', async () => {
    const co = await funded(50_000_000n, 0n);
    const holds: Reserved[] = [];
    for (let i = 0; i < 40; i++) holds.push(await reserve(co, Rail.BREB, BigInt(10_000 + i * 101), i % 3 === 0 ? fee(500n, 7n, 97n) : zeroFee()));
    const before = await balances(co);
    // Two batches over the same holds in opposite orders, single Commits of every fifth, Releases of every seventh.
    const forward = holds.map((x) => commitOf(x));
    const backward = [...forward].reverse();
    const settled = await Promise.allSettled([
      commitBatch(co, forward),
      commitBatch(co, backward),
      ...holds.filter((_, i) => i % 5 === 0).map((x) => h.client.commit(commitOf(x), h.ctx(co))),
      ...holds.filter((_, i) => i % 7 === 3).map((x) => h.api.release(co, x.holdId)),
    ]);
    // A Commit or Release that lost to the other answers INVALID_STATE_TRANSITION; nothing else fails.
    const failures = settled.flatMap((s) => (s.status === 'rejected' ? [(s.reason as { code?: string }).code] : []));
    expect(failures.filter((c) => c !== 'INVALID_STATE_TRANSITION')).toEqual([]);
    const statuses = await h.ledger.db.query<{ id: string; status: string; commits: number; releases: number }>(
      `select h.id::text as id, h.status,
              (select count(*)::int from ledger.postings p where p.hold_id = h.id and p.kind = 'commit') as commits,
              (select count(*)::int from ledger.postings p where p.hold_id = h.id and p.kind = 'release') as releases
         from ledger.holds h where h.id = any(array[?]::uuid[])`,
      [holds.map((x) => x.holdId)],
    );
    expect(statuses).toHaveLength(holds.length);
    for (const s of statuses) {
      expect(s.status === 'COMMITTED' || s.status === 'RELEASED').toBe(true);
      expect(s.commits + s.releases).toBe(1);
      expect(s.commits).toBe(s.status === 'COMMITTED' ? 1 : 0);
    }
    // Every hold closed: pending back to where it was before the holds; available up by what was released.
    const after = await balances(co);
    const released = holds.filter((x) => statuses.find((s) => s.id === x.holdId)!.status === 'RELEASED').reduce((s, x) => s + holdTotal(x), 0n);
    expect(before.breb.pendingOutCents - after.breb.pendingOutCents).toBe(holds.reduce((s, x) => s + holdTotal(x), 0n));
    expect(after.breb.availableCents - before.breb.availableCents).toBe(released);
  });

  it('a batch that queued behind a Release of one of its holds skips that hold once the Release commits', async () => {
    const co = await funded(1_000_000n, 0n);
    const raced = await reserve(co, Rail.BREB, 100_000n);
    const other = await reserve(co, Rail.BREB, 50_000n);
    const before = await balances(co);
    // The test holds the wallet's row: the Release closes the hold (its row locked) and waits on the wallet.
    const blocker = new pg.Client({ connectionString: h.tdb.url });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query("select 1 from ledger.wallets where company_id = $1 and rail = 'BREB' for update", [co]);
      const release = h.api.release(co, raced.holdId);
      await waitForLockWaits(1);
      // The batch reads the hold as OPEN (its snapshot), then queues on the hold's row behind the Release.
      const batch = commitBatch(co, [commitOf(raced), commitOf(other)]);
      await waitForLockWaits(2);
      await blocker.query('commit');
      await release;
      const r = await batch;
      // The hold was the Release's: the batch re-read it after the wait and left it; the other hold is committed.
      expect(r.items.map((i) => i.applied)).toEqual([false, true]);
    } finally {
      await blocker.end();
    }
    const postings = await h.ledger.db.query<{ kind: string }>('select kind from ledger.postings where hold_id = ?::uuid order by kind', [raced.holdId]);
    expect(postings.map((p) => p.kind)).toEqual(['release', 'reserve']);
    const after = await balances(co);
    expect(before.breb.pendingOutCents - after.breb.pendingOutCents).toBe(holdTotal(raced) + holdTotal(other));
    expect(after.breb.availableCents - before.breb.availableCents).toBe(holdTotal(raced));
  });

  /** Until at least `n` backends of this database wait on a lock (the calls above queued where the test put them). */
  async function waitForLockWaits(n: number): Promise<void> {
    await eventually(async () => {
      const rows = await h.ledger.db.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      );
      return rows[0]!.n >= n ? true : undefined;
    }, 10_000);
  }

  it('refuses a malformed batch as a whole (INVALID_REQUEST by item) and needs a company', async () => {
    const co = await funded(1_000_000n, 0n);
    const a = await reserve(co, Rail.BREB, 1_000n);
    const b = await reserve(co, Rail.BREB, 2_000n);
    expect((await failure(commitBatch(co, []))).details).toEqual({ fields: [{ path: 'items', message: 'must have 1 to 10000 items' }] });
    const bad = await failure(
      commitBatch(co, [
        commitOf(a),
        ledgerV1.CommitRequest.fromPartial({ idempotencyKey: `transfer:${b.transferId}:commit`, holdId: b.holdId }),
        commitOf(a),
        ledgerV1.CommitRequest.fromPartial({ idempotencyKey: '', holdId: 'nope', expected: commitOf(b).expected! }),
      ]),
    );
    expect(bad.code).toBe('INVALID_REQUEST');
    expect((bad.details!.fields as Array<{ path: string }>).map((d) => d.path)).toEqual([
      'items.1.expected',
      'items.2.idempotencyKey',
      'items.2.holdId',
      'items.3.idempotencyKey',
      'items.3.holdId',
    ]);
    expect((await balances(co)).breb.pendingOutCents).toBe(3_000n);
    expect((await failure(h.client.commitBatch(ledgerV1.CommitBatchRequest.fromPartial({ items: [commitOf(a)] }), { requestId: randomUUID() }))).code).toBe(
      'AUTH_REQUIRED',
    );
    await commitBatch(co, [commitOf(a), commitOf(b)]);
  });
});
