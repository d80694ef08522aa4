import { AppError } from '@wallet/platform';
import type { DashboardAuth, SessionPrincipal } from '../../auth/dashboard-auth.js';
import type { TransferClient } from '../../clients/transfer-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { policyStateToApi, policyVersionToApi } from '../approval-policies/presenters.js';
import {
  POLICY_TAGS,
  ApprovalPolicyStateSchema,
  ApprovalPolicyVersionSchema,
  PolicyTotpBody,
  PolicyVersionParams,
  ProposePolicyBody,
} from '../approval-policies/schemas.js';
import { LOCKOUT_NOTE, signWithTotp } from './signing.js';

const TAGS = ['Dashboard', ...POLICY_TAGS];
const paramErrors = { id: 'POLICY_VERSION_NOT_FOUND' } as const;
const ADMINS_ONLY = 'ADMIN users only (another role → 403 `INSUFFICIENT_ROLE`, before the TOTP code is spent). ';

/** Only ADMINs change the policy: refused before the lockout check and the TOTP code (the service checks again). */
function requireAdmin(s: SessionPrincipal): void {
  if (s.role !== 'ADMIN') throw new AppError('INSUFFICIENT_ROLE');
}

/**
 * The approval policy in the dashboard (docs/policies.md): read by every user; proposed, signed and
 * cancelled by ADMINs with a TOTP code, the service's own checks first (a proposal already pending,
 * a signer who already signed: no code spent), as the approvals' signatures (signing.ts).
 */
export function dashboardApprovalPolicyRoutes(auth: DashboardAuth, transfers: TransferClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/dashboard/approval-policy',
      operationId: 'dashboardGetApprovalPolicy',
      tags: TAGS,
      summary: "The company's approval policy: in force, scheduled and proposed (any role)",
      auth: { kind: 'session' },
      rateClass: 'READS',
      responses: { 200: { description: 'The policy as it stands.', schema: ApprovalPolicyStateSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ call }) => ({ status: 200, body: policyStateToApi(await transfers.getApprovalPolicy({}, call)) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/dashboard/approval-policy',
      operationId: 'proposeApprovalPolicy',
      tags: TAGS,
      summary: "Propose a new approval policy; it counts as the proposer's signature",
      description:
        ADMINS_ONLY +
        'The new version is PROPOSED until `changeQuorum` ADMINs (the proposer included) have signed it; then it decides the sends from ' +
        '`effectiveAt` (the change delay after the quorum). One proposal at a time: another one pending → 409 `POLICY_CHANGE_PENDING` ' +
        '(checked, like the document, before the code). ' +
        LOCKOUT_NOTE,
      auth: { kind: 'session' },
      rateClass: 'FINANCIAL',
      body: ProposePolicyBody,
      responses: { 201: { description: 'The proposal, PROPOSED with the proposer’s signature.', schema: ApprovalPolicyVersionSchema } },
      errors: ['INVALID_TOTP_CODE', 'ACCOUNT_LOCKED', 'INSUFFICIENT_ROLE', 'POLICY_CHANGE_PENDING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ body, session, call }) => {
        requireAdmin(session!);
        const req = { documentJson: JSON.stringify(body.policy), ...(body.note ? { note: body.note } : {}) };
        const v = await signWithTotp(auth, session!, body.totpCode, {
          precheck: () => transfers.proposeApprovalPolicy({ ...req, precheck: true }, call),
          sign: () => transfers.proposeApprovalPolicy({ ...req, precheck: false }, call),
        });
        return { status: 201, body: policyVersionToApi(v) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/dashboard/approval-policy/{id}/sign',
      operationId: 'signApprovalPolicy',
      tags: TAGS,
      summary: 'Sign a proposed approval policy; the signature that reaches the quorum approves it',
      description:
        ADMINS_ONLY +
        'Each ADMIN signs once (again → 409 `ALREADY_SIGNED`, before the code). At the quorum the version is APPROVED and decides ' +
        'the sends from `effectiveAt`; the webhook `company.policy_changed` is sent. Not PROPOSED any more → 409 ' +
        "`POLICY_CHANGE_NOT_PENDING`; another company's or unknown id → 404 `POLICY_VERSION_NOT_FOUND`. " +
        LOCKOUT_NOTE,
      auth: { kind: 'session' },
      rateClass: 'FINANCIAL',
      params: PolicyVersionParams,
      paramErrors,
      body: PolicyTotpBody,
      responses: { 200: { description: 'The version after the signature.', schema: ApprovalPolicyVersionSchema } },
      errors: [
        'INVALID_TOTP_CODE',
        'ACCOUNT_LOCKED',
        'INSUFFICIENT_ROLE',
        'ALREADY_SIGNED',
        'POLICY_CHANGE_NOT_PENDING',
        'POLICY_VERSION_NOT_FOUND',
        'SERVICE_UNAVAILABLE',
      ],
      handler: async ({ params, body, session, call }) => {
        requireAdmin(session!);
        const v = await signWithTotp(auth, session!, body.totpCode, {
          precheck: () => transfers.signApprovalPolicy({ id: params.id, precheck: true }, call),
          sign: () => transfers.signApprovalPolicy({ id: params.id, precheck: false }, call),
        });
        return { status: 200, body: policyVersionToApi(v) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/dashboard/approval-policy/{id}/cancel',
      operationId: 'cancelApprovalPolicy',
      tags: TAGS,
      summary: 'Withdraw a proposed approval policy (any ADMIN)',
      description:
        ADMINS_ONLY +
        "The policy in force stays. Not PROPOSED any more → 409 `POLICY_CHANGE_NOT_PENDING` (before the code); another company's or " +
        'unknown id → 404 `POLICY_VERSION_NOT_FOUND`. ' +
        LOCKOUT_NOTE,
      auth: { kind: 'session' },
      rateClass: 'FINANCIAL',
      params: PolicyVersionParams,
      paramErrors,
      body: PolicyTotpBody,
      responses: { 200: { description: 'The version, CANCELLED.', schema: ApprovalPolicyVersionSchema } },
      errors: ['INVALID_TOTP_CODE', 'ACCOUNT_LOCKED', 'INSUFFICIENT_ROLE', 'POLICY_CHANGE_NOT_PENDING', 'POLICY_VERSION_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, session, call }) => {
        requireAdmin(session!);
        const v = await signWithTotp(auth, session!, body.totpCode, {
          precheck: () => transfers.cancelApprovalPolicy({ id: params.id, precheck: true }, call),
          sign: () => transfers.cancelApprovalPolicy({ id: params.id, precheck: false }, call),
        });
        return { status: 200, body: policyVersionToApi(v) };
      },
    }),
  ];
}
