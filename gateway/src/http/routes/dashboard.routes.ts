import { z } from 'zod';
import { AppError } from '@wallet/platform';
import { DASHBOARD_ROLES, type DashboardAuth, type DashboardUser } from '../../auth/dashboard-auth.js';
import type { TransferClient } from '../../transfer/transfer-client.js';
import { approvalToApi } from '../../transfer/presenters.js';
import { ApprovalSchema, DashboardUserSchema } from '../api-schemas.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { textSchema, uuidSchema } from '../validation.js';

const CompanyParams = z.object({ id: uuidSchema() });
const UserParams = z.object({ id: uuidSchema(), userId: uuidSchema() });

export const CreateDashboardUserBody = z.strictObject({
  email: z.email().max(254).meta({ description: 'Login of the user; unique across companies.' }),
  password: z.string().min(12).max(128).meta({ description: '12 to 128 characters; stored as an argon2id hash.' }),
  role: z.enum(DASHBOARD_ROLES as unknown as ['ADMIN', 'OPERATOR', 'VIEWER']).meta({ description: 'ADMIN and OPERATOR sign approvals; VIEWER only reads.' }),
}).meta({ id: 'CreateDashboardUserRequest' });

const CreatedDashboardUserSchema = DashboardUserSchema.extend({
  totpSecret: z.string().meta({ description: 'Base32 TOTP secret (RFC 6238, SHA-1, 6 digits, 30 s). Shown once.' }),
  otpauthUrl: z.string().meta({ description: '`otpauth://` URL for authenticator apps (render it as a QR). Shown once.' }),
}).meta({ id: 'CreatedDashboardUser' });

const LoginBody = z.strictObject({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(1024),
}).meta({ id: 'LoginRequest' });

const TotpCode = z.string().regex(/^\d{6}$/, 'Debe ser un código de 6 dígitos.').meta({ description: "The user's current 6-digit TOTP code (each code is accepted once)." });
const SignBody = z.strictObject({ totpCode: TotpCode }).meta({ id: 'SignApprovalRequest' });
const RejectBody = z.strictObject({ totpCode: TotpCode, reason: textSchema(1, 500).optional() }).meta({ id: 'RejectApprovalRequest' });
const ApprovalParams = z.object({ approvalId: z.string().regex(/^appr_[0-9a-f]{32}$/) });
const ApprovalQuery = z.strictObject({
  status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED']).default('PENDING'),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional(),
});

const userToApi = (u: DashboardUser) => ({ id: u.id, email: u.email, role: u.role, createdAt: u.createdAt, disabledAt: u.disabledAt });

/** Operator provisioning of dashboard users (CONTRACT §4). */
export function adminDashboardUserRoutes(auth: DashboardAuth): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST', path: '/admin/companies/{id}/users', operationId: 'adminCreateDashboardUser', tags: ['Admin'],
      summary: 'Create a dashboard user (the TOTP secret is shown once)',
      auth: { kind: 'admin' },
      params: CompanyParams, paramErrors: { id: 'COMPANY_NOT_FOUND' },
      body: CreateDashboardUserBody,
      responses: { 201: { description: 'The user with its TOTP secret and otpauth URL.', schema: CreatedDashboardUserSchema } },
      errors: ['COMPANY_NOT_FOUND'],
      handler: async ({ params, body }) => {
        const u = await auth.createUser(params.id, body);
        return { status: 201, body: { ...userToApi(u), totpSecret: u.totpSecret, otpauthUrl: u.otpauthUrl } };
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

/** Session login/logout (CONTRACT §5). API keys are refused on /auth/* before routing. */
export function authRoutes(auth: DashboardAuth): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST', path: '/auth/login', operationId: 'login', tags: ['Dashboard'],
      summary: 'Log a dashboard user in: a session token for /dashboard/* (8 h)',
      description: 'Wrong e-mail or password → 401 INVALID_CREDENTIALS, the same answer whether the e-mail exists or not.',
      auth: { kind: 'public' }, rateClass: 'AUTHENTICATION',
      body: LoginBody,
      responses: { 200: { description: 'The session token (shown once) and its expiry.', schema: z.object({ token: z.string(), expiresAt: z.string().meta({ format: 'date-time' }) }).meta({ id: 'Session' }) } },
      errors: ['INVALID_CREDENTIALS', 'COMPANY_INACTIVE', 'API_KEY_AUTH_NOT_ALLOWED'],
      handler: async ({ body }) => ({ status: 200, body: await auth.login(body.email, body.password) }),
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
  /** VIEWER is refused before the TOTP code is spent. */
  const requireSigner = (role: string) => {
    if (role !== 'ADMIN' && role !== 'OPERATOR') throw new AppError('INSUFFICIENT_ROLE');
  };
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
      description: 'Signed by ADMIN or OPERATOR users, each once. At quorum the transaction becomes EXECUTING, is dispatched, then PENDING → COMPLETED/FAILED as any send.',
      auth: { kind: 'session' }, rateClass: 'FINANCIAL',
      params: ApprovalParams, paramErrors: { approvalId: 'APPROVAL_NOT_FOUND' },
      body: SignBody,
      responses: { 200: { description: 'The approval after the signature.', schema: ApprovalSchema } },
      errors: ['INVALID_TOTP_CODE', 'INSUFFICIENT_ROLE', 'ALREADY_SIGNED', 'APPROVAL_NOT_PENDING', 'APPROVAL_EXPIRED', 'APPROVAL_NOT_FOUND'],
      handler: async ({ params, body, session, call }) => {
        const s = session!;
        requireSigner(s.role);
        // CONTRACT §9: ALREADY_SIGNED (and the approval's own state) before the code, so a signer
        // who already signed does not spend a code; the signature itself re-checks under the lock.
        await transfers.signApproval({ approvalId: params.approvalId, precheck: true }, call);
        await auth.verifyTotp(s.userId, body.totpCode);
        const a = await transfers.signApproval({ approvalId: params.approvalId, precheck: false }, call);
        return { status: 200, body: approvalToApi(a) };
      },
    }),
    defineRoute({
      method: 'POST', path: '/dashboard/approvals/{approvalId}/reject', operationId: 'rejectApproval', tags: ['Dashboard'],
      summary: 'Reject an approval: the transaction FAILS with the reason and its funds are released',
      auth: { kind: 'session' }, rateClass: 'FINANCIAL',
      params: ApprovalParams, paramErrors: { approvalId: 'APPROVAL_NOT_FOUND' },
      body: RejectBody,
      responses: { 200: { description: 'The approval, REJECTED.', schema: ApprovalSchema } },
      errors: ['INVALID_TOTP_CODE', 'INSUFFICIENT_ROLE', 'APPROVAL_NOT_PENDING', 'APPROVAL_EXPIRED', 'APPROVAL_NOT_FOUND'],
      handler: async ({ params, body, session, call }) => {
        const s = session!;
        requireSigner(s.role);
        await auth.verifyTotp(s.userId, body.totpCode);
        const a = await transfers.rejectApproval({ approvalId: params.approvalId, ...(body.reason ? { reason: body.reason } : {}) }, call);
        return { status: 200, body: approvalToApi(a) };
      },
    }),
  ];
}
