import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Issue 35: every writer of a transfer's state goes through the send saga's table. The bulk writers of
 * the batch store take a `BulkMove`, which only `TransferSaga.applyBulk` makes (after checking the
 * table's declared bulk events). A source scan, so it lives here rather than in domain/ (which reads no files).
 */
describe('the send saga table: bulk writers', () => {
  it('every bulk writer of a transfer\'s state in the stores takes a BulkMove (made only by TransferSaga.applyBulk)', () => {
    const src = readFileSync(fileURLToPath(new URL('../../src/persistence/batch.store.ts', import.meta.url)), 'utf8');
    // The store's methods and functions, each with its signature and body.
    const chunks = src.split(/\n(?= {2}(?:private )?async \w+\(|export function \w+\(|function \w+\(|async function \w+\()/);
    const writers = chunks.filter((c) => /update transfer\.transfers(?: t)? set state/.test(c));
    expect(writers.length).toBeGreaterThanOrEqual(3);
    for (const c of writers) {
      const name = /^\s*(?:private )?(?:async )?(?:export )?(?:function )?(\w+)\(/.exec(c)?.[1];
      const signature = c.slice(0, c.indexOf('{'));
      expect({ name, takesBulkMove: /BulkMove/.test(signature) }).toEqual({ name, takesBulkMove: true });
    }
  });
});
