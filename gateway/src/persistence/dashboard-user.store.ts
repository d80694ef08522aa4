import type { DashboardRole, DashboardUser } from '../auth/dashboard/model.js';
import type { CompanyStatus } from './company.store.js';
import type { Queryable } from './sql.js';
import { isoCol } from './sql.js';

/** An invitation with its user, as every redeeming step reads it. */
export interface InvitationRecord {
  id: string;
  userId: string;
  tokenHash: string;
  email: string;
  role: DashboardRole;
  companyName: string;
  expiresAt: string;
  live: boolean;
  accepted: boolean;
  used: boolean;
  revoked: boolean;
  activated: boolean;
  disabled: boolean;
  totpSecretEnc: string | null;
}

interface UserRow {
  id: string;
  company_id: string;
  email: string;
  role: DashboardRole;
  created_at: string;
  activated_at: string | null;
  disabled_at: string | null;
}
const USER_COLS =
  `id::text as id, company_id::text as company_id, email, role, ${isoCol('created_at', 'created_at')}, ` +
  `${isoCol('activated_at', 'activated_at')}, ${isoCol('disabled_at', 'disabled_at')}`;
const toUser = (r: UserRow): DashboardUser => ({
  id: r.id,
  companyId: r.company_id,
  email: r.email,
  role: r.role,
  createdAt: r.created_at,
  activatedAt: r.activated_at,
  disabledAt: r.disabled_at,
});

/** Dashboard users and their invitations (gateway.dashboard_users, dashboard_invitations). */
export class DashboardUserStore {
  async companyExists(q: Queryable, companyId: string): Promise<boolean> {
    const companies = await q.query<{ n: number }>('select 1 as n from gateway.companies where id = ?::uuid', [companyId]);
    return companies.length > 0;
  }

  /** An active user with its credentials set (development provisioning). */
  async insertActive(
    q: Queryable,
    u: { id: string; companyId: string; email: string; passwordHash: string; role: DashboardRole; totpSecretEnc: string },
  ): Promise<DashboardUser> {
    const [row] = (await q.query<UserRow>(
      `insert into gateway.dashboard_users (id, company_id, email, password_hash, role, totp_secret_enc, activated_at)
       values (?::uuid, ?::uuid, ?, ?, ?, ?, now()) returning ${USER_COLS}`,
      [u.id, u.companyId, u.email, u.passwordHash, u.role, u.totpSecretEnc],
    )) as [UserRow];
    return toUser(row);
  }

  /** An invited user (no credentials) with its first invitation, in one statement. */
  async insertInvited(
    q: Queryable,
    u: { id: string; companyId: string; email: string; role: DashboardRole; invitationId: string; tokenHash: string; ttlSeconds: number },
  ): Promise<DashboardUser & { invitationExpiresAt: string }> {
    const [row] = (await q.query<UserRow & { invitation_expires_at: string }>(
      `with u as (
         insert into gateway.dashboard_users (id, company_id, email, role) values (?::uuid, ?::uuid, ?, ?) returning *
       ), i as (
         insert into gateway.dashboard_invitations (id, user_id, token_hash, expires_at)
         select ?::uuid, u.id, ?, now() + ?::int * interval '1 second' from u returning expires_at
       )
       select ${USER_COLS}, (select ${isoCol('i.expires_at', 'e')} from i) as invitation_expires_at from u`,
      [u.id, u.companyId, u.email, u.role, u.invitationId, u.tokenHash, u.ttlSeconds],
    )) as [UserRow & { invitation_expires_at: string }];
    return { ...toUser(row), invitationExpiresAt: row.invitation_expires_at };
  }

  async lockUser(q: Queryable, companyId: string, userId: string): Promise<DashboardUser | undefined> {
    const [u] = await q.query<UserRow>(`select ${USER_COLS} from gateway.dashboard_users where id = ?::uuid and company_id = ?::uuid for update`, [
      userId,
      companyId,
    ]);
    return u ? toUser(u) : undefined;
  }

