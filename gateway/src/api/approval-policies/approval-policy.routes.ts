import type { TransferClient } from '../../clients/transfer-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { policyStateToApi, policyVersionPageToApi } from './presenters.js';
import { ApprovalPolicyStateSchema, ApprovalPolicyVersionPageSchema, POLICY_TAGS, PolicyVersionsQuery } from './schemas.js';

/** The company's approval policy read with an API key (docs/policies.md); it is changed only from the dashboard. */
export function approvalPolicyRoutes(transfers: TransferClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/approval-policy',
      operationId: 'getApprovalPolicy',
      tags: POLICY_TAGS,
      summary: 'The approval policy: the version in force, those scheduled and the proposal waiting for signatures',
      description:
        'Every send is decided by the version in force when it is received (`policyDecision` on the send answer). ' +
        'A change is proposed and signed by dashboard ADMINs (`changeQuorum` signatures, TOTP) and decides from `effectiveAt`, ' +
        '`changeDelaySeconds` after the quorum; the webhook `company.policy_changed` tells when a change reaches its quorum.',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      responses: { 200: { description: 'The policy as it stands.', schema: ApprovalPolicyStateSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ call }) => ({ status: 200, body: policyStateToApi(await transfers.getApprovalPolicy({}, call)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/approval-policy/versions',
      operationId: 'listApprovalPolicyVersions',
      tags: POLICY_TAGS,
      summary: 'Every version of the approval policy (proposed, approved, cancelled), newest first',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: PolicyVersionsQuery,
      responses: { 200: { description: 'A page of versions; `nextBeforeVersion` pages on.', schema: ApprovalPolicyVersionPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => ({
        status: 200,
        body: policyVersionPageToApi(
          await transfers.listApprovalPolicyVersions({ limit: query.limit, ...(query.beforeVersion ? { beforeVersion: query.beforeVersion } : {}) }, call),
        ),
      }),
    }),
  ];
}
