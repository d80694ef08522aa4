import { AppError, invalidRequest } from '@wallet/platform';
import { checkKey, type KeyType } from '../domain/keys.js';
import type { TransferDeps } from './deps.js';
import type { RecipientView } from './ports.js';
import { requireCompany } from './validation.js';

export type ResolveKeyResult =
  | { found: true; anchorHandle: string; keyType: KeyType; keyValue: string; recipient: RecipientView }
  | { found: false; errorCode: 'KEY_NOT_FOUND' | 'KEY_INACTIVE' | 'INVALID_KEY'; message: string };

export const RESOLVE_MESSAGES = {
  KEY_NOT_FOUND: 'La llave Bre-B no está registrada en el directorio.',
  KEY_INACTIVE: 'La llave Bre-B existe pero no está activa.',
  INVALID_KEY: 'La llave Bre-B no tiene un formato válido.',
} as const;

/**
 * POST /transfers/resolve-key (§4.2, CONTRACT §9): checks the key's length and form, asks the
 * directory, and answers the holder. A found key is remembered 10 minutes per (company, anchor
 * handle) so a send may use `target_anchor_handle` instead of the key. Nothing is cached for the
 * answer itself: every call asks the directory.
 */
export class ResolveKey {
  constructor(private readonly deps: TransferDeps) {}

  async execute(caller: string | undefined, req: { keyValue: string; keyType: string }): Promise<ResolveKeyResult> {
    const companyId = requireCompany(caller);
    const check = checkKey(req.keyValue, req.keyType);
    if (!check.ok && check.problem === 'LENGTH') throw invalidRequest([{ path: 'keyValue', message: 'must be 3 to 64 characters' }]);
    if (!check.ok && check.problem === 'TYPE') throw invalidRequest([{ path: 'keyType', message: 'must be one of AUTO, PHONE, EMAIL, ALPHANUM, NRIC' }]);
    if (!check.ok) return { found: false, errorCode: 'INVALID_KEY', message: check.problem === 'INVALID_KEY' ? check.reason : RESOLVE_MESSAGES.INVALID_KEY };

    const entry = await this.deps.directory.lookup(check.keyValue, check.keyType);
    switch (entry.status) {
      case 'not_found':
        return { found: false, errorCode: 'KEY_NOT_FOUND', message: RESOLVE_MESSAGES.KEY_NOT_FOUND };
      case 'invalid':
        return { found: false, errorCode: 'INVALID_KEY', message: RESOLVE_MESSAGES.INVALID_KEY };
      case 'inactive':
        return { found: false, errorCode: 'KEY_INACTIVE', message: RESOLVE_MESSAGES.KEY_INACTIVE };
      case 'active': {
        const found = { anchorHandle: entry.anchorHandle, keyType: entry.keyType, keyValue: entry.keyValue, recipient: entry.recipient };
        await this.deps.store.rememberResolvedKey(companyId, found);
        return { found: true, ...found };
      }
    }
  }
}

/** The directory verdict of a send (the same lookup, as errors): INVALID_KEY, KEY_INACTIVE or the entry. */
export function notFoundAsError(code: 'KEY_NOT_FOUND' | 'KEY_INACTIVE' | 'INVALID_KEY'): AppError {
  // A send to a key the directory does not know is a key that cannot be paid: INVALID_KEY (422).
  // KEY_NOT_FOUND in the catalogue is the collect-key 404 and would read as a wrong URL.
  if (code === 'KEY_INACTIVE') return new AppError('KEY_INACTIVE');
  return new AppError('INVALID_KEY', code === 'KEY_NOT_FOUND' ? RESOLVE_MESSAGES.KEY_NOT_FOUND : undefined);
}
