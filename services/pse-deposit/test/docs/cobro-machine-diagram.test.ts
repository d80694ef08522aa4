import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cobroMachineMermaid } from '../../src/domain/cobro-machine.js';

/** The cobro's diagram in the integrator's guide cannot drift from the table the code runs. */
describe('the cobro state diagram', () => {
  it('docs/cobros.md shows this table (regenerate with cobroMachineMermaid())', () => {
    const doc = readFileSync(join(process.cwd(), '../../docs/cobros.md'), 'utf8');
    const m = /<!-- cobro-machine:start -->\n```mermaid\n([\s\S]*?)\n```\n<!-- cobro-machine:end -->/.exec(doc);
    expect(m?.[1]).toBe(cobroMachineMermaid());
  });
});
