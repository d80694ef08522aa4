import { z } from 'zod';
import { invalidRequest } from '@wallet/platform';
import { DASHBOARD_ROLES, INVITATION_TOKEN, type DashboardAuth, type DashboardUser } from '../../auth/dashboard-auth.js';
import type { AdminChanges } from '../../app/admin-changes.js';
import type { TransferClient } from '../../transfer/transfer-client.js';
import { approvalToApi } from '../../transfer/presenters.js';
import { ApprovalSchema, DashboardUserSchema, isoDate } from '../api-schemas.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { uuidSchema } from '../validation.js';
import { approvalRequestToApi, PENDING_APPROVAL_RESPONSE } from './admin-approval-requests.routes.js';
import { LOCKOUT_NOTE, RejectBody, rejectWithTotp, SignBody, signWithTotp } from './dashboard-signing.js';

/** How dashboard users are provisioned: `direct` (development) or `invitation` (always in production). */
export type DashboardEnrolment = 'direct' | 'invitation';

const CompanyParams = z.object({ id: uuidSchema() });
const UserParams = z.object({ id: uuidSchema(), userId: uuidSchema() });

const Password = () => z.string().min(12).max(128).meta({ description: '12 to 128 characters; stored as an argon2id hash.' });
const Role = () => z.enum(DASHBOARD_ROLES as unknown as ['ADMIN', 'OPERATOR', 'VIEWER']).meta({ description: 'ADMIN and OPERATOR sign approvals; VIEWER only reads.' });

export const CreateDashboardUserBody = z.strictObject({
  email: z.email().max(254).meta({ description: 'Login of the user; unique across companies.' }),
  password: Password().optional().meta({
    description: 'Only when the gateway enrols directly (development) and `invite` is not true: 12 to 128 characters, stored as an argon2id hash. '
      + 'Refused (400) for an invitation: the user chooses it.',
  }),
  role: Role(),
  invite: z.boolean().optional().meta({
    description: 'true: answer an invitation instead of credentials, as production always does (DASHBOARD_ENROLMENT=invitation). Ignored in production.',
  }),
}).meta({ id: 'CreateDashboardUserRequest' });

const CreatedDashboardUserSchema = DashboardUserSchema.extend({
  totpSecret: z.string().meta({ description: 'Base32 TOTP secret (RFC 6238, SHA-1, 6 digits, 30 s). Shown once.' }),
  otpauthUrl: z.string().meta({ description: '`otpauth://` URL for authenticator apps (render it as a QR). Shown once.' }),
}).meta({ id: 'CreatedDashboardUser', description: 'Direct enrolment (development only): the operator chose the password and receives the TOTP secret.' });

const InvitedDashboardUserSchema = DashboardUserSchema.extend({
  invitationUrl: z.string().optional().meta({
    description: 'Outside production only (in production it is e-mailed to the user and never in a response). Single-use link to the dashboard page that enrols the user (`…/dashboard#invitation=winv_…`; the token is in the fragment, which browsers never send to a server). '
      + 'Hand it to the user only; it is not stored and cannot be shown again (re-invite instead).',
  }),
  invitationExpiresAt: isoDate().meta({ description: 'After this (72 h by default) the link answers 410 INVITATION_EXPIRED.' }),
}).meta({ id: 'InvitedDashboardUser', description: 'Invitation (always in production): no password and no secret; the user chooses the password and enrols the authenticator.' });

const InvitationTokenSchema = z.string().regex(INVITATION_TOKEN, 'Debe ser un token de invitación (winv_…).')
  .meta({ description: 'The `winv_…` token of the invitation link (after `#invitation=`).' });
