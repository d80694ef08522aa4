import { AppError } from '@wallet/platform';
import { OperatorStore } from '../persistence/operator.store.js';
import type { Queryable } from '../persistence/sql.js';

const operators = new OperatorStore();

/**
 * Whether a second operator is independent of the one who asked (docs/security.md, "The insider", I2): not the same
 * operator, and not sharing an inviter chain with them. Each operator's chain is themselves and
 * every operator above them by `created_by` (who asked for their invitation); the two chains must
 * not meet. So an operator cannot approve what the one they invited (or who invited them) asked,
 * and two operators one operator invited cannot approve each other — that operator could have
 * held both enrolment tokens. The bootstrap token (created_by null) is no one's inviter: the first
 * two operators are independent of each other.
 *
 * SAME_OPERATOR otherwise; `details.reason` says which rule (SAME_PERSON | INVITATION_CHAIN).
 */
export async function assertIndependent(q: Queryable, requesterId: string, approverId: string): Promise<void> {
  if (requesterId === approverId) throw new AppError('SAME_OPERATOR', undefined, { reason: 'SAME_PERSON' });
  if (await operators.inviterChainsMeet(q, requesterId, approverId)) {
    throw new AppError(
      'SAME_OPERATOR',
      'El operador que aprueba no puede compartir una cadena de invitaciones con quien hizo la solicitud (haberlo invitado, haber sido invitado por él o tener el mismo invitador).',
      { reason: 'INVITATION_CHAIN' },
    );
  }
}
