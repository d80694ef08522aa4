import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { returnMachineMermaid } from '@wallet/platform';

/** The return's diagram in the integrator's guide cannot drift from the table the code runs. */
describe('the return state diagram', () => {
  it('docs/returns.md shows this table (regenerate with returnMachineMermaid())', () => {
    const doc = readFileSync(join(process.cwd(), '../../docs/returns.md'), 'utf8');
    const m = /<!-- return-machine:start -->\n```mermaid\n([\s\S]*?)\n```\n<!-- return-machine:end -->/.exec(doc);
    expect(m?.[1]).toBe(returnMachineMermaid());
  });
});
