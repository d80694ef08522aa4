import { anchorHandleFor } from './holders.js';
import { directoryStatus, normalizeKeyValue } from './keys.js';

/** The two rails the sandbox simulates, their transfer statuses and how an outcome is decided. */

export const RAILS = ['BREB', 'ACH'] as const;
export type Rail = (typeof RAILS)[number];
export type TransferStatus = 'PENDING' | 'COMPLETED' | 'FAILED';
export type FinalStatus = Exclude<TransferStatus, 'PENDING'>;

export interface Outcome {
  status: FinalStatus;
  errorMessage: string | null;
}

/** The receiving entity's rejection (the `13` rule and forced failures without a message). */
export const REJECTED_BY_RECEIVER = 'Transferencia rechazada por la entidad receptora';
export const KEY_NOT_REGISTERED = 'La llave de destino no está registrada en el directorio Bre-B';
export const KEY_INACTIVE = 'La llave de destino está inactiva en el directorio Bre-B';
export const ANCHOR_MISMATCH = 'El anchorHandle no corresponde a la llave de destino';

/** The ACH account number every validation and transfer refuses (422 INVALID_BANK_ACCOUNT). */
export const INVALID_ACH_ACCOUNT = '0000000000';

/** The `13` rule: an amount whose last two centavo digits are 13 is rejected by the receiver. */
export function amountOutcome(amountCents: bigint): Outcome {
  return amountCents % 100n === 13n ? { status: 'FAILED', errorMessage: REJECTED_BY_RECEIVER } : { status: 'COMPLETED', errorMessage: null };
}

/**
 * A Bre-B transfer is settled against the directory as it is at settlement time: a key that is
 * not registered or inactive, or an anchor handle that is not the key's, fails the transfer
 * (asynchronously, as the real rail answers); otherwise the `13` rule decides.
 */
export function brebOutcome(t: { amountCents: bigint; keyValue: string; anchorHandle: string }, registeredAnchor?: string): Outcome {
  const key = normalizeKeyValue(t.keyValue);
  // A key registered by a participant is active with the registration's anchor handle.
  if (registeredAnchor !== undefined) {
    return t.anchorHandle === registeredAnchor ? amountOutcome(t.amountCents) : { status: 'FAILED', errorMessage: ANCHOR_MISMATCH };
  }
  const status = directoryStatus(key);
  if (status === 'not_found') return { status: 'FAILED', errorMessage: KEY_NOT_REGISTERED };
  if (status === 'inactive') return { status: 'FAILED', errorMessage: KEY_INACTIVE };
  if (t.anchorHandle !== anchorHandleFor(key)) return { status: 'FAILED', errorMessage: ANCHOR_MISMATCH };
  return amountOutcome(t.amountCents);
}

export function achOutcome(t: { amountCents: bigint }): Outcome {
  return amountOutcome(t.amountCents);
}

export function railPrefix(rail: Rail): string {
  return rail === 'BREB' ? 'brb' : 'ach';
}
