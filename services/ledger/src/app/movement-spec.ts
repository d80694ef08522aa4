import type { MovementDetails } from '../domain/movements.js';
import type { FeeBreakdown } from '../domain/fees.js';
import { feeBreakdownProblems } from '../domain/fees.js';
import { MAX_REFERENCE, Problems, checkDetails, checkText, isUuid } from './validation.js';

/** The movement a send or an inflow creates, as its owning service describes it. */
export interface MovementSpecCommand {
  id?: string;
  /** Requested status name, e.g. 'PENDING'; '' or 'UNSPECIFIED' when not given. */
  status: string;
  reference?: string;
  apiKeyId?: string;
  details?: MovementDetails;
}

export function checkMovementSpec(p: Problems, spec: MovementSpecCommand | undefined, allowed: readonly string[]): void {
  if (!spec) return;
  if (spec.id !== undefined && spec.id !== '' && !isUuid(spec.id)) p.add('movement.id', 'must be a UUID');
  if (!isUnspecified(spec.status) && !allowed.includes(spec.status)) p.add('movement.status', `must be one of ${allowed.join(', ')}`);
  checkText(p, 'movement.reference', spec.reference, MAX_REFERENCE);
  checkText(p, 'movement.apiKeyId', spec.apiKeyId, 100);
  checkDetails(p, 'movement.details', spec.details);
}

export function isUnspecified(status: string | undefined): boolean {
  return status === undefined || status === '' || status === 'UNSPECIFIED';
}

export function checkFee(p: Problems, path: string, fee: FeeBreakdown | undefined, required: boolean): void {
  if (!fee) {
    if (required) p.add(path, 'is required');
    return;
  }
  for (const problem of feeBreakdownProblems(fee)) p.add(`${path}.${problem.field}`, problem.message);
}
