import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * EXAMPLES.md B2 (one table, one writer; bulk moves through the same writer): every writer of a
 * transfer's state goes through the send saga's table, and every writer of a batch's state through the
 * batch saga's. The bulk writers of the batch store take a `BulkMove`, which only `TransferSaga.applyBulk`
 * makes (after checking the table's declared bulk events); its batch writers take a `BatchMove`, which
 * only `BatchSaga` makes. A source scan, so it lives here rather than in domain/ (which reads no files).
 */
const read = (rel: string) => readFileSync(fileURLToPath(new URL(rel, import.meta.url)), 'utf8');

/** The store's methods and functions, each with its signature and body. */
const chunksOf = (src: string) => src.split(/\n(?= {2}(?:private )?async \w+\(|export function \w+\(|function \w+\(|async function \w+\()/);
const nameOf = (c: string) => /^\s*(?:private )?(?:async )?(?:export )?(?:function )?(\w+)\(/.exec(c)?.[1];

describe('the send saga table: bulk writers', () => {
  it("every bulk writer of a transfer's state in the stores takes a BulkMove (made only by TransferSaga.applyBulk)", () => {
    const writers = ['../../src/persistence/batch.store.ts', '../../src/persistence/transfer.store.ts']
      .flatMap((f) => chunksOf(read(f)))
      .filter((c) => /update transfer\.transfers(?: t)? set state/.test(c));
    // The batch's shared statement (transitionTransfersStatement), the batch's approval, and the callbacks' bulk move.
    expect(writers.map(nameOf).sort()).toEqual(expect.arrayContaining(['transitionOnCallbacks', 'transitionTransfersStatement']));
    expect(writers.length).toBeGreaterThanOrEqual(4);
    for (const c of writers) {
      const name = nameOf(c);
      const signature = c.slice(0, c.search(/\{\n/)); // up to the body (a parameter's type may hold braces)
      expect({ name, takesBulkMove: /BulkMove/.test(signature) }).toEqual({ name, takesBulkMove: true });
    }
  });
});

describe('the batch saga table: one writer', () => {
  it("every writer of a batch's state in the batch store takes a BatchMove (made only by BatchSaga)", () => {
    const writers = chunksOf(read('../../src/persistence/batch.store.ts')).filter((c) => /update transfer\.batches(?: b)? set state/.test(c));
    expect(writers.length).toBeGreaterThanOrEqual(4);
    for (const c of writers) {
      const name = nameOf(c);
      const signature = c.slice(0, c.search(/\{\n/)); // up to the body (a parameter's type may hold braces)
      expect({ name, takesBatchMove: /BatchMove/.test(signature) }).toEqual({ name, takesBatchMove: true });
    }
  });

  it('only the sagas make moves, and only BatchSaga creates a batch', () => {
    const dir = fileURLToPath(new URL('../../src/', import.meta.url));
    const files = ['app', 'persistence', 'grpc', 'events', 'adapters'].flatMap((d) => {
      try {
        return readdirSync(dir + d)
          .filter((f) => f.endsWith('.ts'))
          .map((f) => `${d}/${f}`);
      } catch {
        return [];
      }
    });
    const making = (re: RegExp) => files.filter((f) => re.test(readFileSync(dir + f, 'utf8'))).sort();
    expect(making(/as BatchMove\b/)).toEqual(['app/batch-saga.ts']);
    expect(making(/as BulkMove\b/)).toEqual(['app/transfer-saga.ts']);
    expect(making(/batches\.insert\(/)).toEqual(['app/batch-saga.ts']);
  });
});
