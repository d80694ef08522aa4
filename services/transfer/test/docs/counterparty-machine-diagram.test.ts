import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { counterpartyMachineMermaid } from '../../src/domain/counterparty-machine.js';

/** The counterparty verification diagram in the docs cannot drift from the table the code runs. */
describe('the counterparty verification diagram', () => {
  it('docs/counterparties.md shows this table (regenerate with counterpartyMachineMermaid())', () => {
    const doc = readFileSync(join(process.cwd(), '../../docs/counterparties.md'), 'utf8');
    const m = /<!-- counterparty-machine:start -->\n```mermaid\n([\s\S]*?)\n```\n<!-- counterparty-machine:end -->/.exec(doc);
    expect(m?.[1]).toBe(counterpartyMachineMermaid());
  });
});
