import { centsToNumber } from '@wallet/platform';
import { type CreditRequest } from '../../../app/credit-request-admin.js';

export function creditRequestToApi(r: CreditRequest) {
  return {
    id: r.id,
    companyId: r.companyId,
    rail: r.rail,
    amountCents: centsToNumber(r.amountCents),
    reference: r.reference,
    status: r.status,
    requestedBy: r.requestedBy,
    requestedAt: r.requestedAt,
    decidedBy: r.decidedBy,
    decidedAt: r.decidedAt,
    reason: r.reason,
    movementId: r.movementId,
    errorCode: r.errorCode,
    completedAt: r.completedAt,
  };
}
