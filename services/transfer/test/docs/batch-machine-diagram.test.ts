import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { batchMachineMermaid } from '../../src/domain/batch.js';

/** The batch saga's diagram in the docs cannot drift from the table the code runs (kept out of domain/: no I/O there). */
describe('the batch saga diagram', () => {
  it('docs/batches.md shows this table (regenerate with batchMachineMermaid())', () => {
    const doc = readFileSync(join(process.cwd(), '../../docs/batches.md'), 'utf8');
    const m = /<!-- batch-machine:start -->\n```mermaid\n([\s\S]*?)\n```\n<!-- batch-machine:end -->/.exec(doc);
    expect(m?.[1]).toBe(batchMachineMermaid());
  });
});