const InvitationLookupBody = z.strictObject({ token: InvitationTokenSchema }).meta({ id: 'InvitationLookupRequest' });
const InvitationAcceptBody = z.strictObject({ token: InvitationTokenSchema, password: Password() }).meta({ id: 'InvitationAcceptRequest' });
const InvitationConfirmBody = z.strictObject({
  token: InvitationTokenSchema,
  totpCode: z.string().regex(/^\d{6}$/, 'Debe ser un código de 6 dígitos.').meta({ description: 'The current code of the authenticator enrolled with the secret from the acceptance.' }),
}).meta({ id: 'InvitationConfirmRequest' });
const InvitationSchema = z.object({
  email: z.string(),
  role: z.enum(['ADMIN', 'OPERATOR', 'VIEWER']),
  companyName: z.string(),
  status: z.enum(['PENDING', 'ACCEPTED']).meta({ description: 'PENDING: choose a password (accept). ACCEPTED: the password is set; confirm a TOTP code to activate.' }),
  expiresAt: isoDate(),
}).meta({ id: 'Invitation' });
const InvitationEnrolmentSchema = z.object({
  email: z.string(),
  totpSecret: z.string().meta({ description: 'Base32 TOTP secret (RFC 6238, SHA-1, 6 digits, 30 s). Shown once: enrol it in an authenticator now.' }),
  otpauthUrl: z.string().meta({ description: '`otpauth://` URL of the same secret (render it as a QR). Shown once.' }),
  expiresAt: isoDate().meta({ description: 'Confirm a code before this, or the invitation expires unused.' }),
}).meta({ id: 'InvitationEnrolment' });

const LoginBody = z.strictObject({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(1024),
}).meta({ id: 'LoginRequest' });

const ApprovalParams = z.object({ approvalId: z.string().regex(/^appr_[0-9a-f]{32}$/) });
const ApprovalQuery = z.strictObject({
  status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED']).default('PENDING'),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional(),
});

const userToApi = (u: DashboardUser) => ({ id: u.id, email: u.email, role: u.role, createdAt: u.createdAt, activatedAt: u.activatedAt, disabledAt: u.disabledAt });


/**
 * Operator provisioning of dashboard users (CONTRACT §4, §10). With `invitation` enrolment (forced
 * in production) the operator never holds a user's password or TOTP secret, so no operator can
 * create the signers of a quorum and sign as them.
 */