  /** Revokes the user's open invitations and clears whatever was chosen with them (password, secret). */
  async resetEnrolment(q: Queryable, userId: string): Promise<void> {
    await q.query(`update gateway.dashboard_invitations set revoked_at = now() where user_id = ?::uuid and used_at is null and revoked_at is null`, [userId]);
    await q.query(`update gateway.dashboard_users set password_hash = null, totp_secret_enc = null, totp_last_step = null where id = ?::uuid`, [userId]);
  }

  /** A new invitation; returns when it expires. */
  async insertInvitation(q: Queryable, i: { id: string; userId: string; tokenHash: string; ttlSeconds: number }): Promise<string> {
    const [row] = (await q.query<{ expires_at: string }>(
      `insert into gateway.dashboard_invitations (id, user_id, token_hash, expires_at)
       values (?::uuid, ?::uuid, ?, now() + ?::int * interval '1 second') returning ${isoCol('expires_at', 'expires_at')}`,
      [i.id, i.userId, i.tokenHash, i.ttlSeconds],
    )) as [{ expires_at: string }];
    return row.expires_at;
  }

  async listByCompany(q: Queryable, companyId: string): Promise<DashboardUser[]> {
    const rows = await q.query<UserRow>(`select ${USER_COLS} from gateway.dashboard_users where company_id = ?::uuid order by created_at, id`, [companyId]);
    return rows.map(toUser);
  }

  /** Disables the user and revokes every session and open invitation of theirs, in one statement. */
  async disable(q: Queryable, companyId: string, userId: string): Promise<DashboardUser | undefined> {
    const rows = await q.query<UserRow>(
      `with u as (update gateway.dashboard_users set disabled_at = coalesce(disabled_at, now())
                   where id = ?::uuid and company_id = ?::uuid returning *),
            s as (update gateway.dashboard_sessions set revoked_at = now()
                   where user_id in (select id from u) and revoked_at is null returning 1),
            i as (update gateway.dashboard_invitations set revoked_at = now()
                   where user_id in (select id from u) and used_at is null and revoked_at is null returning 1)
       select ${USER_COLS} from u`,
      [userId, companyId],
    );
    return rows[0] ? toUser(rows[0]) : undefined;
  }

  /** The e-mail addresses of a company's active dashboard ADMINs. */
  async activeAdmins(q: Queryable, companyId: string): Promise<Array<{ email: string }>> {
    return q.query<{ email: string }>(
      `select email from gateway.dashboard_users
        where company_id = ?::uuid and role = 'ADMIN' and disabled_at is null and activated_at is not null
        order by created_at, id`,
      [companyId],
    );
  }

  async findInvitation(q: Queryable, tokenHash: string): Promise<InvitationRecord | undefined> {
    const [r] = await q.query<{
      id: string;
      user_id: string;
      token_hash: string;
      email: string;
      role: DashboardRole;
      company_name: string;
      expires_at: string;
      live: boolean;
      accepted: boolean;
      used: boolean;
      revoked: boolean;
      activated: boolean;
      disabled: boolean;
      totp_secret_enc: string | null;
    }>(
      `select i.id::text as id, i.user_id::text as user_id, i.token_hash, u.email, u.role, c.name as company_name,
              ${isoCol('i.expires_at', 'expires_at')}, i.expires_at > now() as live,
              i.accepted_at is not null as accepted, i.used_at is not null as used, i.revoked_at is not null as revoked,
              u.activated_at is not null as activated, u.disabled_at is not null as disabled, u.totp_secret_enc
         from gateway.dashboard_invitations i
         join gateway.dashboard_users u on u.id = i.user_id
         join gateway.companies c on c.id = u.company_id
        where i.token_hash = ?`,
      [tokenHash],
    );
    return r
      ? {
          id: r.id,
          userId: r.user_id,
          tokenHash: r.token_hash,
          email: r.email,
          role: r.role,
          companyName: r.company_name,
          expiresAt: r.expires_at,
          live: r.live,
          accepted: r.accepted,
          used: r.used,
          revoked: r.revoked,
          activated: r.activated,
          disabled: r.disabled,
          totpSecretEnc: r.totp_secret_enc,
        }
      : undefined;
  }

