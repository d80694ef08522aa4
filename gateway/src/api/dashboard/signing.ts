import { z } from 'zod';
import { AppError } from '@wallet/platform';
import type { DashboardAuth, SessionPrincipal } from '../../auth/dashboard-auth.js';
import { textSchema } from '../../http/validation.js';

/**
 * What every TOTP-signed decision of the dashboard shares (a transfer's approval, a batch's
 * approval): the body, the lockout note of the OpenAPI document and the order of the checks.
 */

export const TotpCode = z
  .string()
  .regex(/^\d{6}$/, 'Debe ser un código de 6 dígitos.')
  .meta({ description: "The user's current 6-digit TOTP code (each code is accepted once)." });
export const SignBody = z.strictObject({ totpCode: TotpCode }).meta({ id: 'SignApprovalRequest' });
export const RejectBody = z.strictObject({ totpCode: TotpCode, reason: textSchema(1, 500).optional() }).meta({ id: 'RejectApprovalRequest' });

export const LOCKOUT_NOTE =
  'Lockout: 5 wrong TOTP codes for one user within 15 minutes lock that user for 15 minutes, whatever the IPs; ' +
  '10 wrong passwords for one e-mail from one client IP within 15 minutes lock that client out of that account for 15 minutes ' +
  '(the user still signs in from elsewhere): 423 ACCOUNT_LOCKED with `Retry-After` (seconds, also `details.retryAfter`); ' +
  'while locked even the right credentials are refused.';

/** VIEWER is refused before the TOTP code is spent. */
function requireSigner(s: SessionPrincipal): void {
  if (s.role !== 'ADMIN' && s.role !== 'OPERATOR') throw new AppError('INSUFFICIENT_ROLE');
}

/**
 * Role → lockout → the service's own checks (`precheck`: ALREADY_SIGNED, the approval's state;
 * CONTRACT §9 wants them before the code, so a signer who already signed spends no code) → the
 * TOTP code → the signature, which re-checks everything under the service's lock.
 */
export async function signWithTotp<T>(
  auth: DashboardAuth,
  s: SessionPrincipal,
  totpCode: string,
  call: { precheck(): Promise<unknown>; sign(): Promise<T> },
): Promise<T> {
  requireSigner(s);
  await auth.assertNotLocked(s.email);
  await call.precheck();
  await auth.verifyTotp(s.userId, totpCode);
  return call.sign();
}

/** Role → lockout → the TOTP code → the rejection (the service checks the approval's state). */
export async function rejectWithTotp<T>(auth: DashboardAuth, s: SessionPrincipal, totpCode: string, reject: () => Promise<T>): Promise<T> {
  requireSigner(s);
  await auth.assertNotLocked(s.email);
  await auth.verifyTotp(s.userId, totpCode);
  return reject();
}
