import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lineOf } from '../domain/report.js';
import type { KeyedLine, LineSorter } from '../app/ports.js';

export interface SpillSorterOptions {
  /** Lines held in memory before a sorted run is written out (the memory bound: one string of ~250 bytes a line). */
  runLines?: number;
  /** Where the runs go (a fresh directory inside it per sort, deleted by `dispose`). */
  dir?: string;
  /** Lines per batch handed out by `sorted()`. */
  batchLines?: number;
  /** Most runs merged at once (each holds a read buffer during the merge). */
  maxFanIn?: number;
}

/**
 * A line as the sort holds it: one string, `<key>\t<line number, 10 digits>\t<JSON of the fields>`.
 * Its plain string order is the (key, line number) order: ids hold no control character (domain
 * `checkLine`, `recordKey`), so a key never holds a tab, and the tab (U+0009) sorts before any
 * character that can follow where a shorter key ends (a key is never a prefix of another followed by
 * U+0000–U+0008: those only ever appear as the separators the domain puts at fixed places). One
 * string per line, compared as is: nothing to parse until the line leaves the merge, and little
 * for the collector to trace.
 */
function serialize(key: string, lineNo: number, record: readonly string[]): string {
  return `${key}\t${String(lineNo).padStart(10, '0')}\t${JSON.stringify(record)}`;
}

function deserialize(text: string): KeyedLine {
  const t1 = text.indexOf('\t');
  const t2 = text.indexOf('\t', t1 + 1);
  return { key: text.slice(0, t1), line: lineOf(JSON.parse(text.slice(t2 + 1)) as string[], Number(text.slice(t1 + 1, t2))) };
}

/** Reads a run file back, in batches of lines (one per chunk read). */
async function* readRun(path: string): AsyncGenerator<string[]> {
  let rest = '';
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 64 * 1024 }) as AsyncIterable<string>) {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    if (lines.length) yield lines;
  }
  if (rest) yield [rest];
}

/** The head of one sorted source during the k-way merge. */
interface RunCursor {
  batch: string[];
  i: number;
  it: AsyncIterator<string[]>;
}

/** Merges sorted sources of lines (plain string order) with a binary heap, in batches of `batchLines`. */
async function* merge(sources: Array<AsyncGenerator<string[]>>, batchLines: number): AsyncGenerator<string[]> {
  const heap: RunCursor[] = [];
  try {
    for (const it of sources) {
      const r = await it.next();
      if (!r.done && r.value.length) heap.push({ batch: r.value, i: 0, it });
    }
    const less = (a: RunCursor, b: RunCursor) => a.batch[a.i]! < b.batch[b.i]!;
    const down = (at: number) => {
      for (let i = at; ;) {
        const l = 2 * i + 1,
          r = l + 1;
        let m = i;
        if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && less(heap[r]!, heap[m]!)) m = r;
        if (m === i) return;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    };
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
    let out: string[] = [];
    while (heap.length) {
      const top = heap[0]!;
      out.push(top.batch[top.i]!);
      top.i += 1;
      if (top.i >= top.batch.length) {
        const r = await top.it.next();
        if (r.done) {
          heap[0] = heap[heap.length - 1]!;
          heap.pop();
        } else {
          top.batch = r.value;
          top.i = 0;
        }
      }
      if (heap.length) down(0);
      if (out.length >= batchLines) {
        yield out;
        out = [];
      }
    }
    if (out.length) yield out;
  } finally {
    await Promise.all(sources.map((s) => s.return(undefined)));
  }
}

/** Writes sorted lines to a new run file. */
async function writeRun(path: string, batches: Iterable<readonly string[]> | AsyncIterable<readonly string[]>): Promise<void> {
  const out = createWriteStream(path, { encoding: 'utf8' });
  const done = new Promise<void>((resolve, reject) => {
    out.once('error', reject);
    out.once('close', resolve);
  });
  let chunk = '';
  for await (const batch of batches) {
    for (const line of batch) {
      chunk += `${line}\n`;
      if (chunk.length >= 1 << 20) {
        if (!out.write(chunk))
          await new Promise<void>((resolve, reject) => {
            out.once('drain', resolve);
            out.once('error', reject);
          });
        chunk = '';
      }
    }
  }
  out.end(chunk);
  await done;
}

/**
 * An external merge sort: lines are buffered up to `runLines`, sorted and written to a run file;
 * `sorted()` merges the runs (and what is still in memory) with a binary heap. A report that fits
 * in one run never touches the disk. At most `maxFanIn` runs are merged at once (more, and the
 * oldest are first merged into one longer run): memory is one run during the read, then one 64 KB
 * read buffer per merged run and one output batch, whatever the size of the report.
 */
export class SpillSorter implements LineSorter {
  private buffer: string[] = [];
  private runs: string[] = [];
  private dir: string | undefined;
  private runSeq = 0;
  private readonly runLines: number;
  private readonly batchLines: number;
  private readonly maxFanIn: number;
  /** Runs written, intermediate merges included (for tests and the bench). */
  spilledRuns = 0;

  constructor(private readonly opts: SpillSorterOptions = {}) {
    this.runLines = opts.runLines ?? 50_000;
    this.batchLines = opts.batchLines ?? 1024;
    this.maxFanIn = Math.max(2, opts.maxFanIn ?? 32);
  }

  add(key: string, lineNo: number, record: readonly string[]): Promise<void> | void {
    this.buffer.push(serialize(key, lineNo, record));
    if (this.buffer.length >= this.runLines) return this.spill();
  }

  private async newRun(): Promise<string> {
    this.dir ??= await mkdtemp(join(this.opts.dir ?? tmpdir(), 'recon-sort-'));
    this.spilledRuns += 1;
    return join(this.dir, `run-${this.runSeq++}.txt`);
  }

  private async spill(): Promise<void> {
    const lines = this.buffer.sort();
    this.buffer = [];
    const path = await this.newRun();
    this.runs.push(path);
    await writeRun(path, [lines]);
  }

  async *sorted(): AsyncGenerator<readonly KeyedLine[]> {
    const memory = this.buffer.sort();
    this.buffer = [];
    const batchLines = this.batchLines;
    if (this.runs.length === 0) {
      for (let i = 0; i < memory.length; i += batchLines) yield memory.slice(i, i + batchLines).map(deserialize);
      return;
    }
    // With the lines still in memory as one more source, at most maxFanIn sources in the last merge.
    while (this.runs.length + 1 > this.maxFanIn) {
      const take = Math.min(this.maxFanIn, this.runs.length + 2 - this.maxFanIn);
      const merged = this.runs.slice(0, take);
      const path = await this.newRun();
      await writeRun(path, merge(merged.map(readRun), batchLines));
      await Promise.all(merged.map((f) => rm(f, { force: true })));
      this.runs = [...this.runs.slice(take), path];
    }
    async function* inMemory(): AsyncGenerator<string[]> {
      if (memory.length) yield memory;
    }
    for await (const batch of merge([...this.runs.map(readRun), inMemory()], batchLines)) yield batch.map(deserialize);
  }

  async dispose(): Promise<void> {
    this.buffer = [];
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
