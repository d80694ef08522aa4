import { randomBytes } from 'node:crypto';
import { depositEventsV1, type depositV1 } from '@wallet/proto';
import { AppError, type ErrorCode } from '../errors/catalogue.js';
import type { Logger } from '../logging/logger.js';
import { newExceptionId, type MoneyException, type MoneyExceptionStore } from '../db/money-exceptions.js';
import {
  MAX_RETURNS_PER_PAYMENT,
  RETURN_EXCEPTION_KIND,
  RETURN_MACHINE,
  RETURN_MONEY,
  RETURN_REASONS,
  publicReturnStatus,
  type ReturnActor,
  type ReturnEvent,
  type ReturnReason,
} from './return-machine.js';
import type { ReturnLedger, ReturnPatch, ReturnRail, ReturnRecord, ReturnStore } from './ports.js';
import { linkActiveSpanToSagaOf } from '../telemetry/tracing.js';

/** The subjects an owner publishes a return's end on (DEPOSITS): `deposit.returned`, `deposit.return_failed`. */
export interface ReturnSubjects {
  returned: 'deposit.returned';
  failed: 'deposit.return_failed';
}

/** What a return saga needs from its owning service. */
export interface ReturnDeps {
  returns: ReturnStore;
  /** The owner names the subjects it publishes (its event catalogue is read from its own code). */
  subjects: ReturnSubjects;
  ledger: ReturnLedger;
  rail: ReturnRail;
  log: Logger;
  now: () => Date;
  newId: () => string;
}

