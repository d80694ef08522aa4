import type { transferV1 } from '@wallet/proto';
import type { PolicyState } from '../app/approval-policies.js';
import type { PolicyVersionRecord } from '../app/policy-ports.js';

/** A precheck's answer: nothing was written. */
export const EMPTY_VERSION: transferV1.ApprovalPolicyVersion = {
  id: '',
  version: 0,
  status: 'PROPOSED',
  documentJson: '',
  requiredSignatures: 0,
  proposedBy: '',
  signatures: [],
  createdAt: new Date(0),
};

export function policyVersionToProto(p: PolicyVersionRecord): transferV1.ApprovalPolicyVersion {
  return {
    id: p.id,
    version: p.version,
    status: p.status,
    documentJson: JSON.stringify(p.document),
    requiredSignatures: p.requiredSignatures,
    proposedBy: p.proposedByEmail,
    signatures: p.signatures.map((s) => ({ userId: s.userId, email: s.email, role: s.role, signedAt: s.signedAt })),
    ...(p.note ? { note: p.note } : {}),
    createdAt: p.createdAt,
    ...(p.decidedAt ? { decidedAt: p.decidedAt } : {}),
    ...(p.decidedBy ? { decidedBy: p.decidedBy } : {}),
    ...(p.effectiveAt ? { effectiveAt: p.effectiveAt } : {}),
  };
}

export function policyStateToProto(s: PolicyState): transferV1.ApprovalPolicyState {
  return {
    ...(s.inForce ? { inForce: policyVersionToProto(s.inForce) } : {}),
    scheduled: s.scheduled.map(policyVersionToProto),
    ...(s.proposed ? { proposed: policyVersionToProto(s.proposed) } : {}),
    changeQuorum: s.changeQuorum,
    changeDelaySeconds: s.changeDelaySeconds,
  };
}
