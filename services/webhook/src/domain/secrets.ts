import { randomBytes } from 'node:crypto';
import { SECRET_PREFIX } from './signature.js';

/** A new signing secret as Standard Webhooks has it: `whsec_` + standard (padded) base64 of 32 random key bytes. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}
