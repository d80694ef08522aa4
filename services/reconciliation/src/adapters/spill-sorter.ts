import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lineOf } from '../domain/report.js';
import type { KeyedLine, LineSorter } from '../app/ports.js';

export interface SpillSorterOptions {
  /** Lines held in memory before a sorted run is written out (the memory bound: ~0.5 KB a line). */
  runLines?: number;
  /** Where the runs go (a fresh directory inside it per sort, deleted by `dispose`). */
  dir?: string;
  /** Lines per batch handed out by `sorted()`. */
  batchLines?: number;
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
interface RunCursor { batch: string[]; i: number; it: AsyncIterator<string[]> }

/**
 * An external merge sort: lines are buffered up to `runLines`, sorted and written to a run file;
 * `sorted()` merges the runs (and what is still in memory) with a binary heap. A report that fits
 * in one run never touches the disk. Memory: one run in memory during the read, then one 256 KB
 * read buffer per run and one output batch during the merge.
 */
export class SpillSorter implements LineSorter {
  private buffer: string[] = [];
  private readonly runs: string[] = [];
  private dir: string | undefined;
  private readonly runLines: number;
  private readonly batchLines: number;

  constructor(private readonly opts: SpillSorterOptions = {}) {
    this.runLines = opts.runLines ?? 50_000;
    this.batchLines = opts.batchLines ?? 1024;
  }

  /** How many runs went to disk (for tests and the bench). */
  get spilledRuns(): number {
    return this.runs.length;
  }

  add(key: string, lineNo: number, record: readonly string[]): Promise<void> | void {
    this.buffer.push(serialize(key, lineNo, record));
    if (this.buffer.length >= this.runLines) return this.spill();
  }

  private async spill(): Promise<void> {
    const lines = this.buffer.sort();
    this.buffer = [];
    this.dir ??= await mkdtemp(join(this.opts.dir ?? tmpdir(), 'recon-sort-'));
    const path = join(this.dir, `run-${this.runs.length}.ndjson`);
    this.runs.push(path);
    const out = createWriteStream(path, { encoding: 'utf8' });
    const done = new Promise<void>((resolve, reject) => {
      out.once('error', reject);
      out.once('close', resolve);
    });
    let chunk = '';
    for (const e of lines) {
      chunk += `${e}\n`;
      if (chunk.length >= 1 << 20) {
        if (!out.write(chunk)) await new Promise<void>((resolve, reject) => { out.once('drain', resolve); out.once('error', reject); });
        chunk = '';
      }
    }
    out.end(chunk);
    await done;
  }

  async *sorted(): AsyncGenerator<readonly KeyedLine[]> {
    const memory = this.buffer.sort();
    this.buffer = [];
    const batchLines = this.batchLines;
    if (this.runs.length === 0) {
      for (let i = 0; i < memory.length; i += batchLines) yield memory.slice(i, i + batchLines).map(deserialize);
      return;
    }
    async function* inMemory(): AsyncGenerator<string[]> {
      if (memory.length) yield memory;
    }
    const sources = [...this.runs.map(readRun), inMemory()];
    const heap: RunCursor[] = [];
    try {
      for (const it of sources) {
        const r = await it.next();
        if (!r.done && r.value.length) heap.push({ batch: r.value, i: 0, it });
      }
      const less = (a: RunCursor, b: RunCursor) => a.batch[a.i]! < b.batch[b.i]!;
      const down = (at: number) => {
        for (let i = at; ;) {
          const l = 2 * i + 1, r = l + 1;
          let m = i;
          if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
          if (r < heap.length && less(heap[r]!, heap[m]!)) m = r;
          if (m === i) return;
          [heap[i], heap[m]] = [heap[m]!, heap[i]!];
          i = m;
        }
      };
      for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
      let out: KeyedLine[] = [];
      while (heap.length) {
        const top = heap[0]!;
        out.push(deserialize(top.batch[top.i]!));
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
        if (out.length >= this.batchLines) {
          yield out;
          out = [];
        }
      }
      if (out.length) yield out;
    } finally {
      await Promise.all(sources.map((s) => s.return(undefined)));
    }
  }

  async dispose(): Promise<void> {
    this.buffer = [];
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
