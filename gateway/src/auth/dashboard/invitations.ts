import { timingSafeEqual } from 'node:crypto';
import { AppError } from '@wallet/platform';
import type { InvitationRecord } from '../../persistence/dashboard-user.store.js';
import { INVITATION_TOKEN, type DashboardDeps, type DashboardUser, type InvitationView } from './model.js';

/**
 * Self-enrolment of an invited dashboard user, without a session: a single-use invitation
 * (`winv_` + 256 bits, stored as an HMAC) lets them choose the password and receive the TOTP
 * secret; only a first valid code of that secret activates the account.
 */
export class DashboardInvitations {
  constructor(private readonly d: DashboardDeps) {}

  /** What an invitation is for, while it can still be redeemed. */
  async lookupInvitation(token: string): Promise<InvitationView> {
    const inv = await this.redeemable(token, 'lookup');
    return { email: inv.email, role: inv.role, companyName: inv.companyName, status: inv.accepted ? 'ACCEPTED' : 'PENDING', expiresAt: inv.expiresAt };
  }

  /**
   * Step 1: the user chooses the password and receives a fresh TOTP secret (shown once). The
   * invitation moves to ACCEPTED in the same conditional statement, so it is accepted once: a
   * second acceptance (replay, or someone else holding the link) is INVITATION_USED and writes
   * nothing. The account is still inactive.
   */
  async acceptInvitation(token: string, password: string): Promise<{ email: string; totpSecret: string; otpauthUrl: string; expiresAt: string }> {
    const inv = await this.redeemable(token, 'accept');
    const secret = this.d.codes.newSecret();
    const passwordHash = await this.d.passwords.hash(password);
    if (!(await this.d.users.acceptInvitation(this.d.db, inv.id, passwordHash, this.d.box.seal(secret)))) {
      // Lost a race with another acceptance, a revocation or the expiry: say which.
      await this.redeemable(token, 'accept');
      throw new AppError('INVITATION_USED');
    }
    this.d.log.info({ userId: inv.userId, invitationId: inv.id }, 'dashboard invitation accepted');
    return { email: inv.email, totpSecret: secret, otpauthUrl: this.d.codes.uri(secret, inv.email), expiresAt: inv.expiresAt };
  }

  /**
   * Step 2: a first code of the new secret proves the user holds it; only then is the account
   * active (and the invitation USED). Wrong codes count toward the TOTP lockout of the e-mail. The
   * code's time step is recorded, so the same code cannot then sign an approval.
   */
  async confirmInvitation(token: string, code: string, now = Date.now()): Promise<DashboardUser> {
    const inv = await this.redeemable(token, 'confirm');
    if (!/^\d{6}$/.test(code)) throw new AppError('INVALID_TOTP_CODE');
    const sealed = inv.totpSecretEnc!;
    const user = await this.d.lockouts.attempt(
      'totp',
      inv.email,
      async () => {
        const step = this.d.codes.matchStep(this.d.box.open(sealed), inv.email, code, now);
        if (step === undefined) return undefined;
        return this.d.db.tx(async (tx) => {
          if (!(await this.d.users.lockAcceptedInvitation(tx, inv.id))) throw new AppError('INVITATION_USED');
          const activated = await this.d.users.activate(tx, inv.userId, sealed, step);
          if (!activated) throw new AppError('INVITATION_USED');
          await this.d.users.markInvitationUsed(tx, inv.id);
          return activated;
        });
      },
      { userId: inv.userId },
    );
    if (!user) throw new AppError('INVALID_TOTP_CODE');
    this.d.log.info({ userId: user.id, invitationId: inv.id }, 'dashboard user activated');
    return user;
  }

  /**
   * The invitation behind a token, refused with the precise reason: unknown → 404
   * INVITATION_NOT_FOUND; used (or accepted, for a second acceptance) → 410 INVITATION_USED;
   * revoked, its user disabled, or past `expires_at` → 410 INVITATION_EXPIRED; confirming before
   * accepting → 409 INVALID_STATE_TRANSITION.
   */
  private async redeemable(token: string, step: 'lookup' | 'accept' | 'confirm'): Promise<InvitationRecord> {
    if (!INVITATION_TOKEN.test(token)) throw new AppError('INVITATION_NOT_FOUND');
    const hash = this.d.hmac('invitation', token);
    const r = await this.d.users.findInvitation(this.d.db, hash);
    if (!r || !timingSafeEqual(Buffer.from(r.tokenHash), Buffer.from(hash))) throw new AppError('INVITATION_NOT_FOUND');
    if (r.used || r.activated) throw new AppError('INVITATION_USED');
    if (r.revoked || r.disabled || !r.live) throw new AppError('INVITATION_EXPIRED');
    if (step === 'accept' && r.accepted) throw new AppError('INVITATION_USED');
    if (step === 'confirm' && (!r.accepted || !r.totpSecretEnc)) throw new AppError('INVALID_STATE_TRANSITION');
    return r;
  }
}
