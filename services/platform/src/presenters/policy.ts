import type { transferV1 } from '@wallet/proto';

/**
 * What a company's approval policy decided for a payment, as the API shows it (docs/policies.md): the
 * ONE builder of the transfer answers' and quotes' `policyDecision` (gateway) and of the transfer
 * webhooks' (webhook service). `ruleId` null: no rule matched, the policy's `otherwise` decided;
 * version 0: no policy was in force, the multi-signature threshold decided.
 */
export function policyDecisionView(d: transferV1.PolicyDecision | undefined) {
  if (!d) return null;
  return {
    policyVersion: d.policyVersion,
    ruleId: d.ruleId ?? null,
    action: d.action as 'ALLOW' | 'REQUIRE_APPROVALS' | 'REFUSE',
    approvals: d.approvals,
    roles: d.roles,
    ...(d.code ? { code: d.code } : {}),
    ...(d.message ? { message: d.message } : {}),
  };
}
