import { AppError } from '@wallet/platform';
import { COUNTERPARTY_ID, type CounterpartyRecord } from '../domain/counterparty.js';
import type { CounterpartyDeps } from './counterparty-verifier.js';
import { requireCompany } from './validation.js';

/** DeleteCounterparty: a soft delete; answers the deleted counterparty (a verification in flight is no longer looked at). */
export class DeleteCounterparty {
  constructor(private readonly deps: CounterpartyDeps) {}

  async execute(caller: string | undefined, id: string): Promise<CounterpartyRecord> {
    const companyId = requireCompany(caller);
    const c = COUNTERPARTY_ID.test(id) ? await this.deps.counterparties.softDelete(companyId, id) : undefined;
    if (!c) throw new AppError('COUNTERPARTY_NOT_FOUND');
    return c;
  }
}
