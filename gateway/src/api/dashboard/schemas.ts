import { z } from 'zod';
import { documentAsOneOf, isoDate } from '../../http/schemas.js';
import { DASHBOARD_ROLES, INVITATION_TOKEN } from '../../auth/dashboard-auth.js';
import { uuidSchema, queryInt } from '../../http/validation.js';

export const DashboardUserSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    role: z.enum(['ADMIN', 'OPERATOR', 'VIEWER']),
    createdAt: isoDate(),
    activatedAt: isoDate()
      .nullable()
      .meta({ description: 'null while an invited user has not chosen a password and confirmed a first TOTP code (cannot log in yet).' }),
    disabledAt: isoDate().nullable(),
  })
  .meta({ id: 'DashboardUser' });

/** How dashboard users are provisioned: `direct` (development) or `invitation` (always in production). */
export type DashboardEnrolment = 'direct' | 'invitation';

export const CompanyParams = z.object({ id: uuidSchema() });

export const UserParams = z.object({ id: uuidSchema(), userId: uuidSchema() });

export const Password = () => z.string().min(12).max(128).meta({ description: '12 to 128 characters; stored as an argon2id hash.' });

export const Role = () =>
  z.enum(DASHBOARD_ROLES as unknown as ['ADMIN', 'OPERATOR', 'VIEWER']).meta({ description: 'ADMIN and OPERATOR sign approvals; VIEWER only reads.' });

/**
 * The two ways to create a dashboard user, as the document shows them (the server checks
 * CreateDashboardUserBody, with the same rules): an invitation takes no password; direct enrolment
 * (development, the shared token) takes one. In production, and for a named operator, only the
 * invitation is accepted: the caller's kind and the installation are not in the request.
 */
const CREATE_DASHBOARD_USER_VARIANTS = [
  z
    .strictObject({ email: z.email().max(254), role: Role(), invite: z.literal(true) })
    .meta({ id: 'InviteDashboardUserRequest', description: 'An invitation (always in production and for a named operator): the user chooses the password.' }),
  z.strictObject({ email: z.email().max(254), password: Password(), role: Role(), invite: z.literal(false).optional() }).meta({
    id: 'EnrolDashboardUserRequest',
    description: 'Direct enrolment (DASHBOARD_ENROLMENT=direct, the shared development token): the password chosen here.',
  }),
] as const;

export const CreateDashboardUserBody = documentAsOneOf(
  z
    .strictObject({
      email: z.email().max(254).meta({ description: 'Login of the user; unique across companies.' }),
      password: Password()
        .optional()
        .meta({
          description:
            'Only when the gateway enrols directly (development) and `invite` is not true: 12 to 128 characters, stored as an argon2id hash. ' +
            'Refused (400) for an invitation: the user chooses it.',
        }),
      role: Role(),
      invite: z.boolean().optional().meta({
        description: 'true: answer an invitation instead of credentials, as production always does (DASHBOARD_ENROLMENT=invitation). Ignored in production.',
      }),
    })
    .meta({ id: 'CreateDashboardUserRequest' }),
  CREATE_DASHBOARD_USER_VARIANTS,
);

export const CreatedDashboardUserSchema = DashboardUserSchema.extend({
  totpSecret: z.string().meta({ description: 'Base32 TOTP secret (RFC 6238, SHA-1, 6 digits, 30 s). Shown once.' }),
  otpauthUrl: z.string().meta({ description: '`otpauth://` URL for authenticator apps (render it as a QR). Shown once.' }),
}).meta({ id: 'CreatedDashboardUser', description: 'Direct enrolment (development only): the operator chose the password and receives the TOTP secret.' });

export const InvitedDashboardUserSchema = DashboardUserSchema.extend({
  invitationUrl: z
    .string()
    .optional()
    .meta({
      description:
        'Outside production only (in production it is e-mailed to the user and never in a response). Single-use link to the dashboard page that enrols the user (`…/dashboard#invitation=winv_…`; the token is in the fragment, which browsers never send to a server). ' +
        'Hand it to the user only; it is not stored and cannot be shown again (re-invite instead).',
    }),
  invitationExpiresAt: isoDate().meta({ description: 'After this (72 h by default) the link answers 410 INVITATION_EXPIRED.' }),
}).meta({
  id: 'InvitedDashboardUser',
  description: 'Invitation (always in production): no password and no secret; the user chooses the password and enrols the authenticator.',
});

export const InvitationTokenSchema = z
  .string()
  .regex(INVITATION_TOKEN, 'Debe ser un token de invitación (winv_…).')
  .meta({ description: 'The `winv_…` token of the invitation link (after `#invitation=`).' });

export const InvitationLookupBody = z.strictObject({ token: InvitationTokenSchema }).meta({ id: 'InvitationLookupRequest' });

export const InvitationAcceptBody = z.strictObject({ token: InvitationTokenSchema, password: Password() }).meta({ id: 'InvitationAcceptRequest' });

export const InvitationConfirmBody = z
  .strictObject({
    token: InvitationTokenSchema,
    totpCode: z
      .string()
      .regex(/^\d{6}$/, 'Debe ser un código de 6 dígitos.')
      .meta({ description: 'The current code of the authenticator enrolled with the secret from the acceptance.' }),
  })
  .meta({ id: 'InvitationConfirmRequest' });

export const InvitationSchema = z
  .object({
    email: z.string(),
    role: z.enum(['ADMIN', 'OPERATOR', 'VIEWER']),
    companyName: z.string(),
    status: z
      .enum(['PENDING', 'ACCEPTED'])
      .meta({ description: 'PENDING: choose a password (accept). ACCEPTED: the password is set; confirm a TOTP code to activate.' }),
    expiresAt: isoDate(),
  })
  .meta({ id: 'Invitation' });

export const InvitationEnrolmentSchema = z
  .object({
    email: z.string(),
    totpSecret: z.string().meta({ description: 'Base32 TOTP secret (RFC 6238, SHA-1, 6 digits, 30 s). Shown once: enrol it in an authenticator now.' }),
    otpauthUrl: z.string().meta({ description: '`otpauth://` URL of the same secret (render it as a QR). Shown once.' }),
    expiresAt: isoDate().meta({ description: 'Confirm a code before this, or the invitation expires unused.' }),
  })
  .meta({ id: 'InvitationEnrolment' });

export const LoginBody = z
  .strictObject({
    email: z.string().min(1).max(254),
    password: z.string().min(1).max(1024),
  })
  .meta({ id: 'LoginRequest' });

export const ApprovalParams = z.object({ approvalId: z.string().regex(/^appr_[0-9a-f]{32}$/) });

export const ApprovalQuery = z.strictObject({
  status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED']).default('PENDING'),
  limit: queryInt(1, 100, 50),
  cursor: z.string().max(200).optional(),
});
