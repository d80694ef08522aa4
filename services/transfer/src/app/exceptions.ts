import { AppError } from '@wallet/platform';
import { EXCEPTION_ACTIONS, type ExceptionKind } from '../domain/transfer-machine.js';
import type { TransferDeps } from './deps.js';
import type { MoneyException } from './ports.js';
import { Problems } from './validation.js';

const EXCEPTION_ID = /^exc_[0-9a-f]{32}$/;
const STATUSES = ['OPEN', 'RESOLVING', 'RESOLVED'];

export interface ExceptionView extends MoneyException {
  /** The resolutions this kind admits. */
  actions: readonly string[];
}

const view = (e: MoneyException): ExceptionView => ({ ...e, actions: EXCEPTION_ACTIONS[e.kind as ExceptionKind] ?? ['dismiss'] });

function decodeCursor(c: string): { openedAt: string; id: string } {
  const [at, id] = Buffer.from(c, 'base64url').toString('utf8').split('|');
  if (!id || !EXCEPTION_ID.test(id) || !at || Number.isNaN(Date.parse(at))) {
    const p = new Problems();
    p.add('cursor', 'not a cursor returned by this listing');
    p.throwIfAny();
  }
  return { openedAt: at!, id: id! };
}

/** GET /admin/exceptions (CONTRACT §10): money exceptions, newest first, across companies. */
export class ListMoneyExceptions {
  constructor(private readonly deps: TransferDeps) {}

  async execute(q: { status?: string | undefined; kind?: string | undefined; limit?: number; cursor?: string | undefined }): Promise<{ items: ExceptionView[]; nextCursor: string | null }> {
    const p = new Problems();
    const status = q.status ? q.status.toUpperCase() : undefined;
    if (status && !STATUSES.includes(status)) p.add('status', `one of ${STATUSES.join(', ')}`);
    if (q.kind && !(q.kind in EXCEPTION_ACTIONS)) p.add('kind', `one of ${Object.keys(EXCEPTION_ACTIONS).join(', ')}`);
    const limit = q.limit && q.limit > 0 ? q.limit : 50;
    if (limit > 100) p.add('limit', 'at most 100');
    p.throwIfAny();
    const rows = await this.deps.store.listExceptions({
      ...(status ? { status } : {}), ...(q.kind ? { kind: q.kind } : {}), limit: limit + 1,
      ...(q.cursor ? { before: decodeCursor(q.cursor) } : {}),
    });
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items: items.map(({ cursor: _c, ...e }) => view(e)),
      nextCursor: rows.length > limit && last ? Buffer.from(last.cursor).toString('base64url') : null,
    };
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
