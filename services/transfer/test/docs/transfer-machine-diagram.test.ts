import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transferMachineMermaid } from '../../src/domain/transfer-machine.js';

/** The saga's diagram in the docs cannot drift from the table the code runs. */
describe('the send saga diagram', () => {
  it('docs/architecture.md shows this table (regenerate with transferMachineMermaid())', () => {
    const doc = readFileSync(join(process.cwd(), '../../docs/architecture.md'), 'utf8');
    const m = /<!-- transfer-machine:start -->\n```mermaid\n([\s\S]*?)\n```\n<!-- transfer-machine:end -->/.exec(doc);
    expect(m?.[1]).toBe(transferMachineMermaid());
  });
});
