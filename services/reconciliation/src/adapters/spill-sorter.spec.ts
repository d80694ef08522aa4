import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lineKey } from '../domain/matching.js';
import type { KeyedLine } from '../app/ports.js';
import { SpillSorter } from './spill-sorter.js';

const record = (providerId: string, ourId: string, direction = 'OUT', counterparty = 'x') => [
  providerId,
  ourId,
  direction,
  '100',
  '0',
  'COMPLETED',
  '2025-03-14',
  '2025-03-14T13:00:00.000Z',
  '2025-03-14T13:00:00.000Z',
  counterparty,
];

async function drain(s: SpillSorter): Promise<KeyedLine[]> {
  const out: KeyedLine[] = [];
  for await (const batch of s.sorted()) out.push(...batch);
  return out;
}

describe('SpillSorter (external merge sort of report lines)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'recon-sort-spec-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('orders by key then line number across many runs, the same as an in-memory sort, and deletes its runs', async () => {
    const s = new SpillSorter({ dir, runLines: 7, batchLines: 5 });
    const ids = Array.from({ length: 200 }, (_, i) => `tx-${(i * 37) % 61}`); // repeated keys: ties
    const expected: Array<[string, number]> = [];
    for (let i = 0; i < ids.length; i++) {
      const spilled = s.add(lineKey('ach', `ach_${i}`, ids[i]!, 'OUT'), i + 1, record(`ach_${i}`, ids[i]!));
      if (spilled) await spilled;
      expected.push([ids[i]!, i + 1]);
    }
    expected.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
    expect(s.spilledRuns).toBe(28);
    expect(readdirSync(dir)).toHaveLength(1);
    const out = await drain(s);
    expect(out.map((e) => [e.key, e.line.lineNo])).toEqual(expected);
    expect(out[0]!.line).toMatchObject({ ourId: expected[0]![0], amountCents: 100n, status: 'COMPLETED' });
    await s.dispose();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('merges at most maxFanIn sources at once: more runs are first merged into longer ones, the order unchanged', async () => {
    const s = new SpillSorter({ dir, runLines: 2, batchLines: 3, maxFanIn: 3 });
    const expected: Array<[string, number]> = [];
    for (let i = 0; i < 31; i++) {
      const id = `tx-${(i * 13) % 17}`;
      await s.add(id, i + 1, record(`brb_${i}`, id));
      expected.push([id, i + 1]);
    }
    expected.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
    expect(s.spilledRuns).toBe(15);
    const it = s.sorted()[Symbol.asyncIterator]();
    const out: KeyedLine[] = [];
    let r = await it.next();
    // The last merge reads at most maxFanIn - 1 run files (the lines still in memory are the other source).
    expect(readdirSync(join(dir, readdirSync(dir)[0]!)).length).toBeLessThanOrEqual(2);
    expect(s.spilledRuns).toBeGreaterThan(15);
    while (!r.done) {
      out.push(...r.value);
      r = await it.next();
    }
    expect(out.map((e) => [e.key, e.line.lineNo])).toEqual(expected);
    await s.dispose();
  });

  it('keys that are prefixes of others, pse legs and unidentified lines sort as the keys do', async () => {
    const s = new SpillSorter({ dir, runLines: 2 });
    const lines: Array<[string, string, string]> = [
      ['pse_1', 'dep_10', 'IN'],
      ['pse_2', 'dep_1', 'OUT'],
      ['pse_3', 'dep_1-x', 'IN'],
      ['pse_2', 'dep_1', 'IN'],
      ['pse_9', '', 'IN'],
      ['pse_4', 'dep_1', 'IN'],
    ];
    for (const [i, [p, o, d]] of lines.entries()) await s.add(lineKey('pse', p, o, d), i + 1, record(p, o, d));
    const keys = lines.map(([p, o, d], i) => [lineKey('pse', p, o, d), i + 1] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
    expect((await drain(s)).map((e) => [e.key, e.line.lineNo])).toEqual(keys);
    await s.dispose();
  });

  it('any counterparty survives the round trip through a run file (quotes, commas, line breaks, tabs)', async () => {
    const tricky = 'Pérez, "Toño" & Cía\nLtda.\t\r\n\\ \u2028';
    const s = new SpillSorter({ dir, runLines: 1 });
    await s.add('tx-2', 1, record('brb_2', 'tx-2', 'OUT', tricky));
    await s.add('tx-1', 2, record('brb_1', 'tx-1', 'OUT', 'plain'));
    const out = await drain(s);
    expect(out.map((e) => e.line.counterparty)).toEqual(['plain', tricky]);
    await s.dispose();
  });

  it('a report that fits in one run never touches the disk', async () => {
    const s = new SpillSorter({ dir, runLines: 100 });
    for (let i = 0; i < 50; i++) s.add(`tx-${50 - i}`, i + 1, record(`brb_${i}`, `tx-${50 - i}`));
    expect(s.spilledRuns).toBe(0);
    expect((await drain(s)).map((e) => e.key)).toEqual(Array.from({ length: 50 }, (_, i) => `tx-${i + 1}`).sort());
    expect(readdirSync(dir)).toEqual([]);
    await s.dispose();
  });

  it('dispose in the middle of a merge deletes the runs; a second dispose is harmless', async () => {
    const s = new SpillSorter({ dir, runLines: 3, batchLines: 2 });
    for (let i = 0; i < 30; i++) await s.add(`tx-${i % 7}`, i + 1, record(`brb_${i}`, `tx-${i % 7}`));
    const it = s.sorted()[Symbol.asyncIterator]();
    await it.next();
    await it.return?.(undefined);
    const runDir = join(dir, readdirSync(dir)[0]!);
    await s.dispose();
    await s.dispose();
    expect(existsSync(runDir)).toBe(false);
  });
});
