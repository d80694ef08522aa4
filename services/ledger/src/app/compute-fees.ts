import { computeFees, ZERO_FEE_SCHEDULE, type FeeBreakdown } from '../domain/fees.js';
import { isFeeOperation, type FeeOperation } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import { Problems, checkPositive, requireCompany } from './validation.js';

/** The fee of an operation for the calling company (its own configuration, else the default). */
export class ComputeFees {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: { operation: string; amount: bigint; ivaApplicable: boolean }): Promise<FeeBreakdown> {
    // Without a company the default configuration applies (e.g. an admin preview).
    const companyId = caller ? requireCompany(caller) : null;
    const p = new Problems();
    if (!isFeeOperation(cmd.operation)) p.add('operation', 'must be BREB_OUTFLOW, ACH_OUTFLOW, PSE_INFLOW or BREB_INFLOW');
    checkPositive(p, 'amount', cmd.amount);
    p.throwIfAny();
    const op = cmd.operation as FeeOperation;
    const schedule = (await this.deps.store.feeSchedules(companyId, [op])).get(op) ?? ZERO_FEE_SCHEDULE;
    return computeFees(schedule, cmd.amount, cmd.ivaApplicable);
  }
}
