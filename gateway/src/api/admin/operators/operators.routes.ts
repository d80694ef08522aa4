import { z } from 'zod';
import type { AdminChanges } from '../../../app/admin-changes.js';
import type { Operator, OperatorAuth } from '../../../auth/operator-auth.js';
import { isoDate } from '../../../http/schemas.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { textSchema, uuidSchema } from '../../../http/validation.js';
import { approvalRequestToApi } from '../approval-requests/presenters.js';
import { PENDING_APPROVAL_RESPONSE } from '../approval-requests/schemas.js';

export const OperatorSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    status: z.enum(['INVITED', 'ACTIVE', 'DISABLED']).meta({ description: 'INVITED until the operator enrolls (sets a password, receives the TOTP secret).' }),
    createdBy: z.string().nullable().meta({ description: 'The operator who invited this one; null: the shared bootstrap token.' }),
    createdAt: isoDate(),
    enrolledAt: isoDate().nullable(),
    disabledAt: isoDate().nullable(),
  })
  .meta({ id: 'Operator' });

const InvitedOperatorSchema = OperatorSchema.extend({
  enrollmentToken: z.string().optional().meta({
    description:
      '`wenr_…`, outside production only (shown once). It is always e-mailed to the invitee, who redeems it at POST /admin/auth/enroll within `enrollmentExpiresAt`; in production it never appears in a response.',
  }),
  enrollmentExpiresAt: isoDate(),
}).meta({ id: 'InvitedOperator' });

const operatorToApi = (o: Operator) => ({
  id: o.id,
  name: o.name,
  email: o.email,
  status: o.status,
  createdBy: o.createdBy,
  createdAt: o.createdAt,
  enrolledAt: o.enrolledAt,
  disabledAt: o.disabledAt,
});

const Password = z.string().min(12).max(128).meta({ description: '12 to 128 characters; stored as an argon2id hash.' });
const InviteBody = z
  .strictObject({
    name: textSchema(1, 200),
    email: z.email().max(254).meta({ description: "The operator's login; unique." }),
  })
  .meta({ id: 'InviteOperatorRequest' });
const EnrollBody = z
  .strictObject({
    enrollmentToken: z.string().min(1).max(200),
    password: Password,
  })
  .meta({ id: 'EnrollOperatorRequest' });
const LoginBody = z
  .strictObject({
    email: z.string().min(1).max(254),
    password: z.string().min(1).max(1024),
    totpCode: z
      .string()
      .regex(/^\d{6}$/, 'Debe ser un código de 6 dígitos.')
      .meta({ description: "The operator's current 6-digit TOTP code (each code is accepted once)." }),
  })
  .meta({ id: 'OperatorLoginRequest' });

const OperatorSessionSchema = z
  .object({
    token: z.string().meta({ description: '`wadm_…`: `Authorization: Bearer <token>` on /admin/*. Shown once.' }),
    expiresAt: isoDate(),
    operator: OperatorSchema,
  })
  .meta({ id: 'OperatorSession' });

const PrincipalSchema = z
  .object({
    kind: z.enum(['operator', 'bootstrap-token']),
    operatorId: z.string().nullable(),
    email: z.string().nullable(),
  })
  .meta({ id: 'AdminPrincipal' });

