import { AppError } from '@wallet/platform';
import type { DashboardDeps } from './model.js';

/**
 * The dashboard user's second factor for TOTP-gated actions (signing an approval): RFC 6238,
 * SHA-1, 6 digits, 30 s, ±1 step; a code is accepted once — the last accepted time step is kept
 * per user and only a later step passes (no replay).
 */
export class DashboardTotp {
  constructor(private readonly d: DashboardDeps) {}

  /**
   * ACCOUNT_LOCKED when the user's account is locked: for TOTP-gated actions, checked before
   * anything else is looked at, so a locked user gets the same answer whatever the approval.
   */
  async assertNotLocked(email: string): Promise<void> {
    await this.d.lockouts.assertNotLocked(email);
  }

  /**
   * Checks a 6-digit code of the user's authenticator and consumes it: the matched time step must
   * be later than the last one accepted for this user (compare-and-set), so a code works once.
   * The attempt counts toward the user's TOTP lockout (5 wrong codes); ACCOUNT_LOCKED while locked.
   */
  async verifyTotp(userId: string, code: string, now = Date.now()): Promise<void> {
    if (!/^\d{6}$/.test(code)) throw new AppError('INVALID_TOTP_CODE');
    const u = await this.d.users.findTotpSecret(this.d.db, userId);
    if (!u) throw new AppError('INVALID_TOTP_CODE');
    const ok = await this.d.lockouts.attempt(
      'totp',
      u.email,
      async () => {
        const step = this.d.codes.matchStep(this.d.box.open(u.totpSecretEnc), u.email, code, now);
        if (step === undefined) return undefined;
        if (!(await this.d.users.consumeTotpStep(this.d.db, userId, step))) {
          this.d.log.warn({ userId }, 'TOTP code replayed');
          return undefined;
        }
        return true;
      },
      { userId },
    );
    if (!ok) throw new AppError('INVALID_TOTP_CODE');
  }
}
