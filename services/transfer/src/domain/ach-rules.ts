import type { Problems } from '@wallet/platform';
import { ACH_ACCOUNT_TYPES, ACH_DOCUMENT_TYPES } from './rails.js';

/**
 * Internal destination rules for ACH sends (400 DESTINATION_REJECTED, §7.3 "bank or account rejected
 * by internal rules"). Two moments:
 *
 * - before asking the rail: the bank must be one we can route to, i.e. the gateway resolved the
 *   `bankId` to a name and a 4-digit ACH compensation code. Without a code there is nothing to send.
 * - after the rail validated the account: an account number made of one repeated digit
 *   ("0000", "1111111111", …) is a placeholder, not an account, and is refused by policy even when a
 *   bank would accept it. The rail speaks first so that its own verdict (422 INVALID_BANK_ACCOUNT,
 *   e.g. the sandbox's `0000000000`) is the one the client sees for accounts it knows to be invalid.
 */

const ACH_CODE = /^\d{4}$/;

export function bankRoutable(bankName: string | null | undefined, achCode: string | null | undefined): boolean {
  return !!bankName && bankName.trim().length > 0 && !!achCode && ACH_CODE.test(achCode);
}

export function placeholderAccount(accountNumber: string): boolean {
  return /^(\d)\1*$/.test(accountNumber);
}

/** An ACH account as a request gives it (a send's or a counterparty's `bankAccount`). */
export interface AchAccountInput {
  bankId: number;
  accountTypeId: number;
  accountNumber: string;
  documentTypeId: number;
  documentNumber: string;
  holderFirstName: string;
  holderLastName: string;
}

export const MAX_HOLDER_NAME = 64;

/** The schema checks of an ACH account's fields (§4.5), each problem added under `path(field)`: a send and a counterparty check the same. */
export function checkAchAccountFields(p: Problems, b: AchAccountInput, path: (f: string) => string): void {
  if (!Number.isInteger(b.bankId) || b.bankId <= 0) p.add(path('bankId'), 'is required');
  if (!(b.accountTypeId in ACH_ACCOUNT_TYPES)) p.add(path('accountTypeId'), 'must be 20, 21 or 22');
  if (typeof b.accountNumber !== 'string' || !/^\d{4,32}$/.test(b.accountNumber)) p.add(path('accountNumber'), 'must be 4 to 32 digits');
  if (!(b.documentTypeId in ACH_DOCUMENT_TYPES)) p.add(path('documentTypeId'), 'must be 1, 4, 5 or 8');
  if (typeof b.documentNumber !== 'string' || !/^\d{5,15}$/.test(b.documentNumber)) p.add(path('documentNumber'), 'must be 5 to 15 digits');
  for (const f of ['holderFirstName', 'holderLastName'] as const) {
    const v = b[f];
    if (typeof v !== 'string' || v.trim() === '') p.add(path(f), 'is required');
    else if ([...v].length > MAX_HOLDER_NAME) p.add(path(f), `must be at most ${MAX_HOLDER_NAME} characters`);
  }
}