/** Ledger answers that are a definite "no" to a return's hold (anything else may be transient: retried). */
const RESERVE_REFUSALS: readonly string[] = [
  'INSUFFICIENT_BALANCE',
  'RETURN_EXCEEDS_PAYMENT',
  'INVALID_STATE_TRANSITION',
  'TRANSACTION_NOT_FOUND',
  'WALLET_NOT_PROVISIONED',
  'FAST_WALLET_MISSING',
  'REFERENCE_CONFLICT',
  'INVALID_REQUEST',
  'AMOUNT_EXCEEDS_BREB_CAP',
  'AMOUNT_EXCEEDS_ACH_CAP',
];
/** A hold that is gone or closed: the commit or release can never apply (a contradiction, for an operator). */
const CLOSE_REFUSALS: readonly string[] = ['HOLD_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'REFERENCE_CONFLICT', 'INVALID_REQUEST'];
const isRefusal = (err: unknown, codes: readonly string[]): err is AppError => err instanceof AppError && codes.includes(err.code);

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const newReturnId = (): string => `ret_${Array.from(randomBytes(24), (b) => ID_ALPHABET[b % 36]).join('')}`;

/** The return as the API (`depositReturnView`) and the events show it. */
export function returnToProto(r: ReturnRecord, rail: 'BREB' | 'PSE'): depositV1.DepositReturn {
  return {
    id: r.id,
    depositId: r.depositId,
    rail,
    amountCents: r.amount,
    reason: r.reason,
    ...(r.description ? { description: r.description } : {}),
    status: publicReturnStatus(r.status),
    ...(r.failureCode ? { failureCode: r.failureCode } : {}),
    ...(r.failureMessage ? { failureMessage: r.failureMessage } : {}),
    transactionId: r.movementId,
    createdAt: r.createdAt,
    ...(r.returnedAt ? { returnedAt: r.returnedAt } : {}),
    depositAmountCents: r.depositAmount,
    returnedAmountCents: r.returnedAmount,
    ...(r.payerName ? { payerName: r.payerName } : {}),
    ...(r.payerDocument ? { payerDocument: r.payerDocument } : {}),
    ...(r.payerBank ? { payerBank: r.payerBank } : {}),
  };
}

/**
 * The return saga's one writer (return-machine.ts), the same for every rail. `apply` runs an event of
 * the table as a compare-and-set; `settle` runs the money step the return's state owes, then the
 * event that closes it, until the return is final or a step cannot finish now (the ledger or the rail
 * did not answer: thrown, and the owner's sweeper runs it again after its grace). Every step is safe to
 * run twice and concurrently: the ledger calls carry the return's keys, the rail's return is
 * idempotent by the return's id, and the closing events are compare-and-sets.
 */
export class ReturnSaga {
  constructor(private readonly deps: ReturnDeps) {}

  private event(kind: 'returned' | 'return_failed', r: ReturnRecord) {
    const id = this.deps.newId();
    const payload = depositEventsV1.DepositReturnEvent.toJSON({
      eventId: id,
      companyId: r.companyId,
      depositReturn: returnToProto(r, this.deps.rail.name),
      occurredAt: this.deps.now(),
    });
    return { id, subject: kind === 'returned' ? this.deps.subjects.returned : this.deps.subjects.failed, payload };
  }

  async apply(r: ReturnRecord, event: ReturnEvent, actor: ReturnActor, reason?: string, patch?: ReturnPatch): Promise<ReturnRecord | undefined> {
    const spec = RETURN_MACHINE[event];
    if (!spec.by.includes(actor)) throw new Error(`${actor} may not apply ${event}`);
    if (!spec.from.includes(r.status)) return undefined;
    const emits = spec.emits;
    return this.deps.returns.transition({
      id: r.id,
      from: spec.from,
      to: spec.to,
      reason: reason ?? `${event} (${actor})`,
      ...(patch ? { patch } : {}),
      ...(emits ? { event: (x: ReturnRecord) => this.event(emits, x) } : {}),
    });
  }

  async settle(start: ReturnRecord, actor: ReturnActor): Promise<ReturnRecord> {
    let r = start;
    for (let round = 0; round < 8; round++) {
      if (r.parked || !(r.status in RETURN_MONEY)) return r;
      const next = await this.step(r, RETURN_MONEY[r.status as keyof typeof RETURN_MONEY], actor);
      if (next === 'parked') return this.reload(r);
      // Lost the race (another writer moved it): continue from where it is now.
      r = next ?? (await this.reload(r));
    }
    return r;
  }

  private async step(r: ReturnRecord, step: 'reserve' | 'send' | 'release', actor: ReturnActor): Promise<ReturnRecord | undefined | 'parked'> {
    const { deps } = this;
    if (step === 'reserve') {
      let holdId: string;
      try {
        holdId = await deps.ledger.reserveReturn(r);
      } catch (err) {
        if (!isRefusal(err, RESERVE_REFUSALS)) throw err;
        deps.log.info({ returnId: r.id, depositId: r.depositId, code: err.code }, 'return refused by the ledger: nothing moved');
        return this.apply(r, 'reserve_refused', actor, `the ledger refused the hold: ${err.code}`, { failureCode: err.code, failureMessage: err.message });
      }
      return this.apply(r, 'reserved', actor, undefined, { holdId });
    }
    if (step === 'send') {
      const n = await deps.rail.send(r);
      if (n.outcome === 'UNAVAILABLE') throw new AppError('SERVICE_UNAVAILABLE', 'El proveedor no respondió la devolución; se completará sola.');
      if (n.outcome === 'REFUSED') {
        deps.log.warn({ returnId: r.id, depositId: r.depositId, rail: deps.rail.name, code: n.code }, 'return refused by the rail: the hold is released');
        return this.apply(r, 'send_refused', actor, `the rail refused the return: ${n.code ?? 'refused'}`, {
          failureCode: n.code ?? 'RETURN_REFUSED',
          failureMessage: 'El proveedor rechazó la devolución; el dinero sigue en la billetera.',
        });
      }
      if (!(await this.close(r, 'commit', () => deps.ledger.commitReturn(r)))) return 'parked';
      return this.apply(r, 'returned', actor, undefined, { returnedAt: n.returnedAt ?? deps.now() });
    }
    if (!(await this.close(r, 'release', () => deps.ledger.releaseReturn(r, r.failureMessage ?? 'Devolución rechazada por el proveedor')))) return 'parked';
    return this.apply(r, 'released', actor);
  }

  /**
   * The commit or release of the return's hold. A definite refusal (the hold gone or closed the other
   * way) contradicts what the table allows: the return is parked for an operator with a money exception
   * (RETURN_CLOSE_REFUSED, one per return, in the park's transaction) and an error log; false. Anything
   * else that fails is thrown (retried).
   */
  private async close(r: ReturnRecord, step: 'commit' | 'release', call: () => Promise<void>): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (err) {
      if (!isRefusal(err, CLOSE_REFUSALS)) throw err;
      const { exceptionId, opened } = await this.deps.returns.park(r.id, {
        id: newExceptionId(),
        kind: RETURN_EXCEPTION_KIND,
        companyId: r.companyId,
        rail: this.deps.rail.name,
        resourceId: r.id,
        ours: {
          state: r.status,
          step,
          // commit: the rail returned the money to the payer, the hold is still to be taken; release: the rail refused, the hold is still to be given back.
          railOutcome: step === 'commit' ? 'RETURNED' : 'REFUSED',
          depositId: r.depositId,
          providerTransferId: r.providerTransferId,
          amount: r.amount.toString(),
          holdId: r.holdId,
          movementId: r.movementId,
          reason: r.reason,
          requestedBy: r.requestedBy,
        },
        theirs: { source: 'ledger', code: err.code, message: err.message },
      });
      this.deps.log.error(
        { returnId: r.id, depositId: r.depositId, companyId: r.companyId, state: r.status, step, code: err.code, exceptionId, opened },
        "money contradiction: the ledger refused to close a return's hold; parked for an operator with a money exception",
      );
      return false;
    }
  }

  /**
   * An operator's `retry` of a parked return (its RETURN_CLOSE_REFUSED exception won for it): unparked, then the
   * step it owes run again (the rail's return, idempotent by the return's id, then the commit; or the release),
   * under the return's own ledger keys. A refusal again parks it again (no second exception).
   */
  async resume(id: string): Promise<ReturnRecord> {
    const r = await this.deps.returns.byId(id);
    if (!r) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'exception without its return' });
    if (r.parked) await this.deps.returns.unpark(id);
    return this.settle({ ...r, parked: false }, 'operator');
  }

  /** The return's trace context (an operator's resolution links to it). */
  async traceparentOf(id: string): Promise<string | null | undefined> {
    return (await this.deps.returns.byId(id))?.traceparent;
  }

  async reload(r: ReturnRecord): Promise<ReturnRecord> {
    return (await this.deps.returns.byId(r.id)) ?? r;
  }

  /** The owner's sweeper: live returns past the grace, each settled again (its errors logged, the next one tried). */
  async sweep(
    graceSeconds: number,
    batch: number,
    stopping: () => boolean,
    run: (r: ReturnRecord, settle: () => Promise<ReturnRecord>) => Promise<ReturnRecord>,
  ): Promise<void> {
    const { deps } = this;
    for (const r of await deps.returns.leaseStale(graceSeconds, batch)) {
      if (stopping()) return;
      try {
        const after = await run(r, () => this.settle(r, 'sweeper'));
        deps.log.info({ returnId: r.id, from: r.status, to: after.status }, 'unfinished return step completed');
      } catch (err) {
        deps.log.warn({ returnId: r.id, err: (err as Error).message }, 'return step retry failed');
      }
    }
  }
}

