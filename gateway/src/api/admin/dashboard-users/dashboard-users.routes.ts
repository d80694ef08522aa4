import { z } from 'zod';
import { invalidRequest } from '@wallet/platform';
import type { DashboardAuth } from '../../../auth/dashboard-auth.js';
import type { AdminChanges } from '../../../app/admin-changes.js';
import {
  DashboardUserSchema,
  DashboardEnrolment,
  CompanyParams,
  UserParams,
  CreateDashboardUserBody,
  CreatedDashboardUserSchema,
  InvitedDashboardUserSchema,
} from '../../dashboard/schemas.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { approvalRequestToApi } from '../approval-requests/presenters.js';
import { PENDING_APPROVAL_RESPONSE } from '../approval-requests/schemas.js';
import { userToApi } from '../../dashboard/presenters.js';

/**
 * Operator provisioning of dashboard users (CONTRACT §4, §10). With `invitation` enrolment (forced
 * in production) the operator never holds a user's password or TOTP secret, so no operator can
 * create the signers of a quorum and sign as them.
 */
export function adminDashboardUserRoutes(auth: DashboardAuth, changes: AdminChanges, opts: { enrolment: DashboardEnrolment }): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/admin/companies/{id}/users',
      operationId: 'adminCreateDashboardUser',
      tags: ['Admin'],
      summary:
        'Create a dashboard user: an invitation e-mailed to the user (by an operator, once a second operator approves), or credentials shown once (development token)',
      description:
        "A named operator's request answers 202 with an approval request: the user is invited only once a second, independent operator approves it (after the notice delay), and the company is told. The invitation link goes by e-mail to the user (single use, 72 h); the user chooses the password and enrols the authenticator through " +
        '`/auth/invitations/*`, and is not active until a first TOTP code is confirmed; no operator holds either credential, and in production no response shows the link. ' +
        'With the shared development token: with DASHBOARD_ENROLMENT=invitation or `invite: true`, 201 InvitedDashboardUser with the link; otherwise 201 CreatedDashboardUser ' +
        'with the password the caller chose and the TOTP secret. An operator may not send `password` (400).',
      auth: { kind: 'admin' },
      params: CompanyParams,
      paramErrors: { id: 'COMPANY_NOT_FOUND' },
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
      method: 'POST',
      path: '/admin/companies/{id}/users/{userId}/invitations',
      operationId: 'adminReinviteDashboardUser',
      tags: ['Admin'],
      summary: 'A new invitation for a user who has not activated yet (the earlier ones are revoked)',
      description:
        'For a lost or expired link. Earlier invitations of the user stop working (410 INVITATION_EXPIRED) and a password ' +
        'chosen with them is cleared. The new link goes by e-mail to the user (in the answer outside production only). An active or disabled user → 409 USER_ALREADY_ACTIVE.',
      auth: { kind: 'admin' },
      params: UserParams,
      paramErrors: { id: 'COMPANY_NOT_FOUND', userId: 'USER_NOT_FOUND' },
      responses: { 201: { description: 'The user with the new invitation.', schema: InvitedDashboardUserSchema } },
      errors: ['USER_NOT_FOUND', 'USER_ALREADY_ACTIVE'],
      handler: async ({ params, audit }) => {
        const out = await changes.reinviteDashboardUser(params.id, params.userId, audit!);
        return { status: 201, body: { ...userToApi(out.done), ...(out.credentials ?? {}), invitationExpiresAt: out.done.invitationExpiresAt } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/companies/{id}/users',
      operationId: 'adminListDashboardUsers',
      tags: ['Admin'],
      summary: "List a company's dashboard users (never secrets)",
      auth: { kind: 'admin' },
      params: CompanyParams,
      paramErrors: { id: 'COMPANY_NOT_FOUND' },
      responses: { 200: { description: 'Users, oldest first.', schema: z.object({ items: z.array(DashboardUserSchema) }) } },
      handler: async ({ params }) => ({
        status: 200,
        body: { items: (await auth.listUsers(params.id)).map(userToApi) },
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/admin/companies/{id}/users/{userId}',
      operationId: 'adminDisableDashboardUser',
      tags: ['Admin'],
      summary: 'Disable a dashboard user (its sessions are revoked at once; idempotent)',
      auth: { kind: 'admin' },
      params: UserParams,
      paramErrors: { id: 'COMPANY_NOT_FOUND', userId: 'USER_NOT_FOUND' },
      responses: { 200: { description: 'The user with `disabledAt`.', schema: DashboardUserSchema } },
      errors: ['USER_NOT_FOUND'],
      handler: async ({ params }) => {
        return { status: 200, body: userToApi(await auth.disableUser(params.id, params.userId)) };
      },
    }),
  ];
}
