import { COMPANY_ID_PATTERN } from '../domain/accounts.js';
import { MAX_BPS } from '../domain/fees.js';
import { MAX_SAFE_CENTS } from '../domain/money.js';
import { isFeeOperation, type FeeOperation } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import type { FeeConfigRecord } from './ports.js';
import { Problems, orNull } from './validation.js';

export interface SetFeeConfigCommand {
  operation: string;
  companyId?: string;
  fixedFeeCents: bigint;
  variableBps: number;
}

/** Admin: sets the default fee of an operation, or one company's own (which wins over the default). */
export class SetFeeConfig {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(cmd: SetFeeConfigCommand): Promise<FeeConfigRecord> {
    const p = new Problems();
    if (!isFeeOperation(cmd.operation)) p.add('operation', 'must be BREB_OUTFLOW, ACH_OUTFLOW, PSE_INFLOW or BREB_INFLOW');
    const companyId = orNull(cmd.companyId);
    if (companyId !== null && !COMPANY_ID_PATTERN.test(companyId)) p.add('companyId', 'is not a valid company id');
    if (cmd.fixedFeeCents < 0n || cmd.fixedFeeCents > MAX_SAFE_CENTS) p.add('fixedFeeCents', `must be between 0 and ${MAX_SAFE_CENTS}`);
    if (!Number.isInteger(cmd.variableBps) || cmd.variableBps < 0 || cmd.variableBps > MAX_BPS)
      p.add('variableBps', `must be an integer between 0 and ${MAX_BPS}`);
    p.throwIfAny();
    return this.deps.store.upsertFeeConfig({
      operation: cmd.operation as FeeOperation,
      companyId,
      fixedFeeCents: cmd.fixedFeeCents,
      variableBps: cmd.variableBps,
    });
  }
}