export function adminDashboardUserRoutes(auth: DashboardAuth, changes: AdminChanges, opts: { enrolment: DashboardEnrolment }): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST', path: '/admin/companies/{id}/users', operationId: 'adminCreateDashboardUser', tags: ['Admin'],
      summary: 'Create a dashboard user: an invitation e-mailed to the user (by an operator, once a second operator approves), or credentials shown once (development token)',
      description: 'A named operator\'s request answers 202 with an approval request: the user is invited only once a second, independent operator approves it (after the notice delay), and the company is told. The invitation link goes by e-mail to the user (single use, 72 h); the user chooses the password and enrols the authenticator through '
        + '`/auth/invitations/*`, and is not active until a first TOTP code is confirmed; no operator holds either credential, and in production no response shows the link. '
        + 'With the shared development token: with DASHBOARD_ENROLMENT=invitation or `invite: true`, 201 InvitedDashboardUser with the link; otherwise 201 CreatedDashboardUser '
        + 'with the password the caller chose and the TOTP secret. An operator may not send `password` (400).',
      auth: { kind: 'admin' },
      params: CompanyParams, paramErrors: { id: 'COMPANY_NOT_FOUND' },
      body: CreateDashboardUserBody,
      responses: {
        201: {
          description: 'InvitedDashboardUser (invitation; `invitationUrl` outside production only) or CreatedDashboardUser (direct enrolment, development).',
          schema: z.xor([InvitedDashboardUserSchema, CreatedDashboardUserSchema]),
        },
        202: PENDING_APPROVAL_RESPONSE,
      },
      errors: ['COMPANY_NOT_FOUND', 'APPROVAL_REQUEST_NOT_PENDING'],
      handler: async ({ params, body, admin, audit }) => {
        const invitation = opts.enrolment === 'invitation' || body.invite === true || admin?.kind === 'operator';
        if (invitation) {
          if (body.password !== undefined) {
            throw invalidRequest([{ path: 'password', message: 'No se admite en una invitación: el usuario elige su contraseña al aceptarla.' }]);
          }
          const out = await changes.addDashboardUser(params.id, { email: body.email, role: body.role }, admin!, audit!);
          if ('approval' in out) return { status: 202, body: approvalRequestToApi(out.approval) };
          return { status: 201, body: { ...userToApi(out.done), ...(out.credentials ?? {}), invitationExpiresAt: out.done.invitationExpiresAt } };
        }
        if (body.password === undefined) throw invalidRequest([{ path: 'password', message: 'Requerido.' }]);
        const u = await auth.createUser(params.id, { email: body.email, password: body.password, role: body.role });
        return { status: 201, body: { ...userToApi(u), totpSecret: u.totpSecret, otpauthUrl: u.otpauthUrl } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/admin/companies/{id}/users/{userId}/invitations', operationId: 'adminReinviteDashboardUser', tags: ['Admin'],
      summary: 'A new invitation for a user who has not activated yet (the earlier ones are revoked)',
      description: 'For a lost or expired link. Earlier invitations of the user stop working (410 INVITATION_EXPIRED) and a password '
        + 'chosen with them is cleared. The new link goes by e-mail to the user (in the answer outside production only). An active or disabled user → 409 USER_ALREADY_ACTIVE.',
      auth: { kind: 'admin' },
      params: UserParams, paramErrors: { id: 'COMPANY_NOT_FOUND', userId: 'USER_NOT_FOUND' },
      responses: { 201: { description: 'The user with the new invitation.', schema: InvitedDashboardUserSchema } },
      errors: ['USER_NOT_FOUND', 'USER_ALREADY_ACTIVE'],
      handler: async ({ params, audit }) => {
        const out = await changes.reinviteDashboardUser(params.id, params.userId, audit!);
        return { status: 201, body: { ...userToApi(out.done), ...(out.credentials ?? {}), invitationExpiresAt: out.done.invitationExpiresAt } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/admin/companies/{id}/users', operationId: 'adminListDashboardUsers', tags: ['Admin'],
      summary: "List a company's dashboard users (never secrets)",
      auth: { kind: 'admin' },
      params: CompanyParams, paramErrors: { id: 'COMPANY_NOT_FOUND' },
      responses: { 200: { description: 'Users, oldest first.', schema: z.object({ items: z.array(DashboardUserSchema) }) } },
      handler: async ({ params }) => ({
        status: 200,
        body: { items: (await auth.listUsers(params.id)).map(userToApi) },
      }),
    }),
    defineRoute({
      method: 'DELETE', path: '/admin/companies/{id}/users/{userId}', operationId: 'adminDisableDashboardUser', tags: ['Admin'],
      summary: 'Disable a dashboard user (its sessions are revoked at once; idempotent)',
      auth: { kind: 'admin' },
      params: UserParams, paramErrors: { id: 'COMPANY_NOT_FOUND', userId: 'USER_NOT_FOUND' },
      responses: { 200: { description: 'The user with `disabledAt`.', schema: DashboardUserSchema } },
      errors: ['USER_NOT_FOUND'],
      handler: async ({ params }) => {
        return { status: 200, body: userToApi(await auth.disableUser(params.id, params.userId)) };
      },
    }),
  ];
}

