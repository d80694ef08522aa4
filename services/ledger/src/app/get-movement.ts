import { AppError } from '@wallet/platform';
import type { Movement } from '../domain/movements.js';
import type { LedgerDeps } from './deps.js';
import { isUuid, requireCompany } from './validation.js';

/** One movement of the caller's company; unknown and another company's read the same. */
export class GetMovement {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: { id: string }): Promise<Movement> {
    const companyId = requireCompany(caller);
    const m = isUuid(cmd.id) ? await this.deps.store.getMovement(companyId, cmd.id.toLowerCase()) : undefined;
    if (!m) throw new AppError('TRANSACTION_NOT_FOUND');
    return m;
  }
}
