import {
  AppError,
  externalMovementRef,
  linkActiveSpanToSagaOf,
  listExceptionsPage,
  parseExternalMovement,
  resolveMoneyException,
  resolveReturnException,
  RETURN_EXCEPTION_KIND,
  type ExceptionView,
  type MoneyException,
  type ReturnSaga,
  type ExceptionListRequest,
} from '@wallet/platform';
import { EXCEPTION_ACTIONS, EXCEPTION_KINDS, MONEY_STATES, type ExceptionKind, type PseState } from '../domain/deposit-machine.js';
import type { DepositRecord } from '../domain/deposit.js';
import type { DepositDeps } from './deps.js';
import type { DepositSaga } from './deposit-saga.js';
import type { DepositPatch } from './ports.js';

const actionsOf = (kind: string): readonly string[] => EXCEPTION_ACTIONS[kind as ExceptionKind] ?? ['dismiss'];
/** The leg a kind is about: a reversal's exceptions concern the reversal leg, the others the payment. */
const REVERSAL_KINDS: ReadonlySet<string> = new Set(['REVERSED_WITHOUT_PAYMENT', 'REVERSAL_REFUSED']);
const view = (e: MoneyException): ExceptionView => ({
  ...e,
  actions: actionsOf(e.kind),
  // A refund's exception is about the refund (its id is the resource), not a movement of the PSE deposit.
  ...(e.kind === RETURN_EXCEPTION_KIND
    ? {}
    : { movement: externalMovementRef('pse', { ourId: e.resourceId }, REVERSAL_KINDS.has(e.kind) ? 'reversal' : 'payment') }),
});
/** The deposit a movement filter names (`pse:our:<deposit id>…`), or none of ours. */
const depositsOf = (movement: string): string[] => {
  const m = parseExternalMovement(movement);
  return m?.rail === 'pse' && m.ourId ? [m.ourId] : [];
};

/** GET /admin/exceptions (CONTRACT §10), the PSE deposits' part: newest first (opened_at desc, id desc), across companies. */
export class ListDepositExceptions {
  constructor(private readonly deps: DepositDeps) {}

  async execute(q: ExceptionListRequest): Promise<{ items: ExceptionView[]; nextCursor: string | null }> {
    const { movement, ...rest } = q;
    const page = await listExceptionsPage((x) => this.deps.store.exceptions.list(x), EXCEPTION_KINDS, view, {
      ...rest,
      ...(movement ? { resourceIds: depositsOf(movement) } : {}),
    });
    // One deposit's few exceptions: the ones of that exact leg.
    return movement ? { ...page, items: page.items.filter((e) => e.movement === movement) } : page;
  }
}

/** What the provider said about the payment, from the exception, for the deposit an operator credits. */
function paymentOf(theirs: Record<string, unknown>): DepositPatch {
  const s = (k: string) => (typeof theirs[k] === 'string' && (theirs[k] as string).length > 0 ? (theirs[k] as string) : null);
  const paidAt = s('paidAt');
  return {
    ...(s('providerTransferId') ? { providerTransferId: s('providerTransferId') } : {}),
    ...(paidAt && !Number.isNaN(Date.parse(paidAt)) ? { providerConfirmedAt: new Date(paidAt) } : {}),
    ...(s('payerBank') ? { payerBank: s('payerBank') } : {}),
  };
}

/**
 * POST /admin/exceptions/{id}/resolve for a PSE deposit's exception: the operator's decision. The
 * exception is first won for the action (OPEN → RESOLVING, a compare-and-set: two operators cannot
 * resolve it two ways), then the correcting step, then RESOLVED. A crash or a ledger outage in
 * between is finished by calling it again with the same action. Nothing is deleted.
 *
 * - `credit` (a payment the provider confirmed after expiry + grace, or after FAILED): the deposit
 *   goes EXPIRED|FAILED → CREDITING → ASSIGNED through the saga's table (`operator_credit`), the net
 *   credited under the deposit's own ledger key `deposit:<id>:paid`, with `deposit.paid`. If the
 *   deposit was credited meanwhile (an in-time PAID of the same payment), there is nothing to add.
 * - `retry` (the ledger refused the credit or the reversal): the parked money step runs again.
 * - RETURN_CLOSE_REFUSED (the ledger refused to close a refund's hold; the refund is the resource): `retry`
 *   resumes the parked refund (the shared return saga's `resolveReturnException`).
 * - `dismiss`: no entry; the note says why.
 */
export class ResolveDepositException {
  constructor(
    private readonly deps: DepositDeps,
    private readonly saga: DepositSaga,
    private readonly returnSaga: ReturnSaga,
  ) {}

  async execute(input: { id: string; action: string; note: string; resolvedBy: string }): Promise<ExceptionView> {
    const { deps } = this;
    const done = await resolveMoneyException(deps.store.exceptions, input, actionsOf, async (won, note) => {
      if (won.kind === RETURN_EXCEPTION_KIND) return resolveReturnException(this.returnSaga, deps.store.exceptions, won);
      // The operator's resolution, found from the payment's trace (and it from this one).
      await linkActiveSpanToSagaOf(async () => (await deps.store.getById(won.resourceId))?.traceparent, {
        'wallet.deposit_id': won.resourceId,
        'wallet.exception_id': won.id,
      });
      if (won.action !== 'credit' && won.action !== 'retry') return;
      const d = await deps.store.getById(won.resourceId);
      if (!d) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'exception without its deposit' });
      const after = won.action === 'credit' ? await this.credit(d, won, note) : await this.saga.settle(d, 'operator');
      if (MONEY_STATES[after.status as PseState]) {
        // The ledger still refuses or is unreachable: the exception stays RESOLVING; the same action again resumes it.
        throw new AppError('SERVICE_UNAVAILABLE', 'El libro contable no completó el asiento; intente de nuevo la misma acción.');
      }
    });
    deps.log.warn(
      { exceptionId: done.id, kind: done.kind, action: input.action, resolvedBy: input.resolvedBy, depositId: done.resourceId },
      'money exception resolved',
    );
    return done;
  }

  private async credit(d0: DepositRecord, e: MoneyException, note: string): Promise<DepositRecord> {
    const d = await this.saga.refresh(d0, 'operator');
    if (d.status === 'PENDING_CONFIRM') {
      // Only when the provider's clock is ahead of ours: the link is still open here; it expires at expiresAt.
      throw new AppError('SERVICE_UNAVAILABLE', 'El enlace de pago aún no venció; acredite el pago después de su vencimiento.');
    }
    let next = d;
    if (d.status === 'EXPIRED' || d.status === 'FAILED') {
      next =
        (await this.saga.apply(d, 'operator_credit', 'operator', { patch: paymentOf(e.theirs), reason: `exception ${e.id} credited: ${note}` })) ??
        (await this.saga.reload(d));
    }
    // CREDITING (won here, or by an earlier attempt or an in-time PAID): the credit is owed; anything else was already credited.
    return this.saga.settle(next, 'operator');
  }
}