  /**
   * Accepts a redeemable invitation and sets the user's password and sealed secret, in one
   * conditional statement; false when the invitation was not (or no longer) redeemable.
   */
  async acceptInvitation(q: Queryable, invitationId: string, passwordHash: string, totpSecretEnc: string): Promise<boolean> {
    const rows = await q.query<{ id: string }>(
      `with i as (
         update gateway.dashboard_invitations i set accepted_at = now()
          where i.id = ?::uuid and i.accepted_at is null and i.used_at is null and i.revoked_at is null and i.expires_at > now()
            and exists (select 1 from gateway.dashboard_users u where u.id = i.user_id and u.activated_at is null and u.disabled_at is null)
          returning i.user_id
       )
       update gateway.dashboard_users u set password_hash = ?, totp_secret_enc = ?, totp_last_step = null
         from i where u.id = i.user_id returning u.id::text as id`,
      [invitationId, passwordHash, totpSecretEnc],
    );
    return rows.length > 0;
  }

  /** Locks the invitation's row; whether it is accepted and still redeemable. */
  async lockAcceptedInvitation(q: Queryable, invitationId: string): Promise<boolean> {
    const [i] = await q.query<{ ok: boolean }>(
      `select (used_at is null and revoked_at is null and accepted_at is not null and expires_at > now()) as ok
         from gateway.dashboard_invitations where id = ?::uuid for update`,
      [invitationId],
    );
    return Boolean(i?.ok);
  }

  /** Activates the invited user at `step` if its secret is still `totpSecretEnc`. */
  async activate(q: Queryable, userId: string, totpSecretEnc: string, step: number): Promise<DashboardUser | undefined> {
    const [u] = await q.query<UserRow>(
      `update gateway.dashboard_users set activated_at = now(), totp_last_step = ?::bigint
        where id = ?::uuid and activated_at is null and disabled_at is null and totp_secret_enc = ?
        returning ${USER_COLS}`,
      [String(step), userId, totpSecretEnc],
    );
    return u ? toUser(u) : undefined;
  }

  async markInvitationUsed(q: Queryable, invitationId: string): Promise<void> {
    await q.query('update gateway.dashboard_invitations set used_at = now() where id = ?::uuid', [invitationId]);
  }

  /** What password login needs, by e-mail. */
  async findForLogin(
    q: Queryable,
    email: string,
  ): Promise<{ id: string; passwordHash: string | null; usable: boolean; companyStatus: CompanyStatus } | undefined> {
    const [u] = await q.query<{ id: string; password_hash: string | null; usable: boolean; company_status: CompanyStatus }>(
      `select u.id::text as id, u.password_hash, (u.disabled_at is null and u.activated_at is not null) as usable, c.status as company_status
         from gateway.dashboard_users u join gateway.companies c on c.id = u.company_id where u.email = ?`,
      [email],
    );
    return u ? { id: u.id, passwordHash: u.password_hash, usable: u.usable, companyStatus: u.company_status } : undefined;
  }

  /** An active user's e-mail and sealed TOTP secret. */
  async findTotpSecret(q: Queryable, userId: string): Promise<{ email: string; totpSecretEnc: string } | undefined> {
    const [u] = await q.query<{ email: string; totp_secret_enc: string }>(
      'select email, totp_secret_enc from gateway.dashboard_users where id = ?::uuid and disabled_at is null and activated_at is not null',
      [userId],
    );
    return u ? { email: u.email, totpSecretEnc: u.totp_secret_enc } : undefined;
  }

  /** Compare-and-set of the last accepted TOTP step: true when `step` is later (the code is consumed). */
  async consumeTotpStep(q: Queryable, userId: string, step: number): Promise<boolean> {
    const consumed = await q.query(
      `update gateway.dashboard_users set totp_last_step = ?::bigint
        where id = ?::uuid and (totp_last_step is null or totp_last_step < ?::bigint) returning 1`,
      [String(step), userId, String(step)],
    );
    return consumed.length > 0;
  }

  /** Invitations dead (used, revoked or expired) for a week. */
  async purgeInvitations(q: Queryable): Promise<void> {
    await q.query(`delete from gateway.dashboard_invitations where coalesce(used_at, revoked_at, expires_at) < now() - interval '7 days'`);
  }
}
