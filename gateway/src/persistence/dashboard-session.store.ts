import type { CompanyProfileClaims } from '@wallet/platform';
import type { CompanyStatus } from './company.store.js';
import type { DashboardRole } from '../auth/dashboard/model.js';
import type { Queryable } from './sql.js';
import { isoCol } from './sql.js';

/** A live session with its user and company (the user not disabled). */
export interface DashboardSessionRow {
  sessionId: string;
  tokenHash: string;
  userId: string;
  email: string;
  role: DashboardRole;
  companyId: string;
  companyName: string;
  companyStatus: CompanyStatus;
  /** What the services apply the company's rules with (signed into the caller context, as an API key's). */
  profile: CompanyProfileClaims;
  expiresAt: string;
}

/** Dashboard sessions (gateway.dashboard_sessions). */
export class DashboardSessionStore {
  /** Creates a session; returns when it expires. */
  async insert(q: Queryable, s: { id: string; tokenHash: string; userId: string; ttlSeconds: number }): Promise<string> {
    const [row] = (await q.query<{ expires_at: string }>(
      `insert into gateway.dashboard_sessions (id, token_hash, user_id, expires_at)
       values (?::uuid, ?, ?::uuid, now() + (?::bigint * interval '1 second')) returning ${isoCol('expires_at', 'expires_at')}`,
      [s.id, s.tokenHash, s.userId, String(s.ttlSeconds)],
    )) as [{ expires_at: string }];
    return row.expires_at;
  }

  async findLive(q: Queryable, tokenHash: string): Promise<DashboardSessionRow | undefined> {
    const [r] = await q.query<{
      session_id: string;
      token_hash: string;
      user_id: string;
      email: string;
      role: DashboardRole;
      company_id: string;
      company_name: string;
      company_status: CompanyStatus;
      tax_regime: string;
      nit: string;
      multi_sig_threshold: number;
      daily: string;
      monthly: string;
      expires_at: string;
    }>(
      `select s.id::text as session_id, s.token_hash, u.id::text as user_id, u.email, u.role, c.id::text as company_id,
              c.name as company_name, c.status as company_status, c.tax_regime, c.nit, c.multi_sig_threshold,
              c.counterparty_daily_limit_cents::text as daily, c.counterparty_monthly_limit_cents::text as monthly,
              ${isoCol('s.expires_at', 'expires_at')}
         from gateway.dashboard_sessions s
         join gateway.dashboard_users u on u.id = s.user_id
         join gateway.companies c on c.id = u.company_id
        where s.token_hash = ? and s.revoked_at is null and s.expires_at > now() and u.disabled_at is null`,
      [tokenHash],
    );
    return r
      ? {
          sessionId: r.session_id,
          tokenHash: r.token_hash,
          userId: r.user_id,
          email: r.email,
          role: r.role,
          companyId: r.company_id,
          companyName: r.company_name,
          companyStatus: r.company_status,
          profile: {
            nit: r.nit,
            name: r.company_name,
            ivaApplicable: r.tax_regime === 'COMMON',
            multiSigThreshold: Number(r.multi_sig_threshold),
            counterpartyDailyLimitCents: BigInt(r.daily),
            counterpartyMonthlyLimitCents: BigInt(r.monthly),
          },
          expiresAt: r.expires_at,
        }
      : undefined;
  }

  async revoke(q: Queryable, sessionId: string): Promise<void> {
    await q.query('update gateway.dashboard_sessions set revoked_at = now() where id = ?::uuid and revoked_at is null', [sessionId]);
  }

  /** Expired and revoked sessions older than a day. */
  async purge(q: Queryable): Promise<void> {
    await q.query(`delete from gateway.dashboard_sessions where expires_at < now() - interval '1 day' or revoked_at < now() - interval '1 day'`);
  }
}
