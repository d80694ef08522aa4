import { AppError } from '@wallet/platform';
import { COUNTERPARTY_ID, type CounterpartyRecord } from '../domain/counterparty.js';
import type { CounterpartyDeps } from './counterparty-verifier.js';

/** The company's live counterparty; another company's, an unknown or a malformed id: COUNTERPARTY_NOT_FOUND. */
export async function counterpartyOf(deps: CounterpartyDeps, companyId: string, id: string): Promise<CounterpartyRecord> {
  const c = COUNTERPARTY_ID.test(id) ? await deps.counterparties.get(companyId, id) : undefined;
  if (!c) throw new AppError('COUNTERPARTY_NOT_FOUND');
  return c;
}

/** Tries a compare-and-set write on the version a few times (another change landed between the read and the write). */
export const CAS_ATTEMPTS = 5;
