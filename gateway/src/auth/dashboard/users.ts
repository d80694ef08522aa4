import { randomUUID } from 'node:crypto';
import { AppError, isUniqueViolation } from '@wallet/platform';
import type { Queryable } from '../../persistence/sql.js';
import { randomBase62 } from '../secrets.js';
import { INVITATION_PREFIX, normalizeEmail, type DashboardDeps, type DashboardRole, type DashboardUser, type InvitedDashboardUser } from './model.js';

/**
 * Dashboard users as operators manage them: created (development) or invited (production),
 * re-invited, listed, disabled. An invited user has no password and no secret until they redeem
 * their single-use invitation (invitations.ts); the operator who invited them never holds either.
 */
export class DashboardUsers {
  constructor(private readonly d: DashboardDeps) {}

  /** Development provisioning (DASHBOARD_ENROLMENT=direct): the operator sets the password and receives the TOTP secret. */
  async createUser(
    companyId: string,
    input: { email: string; password: string; role: DashboardRole },
  ): Promise<DashboardUser & { totpSecret: string; otpauthUrl: string }> {
    await this.requireCompany(companyId);
    const email = normalizeEmail(input.email);
    const secret = this.d.codes.newSecret();
    const passwordHash = await this.d.passwords.hash(input.password);
    const user = await insertUnique(() =>
      this.d.users.insertActive(this.d.db, {
        id: randomUUID(),
        companyId,
        email,
        passwordHash,
        role: input.role,
        totpSecretEnc: this.d.box.seal(secret),
      }),
    );
    this.d.log.info({ userId: user.id, companyId, role: input.role }, 'dashboard user created');
    return { ...user, totpSecret: secret, otpauthUrl: this.d.codes.uri(secret, email) };
  }

  /**
   * Production provisioning: the user exists (e-mail reserved, not active, no credentials) with a
   * single-use invitation; the link goes to the user (CredentialDelivery), in production never to an operator.
   * `q`: the caller's transaction (an approved request applies it with its own state change).
   */
  async inviteUser(companyId: string, input: { email: string; role: DashboardRole }, q: Queryable = this.d.db): Promise<InvitedDashboardUser> {
    await this.requireCompany(companyId);
    const email = normalizeEmail(input.email);
    const token = `${INVITATION_PREFIX}${randomBase62(43)}`;
    const { invitationExpiresAt, ...user } = await insertUnique(() =>
      this.d.users.insertInvited(q, {
        id: randomUUID(),
        companyId,
        email,
        role: input.role,
        invitationId: randomUUID(),
        tokenHash: this.d.hmac('invitation', token),
        ttlSeconds: this.d.opts.invitationTtlSeconds,
      }),
    );
    this.d.log.info({ userId: user.id, companyId, role: input.role }, 'dashboard user invited');
    return { ...user, invitationUrl: this.invitationUrl(token), invitationExpiresAt };
  }

  /**
   * A new invitation for a user who has not activated yet (the first one expired or was lost):
   * earlier invitations are revoked and anything chosen with them (password, secret) is cleared.
   */
  async reinviteUser(companyId: string, userId: string, q?: Queryable): Promise<InvitedDashboardUser> {
    const token = `${INVITATION_PREFIX}${randomBase62(43)}`;
    const within = async (tx: Queryable) => {
      const user = await this.d.users.lockUser(tx, companyId, userId);
      if (!user) throw new AppError('USER_NOT_FOUND');
      if (user.activatedAt || user.disabledAt) throw new AppError('USER_ALREADY_ACTIVE');
      await this.d.users.resetEnrolment(tx, userId);
      const expiresAt = await this.d.users.insertInvitation(tx, {
        id: randomUUID(),
        userId,
        tokenHash: this.d.hmac('invitation', token),
        ttlSeconds: this.d.opts.invitationTtlSeconds,
      });
      return { user, expiresAt };
    };
    const out = q ? await within(q) : await this.d.db.tx(within);
    this.d.log.info({ userId, companyId }, 'dashboard user re-invited');
    return { ...out.user, invitationUrl: this.invitationUrl(token), invitationExpiresAt: out.expiresAt };
  }

  listUsers(companyId: string): Promise<DashboardUser[]> {
    return this.d.users.listByCompany(this.d.db, companyId);
  }

  /** Disables the user and revokes every session and open invitation of theirs at once. */
  async disableUser(companyId: string, userId: string): Promise<DashboardUser> {
    const user = await this.d.users.disable(this.d.db, companyId, userId);
    if (!user) throw new AppError('USER_NOT_FOUND');
    return user;
  }

  /** The dashboard page with the token in the fragment: browsers never send it to a server (no access log, proxy or Referer sees it). */
  private invitationUrl(token: string): string {
    return `${(this.d.opts.publicUrl ?? '').replace(/\/+$/, '')}/dashboard#invitation=${token}`;
  }

  private async requireCompany(companyId: string): Promise<void> {
    if (!(await this.d.users.companyExists(this.d.db, companyId))) throw new AppError('COMPANY_NOT_FOUND');
  }
}

/** A new dashboard user's row; a taken e-mail is a 400 on `email`. */
async function insertUnique<T>(insert: () => Promise<T>): Promise<T> {
  try {
    return await insert();
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'email', message: 'ya existe un usuario con este correo' }] });
    }
    throw err;
  }
}
