import { invalidRequest, type FieldProblem } from '@wallet/platform';
import { computeFees, ZERO_FEE_SCHEDULE, type FeeBreakdown } from '../domain/fees.js';
import { MAX_SAFE_CENTS } from '../domain/money.js';
import { isFeeOperation, type FeeOperation } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import { MAX_BATCH_ITEMS, MAX_LISTED_PROBLEMS, requireCompany } from './validation.js';

/**
 * The fees of many amounts of one operation for the calling company (a bulk payout's validation),
 * in the order given, from ONE read of the schedule: each equals ComputeFees of that amount.
 */
export class ComputeFeesBatch {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: { operation: string; amounts: bigint[]; ivaApplicable: boolean }): Promise<FeeBreakdown[]> {
    // Without a company the default configuration applies, as for ComputeFees.
    const companyId = caller ? requireCompany(caller) : null;
    const problems: FieldProblem[] = [];
    if (!isFeeOperation(cmd.operation)) problems.push({ path: 'operation', message: 'must be BREB_OUTFLOW, ACH_OUTFLOW, PSE_INFLOW or BREB_INFLOW' });
    if (cmd.amounts.length > MAX_BATCH_ITEMS) problems.push({ path: 'amounts', message: `must have at most ${MAX_BATCH_ITEMS} amounts` });
    else {
      // The same rule as ComputeFees' amount (checkPositive), named by index.
      let listed = 0;
      for (let i = 0; i < cmd.amounts.length; i++) {
        const a = cmd.amounts[i]!;
        const message = a <= 0n ? 'must be greater than 0' : a > MAX_SAFE_CENTS ? `must be at most ${MAX_SAFE_CENTS}` : null;
        if (message === null) continue;
        if (++listed > MAX_LISTED_PROBLEMS) {
          problems.push({ path: 'amounts', message: `only the first ${MAX_LISTED_PROBLEMS} problems are listed` });
          break;
        }
        problems.push({ path: `amounts.${i}`, message });
      }
    }
    if (problems.length > 0) throw invalidRequest(problems);
    if (cmd.amounts.length === 0) return [];
    const op = cmd.operation as FeeOperation;
    const schedule = (await this.deps.store.feeSchedules(companyId, [op])).get(op) ?? ZERO_FEE_SCHEDULE;
    return cmd.amounts.map((amount) => computeFees(schedule, amount, cmd.ivaApplicable));
  }
}