/** Session login/logout (CONTRACT §5) and invitation redemption. API keys are refused on /auth/* before routing. */
export function authRoutes(auth: DashboardAuth): AnyRoute[] {
  const invitationErrors = ['INVITATION_NOT_FOUND', 'INVITATION_EXPIRED', 'INVITATION_USED', 'API_KEY_AUTH_NOT_ALLOWED'] as const;
  return [
    defineRoute({
      method: 'POST', path: '/auth/login', operationId: 'login', tags: ['Dashboard'],
      summary: 'Log a dashboard user in: a session token for /dashboard/* (8 h)',
      description: 'Wrong e-mail or password → 401 INVALID_CREDENTIALS, the same answer whether the e-mail exists or not (or is '
        + 'invited but not yet active, or disabled). ' + LOCKOUT_NOTE + ' An e-mail that does not exist locks the same way.',
      auth: { kind: 'public' }, rateClass: 'AUTHENTICATION',
      body: LoginBody,
      responses: { 200: { description: 'The session token (shown once) and its expiry.', schema: z.object({ token: z.string(), expiresAt: z.string().meta({ format: 'date-time' }) }).meta({ id: 'Session' }) } },
      errors: ['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'COMPANY_INACTIVE', 'API_KEY_AUTH_NOT_ALLOWED'],
      handler: async ({ body, ctx }) => ({ status: 200, body: await auth.login(body.email, body.password, ctx.state.clientIp) }),
    }),
    defineRoute({
      method: 'POST', path: '/auth/invitations/lookup', operationId: 'lookupInvitation', tags: ['Dashboard'],
      summary: 'Self-enrolment, step 0: what an invitation is for (e-mail, role, company), while it can be redeemed',
      description: 'The token travels in the body, never in a URL path (access logs and proxies record paths). '
        + 'Unknown → 404 INVITATION_NOT_FOUND; used → 410 INVITATION_USED; expired, revoked or its user disabled → 410 INVITATION_EXPIRED.',
      auth: { kind: 'public' }, rateClass: 'AUTHENTICATION',
      body: InvitationLookupBody,
      responses: { 200: { description: 'The invitation.', schema: InvitationSchema } },
      errors: [...invitationErrors],
      handler: async ({ body }) => ({ status: 200, body: await auth.lookupInvitation(body.token) }),
    }),
    defineRoute({
      method: 'POST', path: '/auth/invitations/accept', operationId: 'acceptInvitation', tags: ['Dashboard'],
      summary: 'Self-enrolment, step 1: choose the password and receive the TOTP secret (shown once)',
      description: 'Accepted once: a second acceptance (a replay, or anyone else holding the link) → 410 INVITATION_USED and nothing is '
        + 'written. The account is not active yet: confirm a code of the new secret (`/auth/invitations/confirm`) before the invitation expires.',
      auth: { kind: 'public' }, rateClass: 'AUTHENTICATION',
      body: InvitationAcceptBody,
      responses: { 200: { description: 'The TOTP secret to enrol in an authenticator app.', schema: InvitationEnrolmentSchema } },
      errors: [...invitationErrors],
      handler: async ({ body }) => ({ status: 200, body: await auth.acceptInvitation(body.token, body.password) }),
    }),
    defineRoute({
      method: 'POST', path: '/auth/invitations/confirm', operationId: 'confirmInvitation', tags: ['Dashboard'],
      summary: 'Self-enrolment, step 2: a first TOTP code activates the account (the invitation is then used)',
      description: 'Proves the user holds the secret; only then can they log in. Wrong codes → 401 INVALID_TOTP_CODE and count toward '
        + 'the TOTP lockout (5 in 15 minutes → 423 ACCOUNT_LOCKED with Retry-After). Before step 1 → 409 INVALID_STATE_TRANSITION; '
        + 'once confirmed → 410 INVITATION_USED.',
      auth: { kind: 'public' }, rateClass: 'AUTHENTICATION',
      body: InvitationConfirmBody,
      responses: { 200: { description: 'The user, now active.', schema: DashboardUserSchema } },
      errors: [...invitationErrors, 'INVALID_TOTP_CODE', 'ACCOUNT_LOCKED', 'INVALID_STATE_TRANSITION'],
      handler: async ({ body }) => ({ status: 200, body: userToApi(await auth.confirmInvitation(body.token, body.totpCode)) }),
    }),
    defineRoute({
      method: 'POST', path: '/auth/logout', operationId: 'logout', tags: ['Dashboard'],
      summary: 'Revoke the current session',
      auth: { kind: 'session' },
      responses: { 204: { description: 'Revoked.' } },
      handler: async ({ session }) => {
        await auth.logout(session!.sessionId);
        return { status: 204, body: null };
      },
    }),
    defineRoute({
      method: 'GET', path: '/auth/me', operationId: 'currentUser', tags: ['Dashboard'],
      summary: 'The user and company behind the session',
      auth: { kind: 'session' }, rateClass: 'READS',
      responses: {
        200: {
          description: 'The session user.',
          schema: z.object({
            id: z.string(), email: z.string(), role: z.enum(['ADMIN', 'OPERATOR', 'VIEWER']), companyId: z.string(), companyName: z.string(),
            sessionExpiresAt: z.string().meta({ format: 'date-time' }),
          }).meta({ id: 'SessionUser' }),
        },
      },
      handler: async ({ session }) => {
        const s = session!;
        return { status: 200, body: { id: s.userId, email: s.email, role: s.role, companyId: s.companyId, companyName: s.companyName, sessionExpiresAt: s.expiresAt } };
      },
    }),
  ];
}

/** Multi-signature approvals of the session's company (CONTRACT §5). */
export function dashboardRoutes(auth: DashboardAuth, transfers: TransferClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/dashboard/approvals', operationId: 'listApprovals', tags: ['Dashboard'],
      summary: "The company's approvals in one status (PENDING by default), newest first",
      auth: { kind: 'session' }, rateClass: 'READS',
      query: ApprovalQuery,
      responses: { 200: { description: 'Approvals; `nextCursor` pages on.', schema: z.object({ items: z.array(ApprovalSchema), nextCursor: z.string().nullable() }) } },
      handler: async ({ query, call }) => {
        const r = await transfers.listApprovals({ status: query.status, limit: query.limit, ...(query.cursor ? { cursor: query.cursor } : {}) }, call);
        return { status: 200, body: { items: r.items.map(approvalToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/dashboard/approvals/{approvalId}/sign', operationId: 'signApproval', tags: ['Dashboard'],
      summary: 'Sign an approval with a TOTP code; the signature that reaches the threshold dispatches the transfer',
      description: 'Signed by ADMIN or OPERATOR users, each once. At quorum the transaction becomes EXECUTING, is dispatched, then PENDING → COMPLETED/FAILED as any send. ' + LOCKOUT_NOTE,
      auth: { kind: 'session' }, rateClass: 'FINANCIAL',
      params: ApprovalParams, paramErrors: { approvalId: 'APPROVAL_NOT_FOUND' },
      body: SignBody,
      responses: { 200: { description: 'The approval after the signature.', schema: ApprovalSchema } },
      errors: ['INVALID_TOTP_CODE', 'ACCOUNT_LOCKED', 'INSUFFICIENT_ROLE', 'ALREADY_SIGNED', 'APPROVAL_NOT_PENDING', 'APPROVAL_EXPIRED', 'APPROVAL_NOT_FOUND'],
      handler: async ({ params, body, session, call }) => {
        const a = await signWithTotp(auth, session!, body.totpCode, {
          precheck: () => transfers.signApproval({ approvalId: params.approvalId, precheck: true }, call),
          sign: () => transfers.signApproval({ approvalId: params.approvalId, precheck: false }, call),
        });
        return { status: 200, body: approvalToApi(a) };
      },
    }),
    defineRoute({
      method: 'POST', path: '/dashboard/approvals/{approvalId}/reject', operationId: 'rejectApproval', tags: ['Dashboard'],
      summary: 'Reject an approval: the transaction FAILS with the reason and its funds are released',
      description: LOCKOUT_NOTE,
      auth: { kind: 'session' }, rateClass: 'FINANCIAL',
      params: ApprovalParams, paramErrors: { approvalId: 'APPROVAL_NOT_FOUND' },
      body: RejectBody,
      responses: { 200: { description: 'The approval, REJECTED.', schema: ApprovalSchema } },
      errors: ['INVALID_TOTP_CODE', 'ACCOUNT_LOCKED', 'INSUFFICIENT_ROLE', 'APPROVAL_NOT_PENDING', 'APPROVAL_EXPIRED', 'APPROVAL_NOT_FOUND'],
      handler: async ({ params, body, session, call }) => {
        const a = await rejectWithTotp(auth, session!, body.totpCode,
          () => transfers.rejectApproval({ approvalId: params.approvalId, ...(body.reason ? { reason: body.reason } : {}) }, call));
        return { status: 200, body: approvalToApi(a) };
      },
    }),
  ];
}