/**
 * The correcting step of a RETURN_CLOSE_REFUSED exception an operator won (`resolveMoneyException`'s `correct`), the
 * same for both owners: `retry` resumes the return (ReturnSaga.resume); `dismiss` moves nothing. A refusal again
 * reopens the exception (nothing moved: the operator may dismiss it, or retry once the cause is fixed); a step
 * that did not finish leaves it RESOLVING (the same action again resumes it).
 */
export async function resolveReturnException(saga: ReturnSaga, exceptions: Pick<MoneyExceptionStore, 'reopen'>, won: MoneyException): Promise<void> {
  // The operator's resolution, found from the return's trace (and it from this one).
  await linkActiveSpanToSagaOf(() => saga.traceparentOf(won.resourceId), { 'wallet.return_id': won.resourceId, 'wallet.exception_id': won.id });
  if (won.action !== 'retry') return;
  const after = await saga.resume(won.resourceId);
  if (after.parked) {
    await exceptions.reopen(won.id, 'retry');
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      'El libro contable volvió a rechazar el cierre de la retención de la devolución; la excepción sigue abierta: reintente cuando se corrija la causa o descártela con una nota.',
    );
  }
  if (after.status in RETURN_MONEY) {
    throw new AppError('SERVICE_UNAVAILABLE', 'La devolución no completó su paso pendiente; intente de nuevo la misma acción.');
  }
}

export interface CreateReturnInput {
  /**
   * A service's own id for the return (`ret_` + 24 [a-z0-9]), e.g. a cobro's automatic return derived
   * from the payment: the same id again answers that return (never a second one). Absent: a new id.
   */
  returnId?: string | undefined;
  depositId: string;
  amountCents?: bigint | undefined;
  reason: string;
  description?: string | undefined;
  requestedBy: string;
}

/** How the owner finds a payment of a company and the ledger key of its inflow. */
export interface ReturnablePayments {
  /** The deposit id format the owner uses (anything else reads as not found). */
  readonly idPattern: RegExp;
  /** The company of the owner's payment with this id; undefined when there is none. */
  companyOf(depositId: string): Promise<string | undefined>;
  inflowKey(payment: { providerTransferId: string; hint: string | null }): string;
  /** The message of a payment that exists but cannot be returned, by its status. */
  notReturnable(status: string): string;
}

/**
 * `POST /deposits/{id}/returns`: the return is recorded (its amount checked against the payment's
 * gross under the payment's lock), then its saga runs in this call as far as it can. The answer: the
 * return PENDING (the rail has not answered yet: it finishes on its own, with `deposit.returned`) or
 * RETURNED, or FAILED when the rail refused it; a hold the ledger refuses (the wallet cannot cover it)
 * is answered with the ledger's error, the return kept FAILED (`details.returnId`).
 */
