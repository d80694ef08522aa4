import { AppError, EXCEPTION_ID, listExceptionsPage } from '@wallet/platform';
import { EXCEPTION_ACTIONS, type ExceptionKind } from '../domain/transfer-machine.js';
import type { TransferDeps } from './deps.js';
import type { MoneyException } from './ports.js';
import { Problems } from './validation.js';

export interface ExceptionView extends MoneyException {
  /** The resolutions this kind admits. */
  actions: readonly string[];
}

const view = (e: MoneyException): ExceptionView => ({ ...e, actions: EXCEPTION_ACTIONS[e.kind as ExceptionKind] ?? ['dismiss'] });

/** GET /admin/exceptions (CONTRACT §10), the transfers' part: newest first, across companies. */
export class ListMoneyExceptions {
  constructor(private readonly deps: TransferDeps) {}

  execute(q: { status?: string | undefined; kind?: string | undefined; limit?: number; cursor?: string | undefined }): Promise<{ items: ExceptionView[]; nextCursor: string | null }> {
    return listExceptionsPage((x) => this.deps.store.listExceptions(x), Object.keys(EXCEPTION_ACTIONS), view, q);
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
    if (!EXCEPTION_ID.test(input.id)) throw new AppError('EXCEPTION_NOT_FOUND');
    const note = input.note?.trim() ?? '';
    const p = new Problems();
    if (!note || [...note].length > 500) p.add('note', 'required, at most 500 characters');
    if (!input.resolvedBy || input.resolvedBy.length > 200) p.add('resolvedBy', 'required');
    const current = await deps.store.getException(input.id);
    if (!current) throw new AppError('EXCEPTION_NOT_FOUND');
    const allowed = EXCEPTION_ACTIONS[current.kind as ExceptionKind] ?? ['dismiss'];
    if (!allowed.includes(input.action as never)) p.add('action', `one of ${allowed.join(', ')} for ${current.kind}`);
    p.throwIfAny();

    const won = await deps.store.beginResolution(input.id, { action: input.action, note, resolvedBy: input.resolvedBy });
    if (!won) throw new AppError('EXCEPTION_NOT_OPEN');
    if (input.action === 'write_off') {
      const t = await deps.store.get(won.resourceId);
      if (!t) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'exception without its transfer' });
      await deps.ledger.writeOffPayout(t.companyId, `exception:${won.id}:write_off`, t.rail, t.amount, `${won.id}: ${note}`);
    }
    const done = (await deps.store.finishResolution(input.id)) ?? (await deps.store.getException(input.id))!;
    deps.log.warn({ exceptionId: done.id, kind: done.kind, action: input.action, resolvedBy: input.resolvedBy, transferId: done.resourceId }, 'money exception resolved');
    return view(done);
  }
}
