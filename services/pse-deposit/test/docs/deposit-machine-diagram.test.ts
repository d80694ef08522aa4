import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { depositMachineMermaid } from '../../src/domain/deposit-machine.js';

/** The deposit saga's diagram in the docs cannot drift from the table the code runs (kept out of domain/: no I/O there). */
describe('the PSE deposit saga diagram', () => {
  it('docs/architecture.md shows this table (regenerate with depositMachineMermaid())', () => {
    const doc = readFileSync(join(process.cwd(), '../../docs/architecture.md'), 'utf8');
    const m = /<!-- deposit-machine:start -->\n```mermaid\n([\s\S]*?)\n```\n<!-- deposit-machine:end -->/.exec(doc);
    expect(m?.[1]).toBe(depositMachineMermaid());
  });
});
