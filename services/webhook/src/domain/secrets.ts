import { randomBytes } from 'node:crypto';

/** A new signing secret: `whsec_` + 32 random bytes, base64url. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
