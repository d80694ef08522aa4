import { type ApprovalRequest } from '../../../app/approval-requests.js';

export function approvalRequestToApi(r: ApprovalRequest) {
  return {
    id: r.id,
    action: r.action,
    companyId: r.companyId,
    targetId: r.targetId,
    payload: r.payload,
    status: r.status,
    requestedBy: r.requestedBy,
    requestedAt: r.requestedAt,
    notBefore: r.notBefore,
    expiresAt: r.expiresAt,
    decidedBy: r.decidedBy,
    decidedAt: r.decidedAt,
    reason: r.reason,
    result: r.result ?? null,
    errorCode: r.errorCode,
    completedAt: r.completedAt,
  };
}
