import { formatInstant } from '@wallet/platform';
import type { transferV1 } from '@wallet/proto';

/** One version of the approval policy as the API answers it: the document as a JSON object. */
export function policyVersionToApi(v: transferV1.ApprovalPolicyVersion) {
  return {
    id: v.id,
    version: v.version,
    status: v.status,
    policy: JSON.parse(v.documentJson) as unknown,
    requiredSignatures: v.requiredSignatures,
    proposedBy: v.proposedBy,
    signatures: v.signatures.map((s) => ({ email: s.email, role: s.role, signedAt: formatInstant(s.signedAt ?? new Date(0)) })),
    note: v.note ?? null,
    createdAt: formatInstant(v.createdAt ?? new Date(0)),
    decidedAt: v.decidedAt ? formatInstant(v.decidedAt) : null,
    decidedBy: v.decidedBy ?? null,
    effectiveAt: v.effectiveAt ? formatInstant(v.effectiveAt) : null,
  };
}

export function policyStateToApi(s: transferV1.ApprovalPolicyState) {
  return {
    inForce: s.inForce ? policyVersionToApi(s.inForce) : null,
    scheduled: s.scheduled.map(policyVersionToApi),
    proposed: s.proposed ? policyVersionToApi(s.proposed) : null,
    changeQuorum: s.changeQuorum,
    changeDelaySeconds: s.changeDelaySeconds,
  };
}

export function policyVersionPageToApi(r: transferV1.ListApprovalPolicyVersionsResponse) {
  return { items: r.items.map(policyVersionToApi), nextBeforeVersion: r.nextBeforeVersion ?? null };
}
