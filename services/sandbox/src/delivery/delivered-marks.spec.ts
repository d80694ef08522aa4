import type { DeliveredMark } from '../persistence/sandbox.store.js';
import { DeliveredMarks } from './delivered-marks.js';

/** A store stand-in whose writes finish when the test says so. */
function fakeStore() {
  const writes: Array<{ marks: DeliveredMark[]; finish(err?: Error): void }> = [];
  const store = {
    markDelivered: (marks: readonly DeliveredMark[]) =>
      new Promise<void>((resolve, reject) => {
        writes.push({ marks: [...marks], finish: (err) => (err ? reject(err) : resolve()) });
      }),
  };
  return { store, writes };
}

const cb = (n: number, attempts = 1) => ({ eventId: `e${n}`, attempts });
const tick = () => new Promise((r) => setImmediate(r));

describe('DeliveredMarks', () => {
  it('writes the first mark at once, with no timer', () => {
    const { store, writes } = fakeStore();
    void new DeliveredMarks(store).mark(cb(1), 200);
    expect(writes.map((w) => w.marks)).toEqual([[{ eventId: 'e1', attempts: 1, status: 200 }]]);
  });

  it('puts the marks made during a write in one next write, and settles each with its own write', async () => {
    const { store, writes } = fakeStore();
    const marks = new DeliveredMarks(store);
    const settled: string[] = [];
    const first = marks.mark(cb(1), 200).then(() => settled.push('e1'));
    const later = [2, 3, 4].map((n) => marks.mark(cb(n, 2), 201).then(() => settled.push(`e${n}`)));
    expect(writes).toHaveLength(1);
    writes[0]!.finish();
    await first;
    await tick();
    expect(settled).toEqual(['e1']);
    expect(writes).toHaveLength(2);
    expect(writes[1]!.marks).toEqual([2, 3, 4].map((n) => ({ eventId: `e${n}`, attempts: 2, status: 201 })));
    writes[1]!.finish();
    await Promise.all(later);
    expect(settled).toEqual(['e1', 'e2', 'e3', 'e4']);
    expect(writes).toHaveLength(2);
  });

  it('fails the marks of a failed write (their rows stay as they were) and goes on with the next', async () => {
    const { store, writes } = fakeStore();
    const marks = new DeliveredMarks(store);
    const a = marks.mark(cb(1), 200);
    const b = marks.mark(cb(2), 200);
    writes[0]!.finish(new Error('connection lost'));
    await expect(a).rejects.toThrow('connection lost');
    await tick();
    writes[1]!.finish();
    await expect(b).resolves.toBeUndefined();
    const c = marks.mark(cb(3), 200);
    expect(writes).toHaveLength(3);
    writes[2]!.finish();
    await expect(c).resolves.toBeUndefined();
  });

  it('a store that throws at once fails the mark rather than the caller', async () => {
    const marks = new DeliveredMarks({
      markDelivered: () => {
        throw new Error('boom');
      },
    });
    await expect(marks.mark(cb(1), 200)).rejects.toThrow('boom');
    await expect(marks.mark(cb(2), 200)).rejects.toThrow('boom');
  });

  it('flush waits for what is being written and what is waiting', async () => {
    const { store, writes } = fakeStore();
    const marks = new DeliveredMarks(store);
    void marks.mark(cb(1), 200);
    void marks.mark(cb(2), 200);
    let flushed = false;
    const f = marks.flush().then(() => {
      flushed = true;
    });
    writes[0]!.finish();
    await tick();
    expect(flushed).toBe(false);
    expect(writes).toHaveLength(2);
    writes[1]!.finish();
    await f;
    expect(flushed).toBe(true);
    await marks.flush(); // nothing left: at once
  });

  it('writes at most maxBatch marks per statement', async () => {
    const { store, writes } = fakeStore();
    const marks = new DeliveredMarks(store, 2);
    const all = [1, 2, 3, 4, 5, 6].map((n) => marks.mark(cb(n), 200));
    writes[0]!.finish();
    await tick();
    writes[1]!.finish();
    await tick();
    writes[2]!.finish();
    await tick();
    writes[3]!.finish();
    await Promise.all(all);
    expect(writes.map((w) => w.marks.length)).toEqual([1, 2, 2, 1]);
  });
});
