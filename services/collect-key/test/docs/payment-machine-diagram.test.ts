import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { paymentMachineMermaid } from '../../src/domain/payment-machine.js';

/** The inbound payment saga's diagram in the docs cannot drift from the table the code runs. */
describe('the inbound Bre-B payment saga diagram', () => {
  it('docs/architecture.md shows this table (regenerate with paymentMachineMermaid())', () => {
    const doc = readFileSync(join(process.cwd(), '../../docs/architecture.md'), 'utf8');
    const m = /<!-- payment-machine:start -->\n```mermaid\n([\s\S]*?)\n```\n<!-- payment-machine:end -->/.exec(doc);
    expect(m?.[1]).toBe(paymentMachineMermaid());
  });
});
