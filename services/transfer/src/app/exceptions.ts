import {
  AppError,
  externalMovementRef,
  linkActiveSpanToSagaOf,
  listExceptionsPage,
  parseExternalMovement,
  resolveMoneyException,
  type ExceptionView,
  type MoneyException,
  type ExceptionListRequest,
} from '@wallet/platform';
import { EXCEPTION_ACTIONS, type ExceptionKind } from '../domain/transfer-machine.js';
import type { TransferDeps } from './deps.js';

const actionsOf = (kind: string): readonly string[] => EXCEPTION_ACTIONS[kind as ExceptionKind] ?? ['dismiss'];
const view = (e: MoneyException): ExceptionView => ({
  ...e,
  actions: actionsOf(e.kind),
  movement: externalMovementRef(e.rail === 'ACH' ? 'ach' : 'breb', { ourId: e.resourceId }),
});
/** The transfer a movement filter names (docs/reconciliation.md), or none of ours. */
const transfersOf = (movement: string): string[] => {
  const m = parseExternalMovement(movement);
  return m && (m.rail === 'breb' || m.rail === 'ach') && m.ourId ? [m.ourId] : [];
};

/** GET /admin/exceptions (CONTRACT §10), the transfers' part: newest first, across companies. */
export class ListMoneyExceptions {
  constructor(private readonly deps: TransferDeps) {}

  async execute(q: ExceptionListRequest): Promise<{ items: ExceptionView[]; nextCursor: string | null }> {
    const { movement, ...rest } = q;
    const page = await listExceptionsPage((x) => this.deps.store.exceptions.list(x), Object.keys(EXCEPTION_ACTIONS), view, {
      ...rest,
      ...(movement ? { resourceIds: transfersOf(movement) } : {}),
    });
    // One transfer's few exceptions: the ones of that exact movement (its rail).
    return movement ? { ...page, items: page.items.filter((e) => e.movement === movement) } : page;
  }
}

/**
 * POST /admin/exceptions/{id}/resolve: the operator's decision. The exception is first won for the
 * action (OPEN → RESOLVING, a compare-and-set: two operators cannot resolve it two ways), then the
 * correcting entry is posted (idempotent on `exception:<id>:<action>`), then RESOLVED. A crash in
 * between is finished by calling it again with the same action. Nothing is deleted.
 */
export class ResolveMoneyException {
  constructor(private readonly deps: TransferDeps) {}

  async execute(input: { id: string; action: string; note: string; resolvedBy: string }): Promise<ExceptionView> {
    const { deps } = this;
    const done = await resolveMoneyException(deps.store.exceptions, input, actionsOf, async (won, note) => {
      // The operator's resolution, found from the payment's trace (and it from this one).
      await linkActiveSpanToSagaOf(async () => (await deps.store.get(won.resourceId))?.traceparent, {
        'wallet.transfer_id': won.resourceId,
        'wallet.exception_id': won.id,
      });
      if (won.action !== 'write_off') return;
      const t = await deps.store.get(won.resourceId);
      if (!t) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'exception without its transfer' });
      const movement = externalMovementRef(t.rail === 'BREB' ? 'breb' : 'ach', { ourId: t.id });
      await deps.ledger.writeOffPayout(t.companyId, `exception:${won.id}:write_off`, t.rail, t.amount, `${won.id}: ${note}`, { movement, caseId: won.id });
    });
    deps.log.warn(
      { exceptionId: done.id, kind: done.kind, action: input.action, resolvedBy: input.resolvedBy, transferId: done.resourceId },
      'money exception resolved',
    );
    return done;
  }
}
