import { z } from 'zod';
import type { DashboardAuth } from '../../auth/dashboard-auth.js';
import {
  DashboardUserSchema,
  InvitationLookupBody,
  InvitationAcceptBody,
  InvitationConfirmBody,
  InvitationSchema,
  InvitationEnrolmentSchema,
  LoginBody,
} from './schemas.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { LOCKOUT_NOTE } from './signing.js';
import { userToApi } from './presenters.js';

/** Session login/logout (CONTRACT §5) and invitation redemption. API keys are refused on /auth/* before routing. */
export function authRoutes(auth: DashboardAuth): AnyRoute[] {
  const invitationErrors = ['INVITATION_NOT_FOUND', 'INVITATION_EXPIRED', 'INVITATION_USED', 'API_KEY_AUTH_NOT_ALLOWED'] as const;
  return [
    defineRoute({
      method: 'POST',
      path: '/auth/login',
      operationId: 'login',
      tags: ['Dashboard'],
      summary: 'Log a dashboard user in: a session token for /dashboard/* (8 h)',
      description:
        'Wrong e-mail or password → 401 INVALID_CREDENTIALS, the same answer whether the e-mail exists or not (or is ' +
        'invited but not yet active, or disabled). ' +
        LOCKOUT_NOTE +
        ' An e-mail that does not exist locks the same way.',
      auth: { kind: 'public' },
      rateClass: 'AUTHENTICATION',
      body: LoginBody,
      responses: {
        200: {
          description: 'The session token (shown once) and its expiry.',
          schema: z.object({ token: z.string(), expiresAt: z.string().meta({ format: 'date-time' }) }).meta({ id: 'Session' }),
        },
      },
      errors: ['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'COMPANY_INACTIVE', 'API_KEY_AUTH_NOT_ALLOWED'],
      handler: async ({ body, ctx }) => ({ status: 200, body: await auth.login(body.email, body.password, ctx.state.clientIp) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/auth/invitations/lookup',
      operationId: 'lookupInvitation',
      tags: ['Dashboard'],
      summary: 'Self-enrolment, step 0: what an invitation is for (e-mail, role, company), while it can be redeemed',
      description:
        'The token travels in the body, never in a URL path (access logs and proxies record paths). ' +
        'Unknown → 404 INVITATION_NOT_FOUND; used → 410 INVITATION_USED; expired, revoked or its user disabled → 410 INVITATION_EXPIRED.',
      auth: { kind: 'public' },
      rateClass: 'AUTHENTICATION',
      body: InvitationLookupBody,
      responses: { 200: { description: 'The invitation.', schema: InvitationSchema } },
      errors: [...invitationErrors],
      handler: async ({ body }) => ({ status: 200, body: await auth.lookupInvitation(body.token) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/auth/invitations/accept',
      operationId: 'acceptInvitation',
      tags: ['Dashboard'],
      summary: 'Self-enrolment, step 1: choose the password and receive the TOTP secret (shown once)',
      description:
        'Accepted once: a second acceptance (a replay, or anyone else holding the link) → 410 INVITATION_USED and nothing is ' +
        'written. The account is not active yet: confirm a code of the new secret (`/auth/invitations/confirm`) before the invitation expires.',
      auth: { kind: 'public' },
      rateClass: 'AUTHENTICATION',
      body: InvitationAcceptBody,
      responses: { 200: { description: 'The TOTP secret to enrol in an authenticator app.', schema: InvitationEnrolmentSchema } },
      errors: [...invitationErrors],
      handler: async ({ body }) => ({ status: 200, body: await auth.acceptInvitation(body.token, body.password) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/auth/invitations/confirm',
      operationId: 'confirmInvitation',
      tags: ['Dashboard'],
      summary: 'Self-enrolment, step 2: a first TOTP code activates the account (the invitation is then used)',
      description:
        'Proves the user holds the secret; only then can they log in. Wrong codes → 401 INVALID_TOTP_CODE and count toward ' +
        'the TOTP lockout (5 in 15 minutes → 423 ACCOUNT_LOCKED with Retry-After). Before step 1 → 409 INVALID_STATE_TRANSITION; ' +
        'once confirmed → 410 INVITATION_USED.',
      auth: { kind: 'public' },
      rateClass: 'AUTHENTICATION',
      body: InvitationConfirmBody,
      responses: { 200: { description: 'The user, now active.', schema: DashboardUserSchema } },
      errors: [...invitationErrors, 'INVALID_TOTP_CODE', 'ACCOUNT_LOCKED', 'INVALID_STATE_TRANSITION'],
      handler: async ({ body }) => ({ status: 200, body: userToApi(await auth.confirmInvitation(body.token, body.totpCode)) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/auth/logout',
      operationId: 'logout',
      tags: ['Dashboard'],
      summary: 'Revoke the current session',
      auth: { kind: 'session' },
      responses: { 204: { description: 'Revoked.' } },
      handler: async ({ session }) => {
        await auth.logout(session!.sessionId);
        return { status: 204, body: null };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/auth/me',
      operationId: 'currentUser',
      tags: ['Dashboard'],
      summary: 'The user and company behind the session',
      auth: { kind: 'session' },
      rateClass: 'READS',
      responses: {
        200: {
          description: 'The session user.',
          schema: z
            .object({
              id: z.string(),
              email: z.string(),
              role: z.enum(['ADMIN', 'OPERATOR', 'VIEWER']),
              companyId: z.string(),
              companyName: z.string(),
              sessionExpiresAt: z.string().meta({ format: 'date-time' }),
            })
            .meta({ id: 'SessionUser' }),
        },
      },
      handler: async ({ session }) => {
        const s = session!;
        return {
          status: 200,
          body: { id: s.userId, email: s.email, role: s.role, companyId: s.companyId, companyName: s.companyName, sessionExpiresAt: s.expiresAt },
        };
      },
    }),
  ];
}
