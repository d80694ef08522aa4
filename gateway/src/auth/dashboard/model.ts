import type { CompanyProfileClaims, Logger, SecretBox } from '@wallet/platform';
import type { DashboardSessionStore } from '../../persistence/dashboard-session.store.js';
import type { DashboardUserStore } from '../../persistence/dashboard-user.store.js';
import type { Queryable } from '../../persistence/sql.js';
import type { DashboardLockouts, LockoutPolicy } from '../dashboard-lockouts.js';
import type { Passwords, TotpCodes } from '../secrets.js';

export type DashboardRole = 'ADMIN' | 'OPERATOR' | 'VIEWER';
export const DASHBOARD_ROLES: readonly DashboardRole[] = ['ADMIN', 'OPERATOR', 'VIEWER'];

/** Who is behind a dashboard session (CONTRACT §5). */
export interface SessionPrincipal {
  sessionId: string;
  userId: string;
  email: string;
  role: DashboardRole;
  companyId: string;
  companyName: string;
  /** The company's profile (tax regime, NIT, multi-signature threshold, limits), signed into the caller context of the user's calls (http/context.ts). */
  profile: CompanyProfileClaims;
  expiresAt: string;
}

export interface DashboardUser {
  id: string;
  companyId: string;
  email: string;
  role: DashboardRole;
  createdAt: string;
  /** Null while an invited user has not confirmed a first TOTP code. */
  activatedAt: string | null;
  disabledAt: string | null;
}

/** What the operator gets for an invited user: a link to hand to the user, never a password or secret. */
export interface InvitedDashboardUser extends DashboardUser {
  invitationUrl: string;
  invitationExpiresAt: string;
}

/** What the holder of an invitation may see before redeeming it. */
export interface InvitationView {
  email: string;
  role: DashboardRole;
  companyName: string;
  status: 'PENDING' | 'ACCEPTED';
  expiresAt: string;
}

/** Database access: single statements, and a transaction where several must agree. */
export interface DashboardDb extends Queryable {
  tx<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

export interface DashboardAuthOptions {
  /** HMAC key for session tokens (the API-key pepper, domain-separated). */
  pepper: string;
  /** Encrypts TOTP secrets at rest (SecretBox: AES-256-GCM, key = SHA-256 of GATEWAY_ENCRYPTION_KEY). */
  secretKey: string;
  sessionTtlSeconds: number;
  /** Shown in authenticator apps. */
  issuer: string;
  /** Per-account lockout window and duration (the failure limits are fixed: 10 passwords, 5 codes). */
  lockout: LockoutPolicy;
  /** How long an invitation can be redeemed (72 h). */
  invitationTtlSeconds: number;
  /** Origin of the dashboard page in invitation links (`https://…`); without it the link is a path on the gateway. */
  publicUrl?: string;
}

export const SESSION_PREFIX = 'wsess_';
export const SESSION_TOKEN = /^wsess_[0-9A-Za-z]{43}$/;
export const INVITATION_PREFIX = 'winv_';
/** `winv_` + 43 base62 characters (256 bits). */
export const INVITATION_TOKEN = /^winv_[0-9A-Za-z]{43}$/;

/** What the dashboard's users, invitations, sessions and TOTP share (built once by DashboardAuth). */
export interface DashboardDeps {
  db: DashboardDb;
  opts: DashboardAuthOptions;
  log: Logger;
  /** Seals TOTP secrets. */
  box: SecretBox;
  passwords: Passwords;
  codes: TotpCodes;
  lockouts: DashboardLockouts;
  users: DashboardUserStore;
  sessions: DashboardSessionStore;
  /** Stored form of a session or invitation token (HMAC under the pepper, domain-separated). */
  hmac(kind: 'session' | 'invitation', token: string): string;
}

export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}
