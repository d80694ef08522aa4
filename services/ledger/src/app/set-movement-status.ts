import { AppError } from '@wallet/platform';
import { isMovementStatus, isNonMoneyTransition, type Movement } from '../domain/movements.js';
import type { LedgerDeps } from './deps.js';
import { Problems, isUuid, requireCompany } from './validation.js';

/**
 * Status changes of a send that move no money (multi-signature): AWAITING_APPROVAL → EXECUTING
 * → PENDING, applied only when the movement is in `expectedStatus` (compare-and-set). Repeating
 * a change that already happened answers the movement as it is.
 */
export class SetMovementStatus {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: { movementId: string; status: string; expectedStatus: string }): Promise<Movement> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    if (!isMovementStatus(cmd.expectedStatus) || !isMovementStatus(cmd.status) || !isNonMoneyTransition(cmd.expectedStatus, cmd.status)) {
      p.add('status', 'only AWAITING_APPROVAL → EXECUTING and EXECUTING → PENDING can be set (money-moving changes go through Commit/Release)');
    }
    p.throwIfAny();
    const id = cmd.movementId.toLowerCase();
    if (!isUuid(id)) throw new AppError('TRANSACTION_NOT_FOUND');
    const store = this.deps.store;
    const changed = await store.transitionMovement(companyId, id, cmd.expectedStatus as never, cmd.status as never);
    if (changed) return changed;
    const current = await store.getMovement(companyId, id);
    if (!current) throw new AppError('TRANSACTION_NOT_FOUND');
    if (current.type === 'TRANSFER_OUT' && current.status === cmd.status) return current;
    throw new AppError('INVALID_STATE_TRANSITION', `La transferencia está en estado ${current.status}, no ${cmd.expectedStatus}.`);
  }
}