/** Named operators (CONTRACT §10): invitation, enrollment, login with password + TOTP, disabling. */
export function adminOperatorRoutes(operators: OperatorAuth, changes: AdminChanges): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/admin/auth/login',
      operationId: 'adminLogin',
      tags: ['Admin'],
      summary: 'Log an operator in (password + TOTP): a short-lived session token for /admin/*',
      description:
        'Any failure (unknown e-mail, wrong password or code, a code already used, a disabled or not yet enrolled operator) → 401 OPERATOR_AUTH_FAILED, the same answer. ' +
        'Every attempt counts in the Admin login rate class per client IP, and is written to the audit log. ' +
        'Lockouts: 10 wrong passwords for one e-mail from one client IP within 15 minutes lock that client out of that account for 15 minutes (known and unknown e-mails alike; the operator still signs in from elsewhere); ' +
        '5 wrong TOTP codes after the right password within 15 minutes lock the operator for 15 minutes from every IP. ' +
        'Locked: 423 ACCOUNT_LOCKED with `Retry-After` (seconds, also `details.retryAfter`); while locked even the right credentials are refused.',
      auth: { kind: 'public' },
      rateClass: 'ADMIN_LOGIN',
      audit: { change: 'gateway' },
      body: LoginBody,
      responses: { 200: { description: 'The session (token shown once).', schema: OperatorSessionSchema } },
      errors: ['OPERATOR_AUTH_FAILED', 'ACCOUNT_LOCKED', 'API_KEY_AUTH_NOT_ALLOWED'],
      handler: async ({ body, ctx, audit }) => {
        // No per-e-mail count: it would let anyone who knows the e-mail keep the operator out. The
        // caller is throttled (per IP, by the router) and locked out per (e-mail, IP) by the lockouts.
        const s = await operators.login(body.email, body.password, body.totpCode, ctx.state.clientIp, audit!);
        return { status: 200, body: { token: s.token, expiresAt: s.expiresAt, operator: operatorToApi(s.operator) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/auth/enroll',
      operationId: 'adminEnrollOperator',
      tags: ['Admin'],
      summary: 'Redeem an operator invitation: set the password and receive the TOTP secret (shown once)',
      auth: { kind: 'public' },
      rateClass: 'ADMIN_LOGIN',
      audit: { change: 'gateway' },
      body: EnrollBody,
      responses: {
        200: {
          description: 'The operator (ACTIVE) with its TOTP secret and otpauth URL: add them to an authenticator app, then log in.',
          schema: z
            .object({
              operator: OperatorSchema,
              totpSecret: z.string().meta({ description: 'Base32 TOTP secret (RFC 6238, SHA-1, 6 digits, 30 s). Shown once.' }),
              otpauthUrl: z.string().meta({ description: '`otpauth://` URL (render it as a QR). Shown once.' }),
            })
            .meta({ id: 'EnrolledOperator' }),
        },
      },
      errors: ['OPERATOR_ENROLLMENT_INVALID', 'API_KEY_AUTH_NOT_ALLOWED'],
      handler: async ({ body, audit }) => {
        const e = await operators.enroll(body.enrollmentToken, body.password, audit!);
        return { status: 200, body: { operator: operatorToApi(e.operator), totpSecret: e.totpSecret, otpauthUrl: e.otpauthUrl } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/auth/logout',
      operationId: 'adminLogout',
      tags: ['Admin'],
      summary: "Revoke the operator's current session",
      auth: { kind: 'admin', sharedToken: 'never' },
      responses: { 204: { description: 'Revoked.' } },
      handler: async ({ admin, audit }) => {
        if (admin?.kind !== 'operator') throw new Error('logout without an operator');
        await operators.logout(admin, audit!);
        return { status: 204, body: null };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/auth/me',
      operationId: 'adminCurrentPrincipal',
      tags: ['Admin'],
      summary: 'Who the credential is: an operator, or the shared bootstrap token',
      auth: { kind: 'admin' },
      responses: { 200: { description: 'The principal.', schema: PrincipalSchema } },
      handler: async ({ admin }) => ({
        status: 200,
        body:
          admin?.kind === 'operator'
            ? { kind: 'operator', operatorId: admin.operatorId, email: admin.email }
            : { kind: 'bootstrap-token', operatorId: null, email: null },
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/operators',
      operationId: 'adminInviteOperator',
      tags: ['Admin'],
      summary: 'Invite an operator (the enrolment token goes to the invitee by e-mail); by an operator, once a second operator approves',
      description:
        "By the shared admin token: in production only to bootstrap — while fewer than two operators are live and never again once the first two enrolled (a permanent mark; afterwards 403 ADMIN_TOKEN_NOT_ALLOWED whatever happens to them). By a named operator: 202 with an approval request; a second operator independent of the requester approves it after the notice delay, and the requester is the new operator's inviter.",
      auth: { kind: 'admin', sharedToken: 'bootstrap' },
      body: InviteBody,
      responses: {
        201: { description: 'The operator (INVITED); `enrollmentToken` outside production only.', schema: InvitedOperatorSchema },
        202: PENDING_APPROVAL_RESPONSE,
      },
      errors: ['APPROVAL_REQUEST_NOT_PENDING'],
      handler: async ({ body, admin, audit }) => {
        const out = await changes.inviteOperator(body, admin!, audit!);
        if ('approval' in out) return { status: 202, body: approvalRequestToApi(out.approval) };
        return { status: 201, body: { ...operatorToApi(out.done), ...(out.credentials ?? {}), enrollmentExpiresAt: out.done.enrollmentExpiresAt } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/operators',
      operationId: 'adminListOperators',
      tags: ['Admin'],
      summary: 'List operators (never secrets)',
      auth: { kind: 'admin' },
      responses: { 200: { description: 'Operators, oldest first.', schema: z.object({ items: z.array(OperatorSchema) }) } },
      handler: async () => ({ status: 200, body: { items: (await operators.list()).map(operatorToApi) } }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/admin/operators/{id}',
      operationId: 'adminDisableOperator',
      tags: ['Admin'],
      summary: 'Disable an operator (its sessions are revoked at once; idempotent); by an operator, once a second operator approves',
      description:
        'By a named operator: 202 with an approval request that a second, independent operator approves; the shared development token disables directly.',
      auth: { kind: 'admin' },
      params: z.object({ id: uuidSchema() }),
      paramErrors: { id: 'OPERATOR_NOT_FOUND' },
      responses: { 200: { description: 'The operator, DISABLED.', schema: OperatorSchema }, 202: PENDING_APPROVAL_RESPONSE },
      errors: ['OPERATOR_NOT_FOUND', 'APPROVAL_REQUEST_NOT_PENDING'],
      handler: async ({ params, admin, audit }) => {
        const out = await changes.disableOperator(params.id, admin!, audit!);
        if ('approval' in out) return { status: 202, body: approvalRequestToApi(out.approval) };
        return { status: 200, body: operatorToApi(out.done) };
      },
    }),
  ];
}
