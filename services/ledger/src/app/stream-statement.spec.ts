import type { LedgerDeps } from './deps.js';
import type { LedgerStore, StatementCursor, StatementLineRow } from './ports.js';
import { StreamStatement } from './stream-statement.js';

const COMPANY = 'c1';
const caller = COMPANY;

/** A store of `total` lines whose page reads are recorded and answered when the test says. */
function scriptedStore(total: number) {
  const reads: { after: StatementCursor; limit: number; answer: () => void; fail: (err: Error) => void }[] = [];
  const line = (i: number): StatementLineRow => ({
    postingId: `p${String(i).padStart(6, '0')}`,
    postingKind: 'credit',
    postedAt: `2026-11-21T10:00:00.${String(i).padStart(6, '0')}Z`,
    effectCents: 1n,
    feeCents: 0n,
    ivaCents: 0n,
    movement: null,
  });
  const store = {
    walletExists: async () => true,
    statementPage: (_c: string, _r: string, after: StatementCursor, _to: string, limit: number) =>
      new Promise<StatementLineRow[]>((resolve, reject) => {
        const start = after.id.startsWith('p') ? Number(after.id.slice(1)) + 1 : 0;
        reads.push({
          after,
          limit,
          answer: () => resolve(Array.from({ length: Math.max(0, Math.min(limit, total - start)) }, (_, j) => line(start + j))),
          fail: reject,
        });
      }),
  } as unknown as LedgerStore;
  const deps = { store, now: () => new Date('2026-11-22T00:00:00Z') } as unknown as LedgerDeps;
  return { deps, reads };
}

const cmd = { rail: 'BREB', from: '2026-11-21T00:00:00Z', to: '2026-11-21T23:00:00Z', batchSize: 3 };
const tick = () => new Promise((r) => setImmediate(r));

describe('StreamStatement', () => {
  it('reads the next page while the current one is being sent, and never more than that one', async () => {
    const s = scriptedStore(7);
    const it = (await new StreamStatement(s.deps).open(caller, cmd))[Symbol.asyncIterator]();
    const first = it.next();
    await tick();
    expect(s.reads).toHaveLength(1);
    s.reads[0]!.answer();
    expect((await first).value.map((l: StatementLineRow) => l.postingId)).toEqual(['p000000', 'p000001', 'p000002']);
    // the second page is being read (after the first's last line) while the consumer holds the first
    expect(s.reads).toHaveLength(2);
    expect(s.reads[1]!.after).toEqual({ createdAt: '2026-11-21T10:00:00.000002Z', id: 'p000002' });
    await tick();
    expect(s.reads).toHaveLength(2); // not a third: one page ahead at most
    s.reads[1]!.answer();
    await tick();
    expect(s.reads).toHaveLength(2); // still not: the consumer has not taken the second page
    expect((await it.next()).value).toHaveLength(3);
    expect(s.reads).toHaveLength(3);
    s.reads[2]!.answer();
    expect((await it.next()).value.map((l: StatementLineRow) => l.postingId)).toEqual(['p000006']);
    expect(await it.next()).toEqual({ done: true, value: undefined });
    expect(s.reads).toHaveLength(3); // a short page is the last: nothing read after it
  });

  it('stops when the consumer does, a page read meanwhile failing unnoticed; a failure the consumer reaches is its error', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const s = scriptedStore(100);
      const it = (await new StreamStatement(s.deps).open(caller, cmd))[Symbol.asyncIterator]();
      const first = it.next();
      await tick();
      s.reads[0]!.answer();
      await first;
      await it.return?.(undefined);
      s.reads[1]!.fail(new Error('connection lost'));
      await tick();
      await tick();
      expect(s.reads).toHaveLength(2);
      expect(unhandled).toEqual([]);

      const t = scriptedStore(100);
      const it2 = (await new StreamStatement(t.deps).open(caller, cmd))[Symbol.asyncIterator]();
      const p = it2.next();
      await tick();
      t.reads[0]!.answer();
      await p;
      t.reads[1]!.fail(new Error('connection lost'));
      await tick();
      await expect(it2.next()).rejects.toThrow('connection lost');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
