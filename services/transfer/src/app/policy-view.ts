import type { transferV1 } from '@wallet/proto';
import type { PolicyDecision } from '../domain/approval-policy.js';

/** A policy decision on the wire (the Transfer message, quotes, batch reports and transfer events). */
export function policyDecisionToProto(d: PolicyDecision): transferV1.PolicyDecision {
  return {
    policyVersion: d.policyVersion,
    ...(d.ruleId ? { ruleId: d.ruleId } : {}),
    action: d.action,
    approvals: d.approvals,
    roles: d.roles,
    ...(d.code ? { code: d.code } : {}),
    ...(d.message ? { message: d.message } : {}),
  };
}
