import { AppError } from '@wallet/platform';
import { isMovementStatus, isNonMoneyTransition, type Movement } from '../domain/movements.js';
import type { LedgerDeps } from './deps.js';
import { Problems, isUuid, requireCompany } from './validation.js';

/**
 * Status changes of a send that move no money (multi-signature): AWAITING_APPROVAL → EXECUTING
 * → PENDING, applied only when the movement is in `expectedStatus` (compare-and-set). Repeating
 * a change that already happened answers the movement as it is.
 */
function checkTransition(cmd: { status: string; expectedStatus: string }): void {
  const p = new Problems();
  if (!isMovementStatus(cmd.expectedStatus) || !isMovementStatus(cmd.status) || !isNonMoneyTransition(cmd.expectedStatus, cmd.status)) {
    p.add('status', 'only AWAITING_APPROVAL → EXECUTING and EXECUTING → PENDING can be set (money-moving changes go through Commit/Release)');
  }
  p.throwIfAny();
}

/** The most movements of one SetMovementStatuses call (a batch's items). */
export const MAX_MOVEMENT_IDS = 10_000;

export class SetMovementStatus {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: { movementId: string; status: string; expectedStatus: string }): Promise<Movement> {
    const companyId = requireCompany(caller);
    checkTransition(cmd);
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

/**
 * The same change for many movements of the company (a bulk payout's items at its approval and at
 * dispatch), one statement. Each movement is a compare-and-set: one not in `expectedStatus` (already
 * changed, further on, or another company's) is left alone; the answer counts those changed.
 */
export class SetMovementStatuses {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: { movementIds: string[]; status: string; expectedStatus: string }): Promise<{ changed: number }> {
    const companyId = requireCompany(caller);
    checkTransition(cmd);
    const ids = [...new Set(cmd.movementIds.map((id) => id.toLowerCase()))];
    const p = new Problems();
    if (ids.length > MAX_MOVEMENT_IDS) p.add('movementIds', `at most ${MAX_MOVEMENT_IDS}`);
    const bad = ids.findIndex((id) => !isUuid(id));
    if (bad >= 0) p.add(`movementIds[${bad}]`, 'a transaction id (UUID)');
    p.throwIfAny();
    if (ids.length === 0) return { changed: 0 };
    return { changed: await this.deps.store.transitionMovements(companyId, ids, cmd.expectedStatus as never, cmd.status as never) };
  }
}