export class CreateDepositReturn {
  constructor(
    private readonly deps: ReturnDeps,
    private readonly saga: ReturnSaga,
    private readonly payments: ReturnablePayments,
  ) {}

  async execute(companyId: string | undefined, input: CreateReturnInput): Promise<ReturnRecord> {
    const { deps } = this;
    if (!this.payments.idPattern.test(input.depositId ?? '')) throw new AppError('DEPOSIT_NOT_FOUND');
    const problems: Array<{ path: string; message: string }> = [];
    if (!(RETURN_REASONS as readonly string[]).includes(input.reason))
      problems.push({ path: 'reason', message: `Debe ser uno de ${RETURN_REASONS.join(', ')}.` });
    if (input.amountCents !== undefined && input.amountCents <= 0n) problems.push({ path: 'amountCents', message: 'Debe ser mayor que cero.' });
    if (input.description !== undefined && input.description.length > 140) problems.push({ path: 'description', message: 'Máximo 140 caracteres.' });
    if (input.returnId !== undefined && !/^ret_[a-z0-9]{24}$/.test(input.returnId))
      problems.push({ path: 'returnId', message: 'Debe ser ret_ seguido de 24 letras minúsculas o dígitos.' });
    if (problems.length > 0) throw new AppError('INVALID_REQUEST', undefined, { fields: problems });
    // The payment's company: the caller's own only; an operator (no company) may return any.
    const owner = await this.payments.companyOf(input.depositId);
    if (!owner || (companyId && owner !== companyId)) throw new AppError('DEPOSIT_NOT_FOUND');
    const out = await deps.returns.insert({
      id: input.returnId ?? newReturnId(),
      depositId: input.depositId,
      companyId: owner,
      ...(input.amountCents !== undefined ? { amount: input.amountCents } : {}),
      reason: input.reason as ReturnReason,
      description: input.description?.trim() || null,
      movementId: deps.newId(),
      requestedBy: input.requestedBy || (companyId ? 'company' : 'operator'),
      inflowKey: (p) => this.payments.inflowKey(p),
    });
    if ('refused' in out) {
      switch (out.refused) {
        case 'NOT_FOUND':
          throw new AppError('DEPOSIT_NOT_FOUND');
        case 'NOT_RETURNABLE':
          throw new AppError('INVALID_STATE_TRANSITION', this.payments.notReturnable(out.status));
        case 'ID_TAKEN':
          throw new AppError('REFERENCE_CONFLICT', 'El identificador de la devolución ya se usó para otro pago.');
        case 'TOO_MANY':
          throw new AppError('INVALID_STATE_TRANSITION', `Un pago admite hasta ${MAX_RETURNS_PER_PAYMENT} devoluciones.`);
        case 'EXCEEDS':
          throw new AppError('RETURN_EXCEEDS_PAYMENT', undefined, {
            grossCents: out.gross.toString(),
            returnedCents: out.returned.toString(),
            returnableCents: (out.gross - out.returned).toString(),
          });
      }
    }
    deps.log.info(
      { returnId: out.id, depositId: out.depositId, companyId: out.companyId, rail: deps.rail.name, amount: out.amount.toString(), reason: out.reason },
      'return requested',
    );
    let after: ReturnRecord;
    try {
      after = await this.saga.settle(out, companyId ? 'company' : 'operator');
    } catch (err) {
      // The ledger or the rail did not answer: the return stays PENDING and the sweeper finishes it.
      deps.log.warn({ returnId: out.id, err: (err as Error).message }, 'return left for the sweeper');
      return this.saga.reload(out);
    }
    if (after.status === 'FAILED' && after.holdId === null && after.failureCode) {
      // The ledger refused the hold: nothing moved; the caller is told why (the return is kept, FAILED).
      throw new AppError(after.failureCode as ErrorCode, after.failureMessage ?? undefined, { returnId: after.id });
    }
    return after;
  }
}

/** The returns of one payment, oldest first (another company's payment reads as not found). */
export class ListDepositReturns {
  constructor(
    private readonly returns: ReturnStore,
    private readonly payments: ReturnablePayments,
  ) {}

  async execute(companyId: string | undefined, depositId: string): Promise<ReturnRecord[]> {
    if (!this.payments.idPattern.test(depositId ?? '')) throw new AppError('DEPOSIT_NOT_FOUND');
    const owner = await this.payments.companyOf(depositId);
    if (!owner || (companyId && owner !== companyId)) throw new AppError('DEPOSIT_NOT_FOUND');
    return this.returns.byDeposit(depositId);
  }
}
