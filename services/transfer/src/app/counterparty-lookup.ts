import { AppError } from '@wallet/platform';
import { COUNTERPARTY_ID, type CounterpartyRecord } from '../domain/counterparty.js';
import type { CounterpartyStore } from './counterparty-ports.js';

/**
 * The company's live counterparty; another company's, a deleted, an unknown or a malformed id:
 * COUNTERPARTY_NOT_FOUND. The counterparty use cases, and sends and quotes that name one.
 */
export async function counterpartyOf(
  deps: { counterparties?: Pick<CounterpartyStore, 'get'> | undefined },
  companyId: string,
  id: string,
): Promise<CounterpartyRecord> {
  if (!deps.counterparties) throw new AppError('SERVICE_UNAVAILABLE', 'Las contrapartes no están disponibles en este proceso.');
  const c = COUNTERPARTY_ID.test(id) ? await deps.counterparties.get(companyId, id) : undefined;
  if (!c) throw new AppError('COUNTERPARTY_NOT_FOUND');
  return c;
}

/** Tries a compare-and-set write on the version a few times (another change landed between the read and the write). */
export const CAS_ATTEMPTS = 5;
