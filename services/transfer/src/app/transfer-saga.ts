import { AppError, maskAccount } from '@wallet/platform';
import { ACH_ACCOUNT_TYPES } from '../domain/rails.js';
import {
  CONTRADICTIONS,
  DUPLICATES,
  MONEY_STATES,
  TRANSFER_MACHINE,
  type Actor,
  type BulkMove,
  type ExceptionKind,
  type TransferEvent,
  type TransitionSpec,
} from '../domain/transfer-machine.js';
import { DISPATCHABLE_STATES, retryDelayMs, totalDebit, type TransferRecord } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import { transferEvent } from './events.js';
import type { OutboxEvent, ReserveCommand, TransitionPatch } from './ports.js';

export const MESSAGES = {
  dispatchTimeout: 'No fue posible entregar la transferencia a la red dentro del tiempo límite; los fondos fueron liberados.',
  abandoned: 'La transferencia no se completó: el servicio se interrumpió antes de confirmarla; los fondos fueron liberados.',
  railFailed: 'La red rechazó la transferencia.',
  rejected: 'La transferencia fue rechazada en la aprobación con múltiples firmas; los fondos fueron liberados.',
  expired: 'La aprobación expiró sin alcanzar las firmas requeridas; los fondos fueron liberados.',
};

/** The message a rejected send carries: the signer's reason when given. */
export function rejectedMessage(reason: string | null): string {
  return reason ? `${MESSAGES.rejected} Motivo: ${reason}` : MESSAGES.rejected;
}

/** The reserve request of a transfer, always built the same way from its record (so a retry replays it). */
export function reserveCommandOf(t: TransferRecord, opts: { computeFee: boolean } = { computeFee: false }): ReserveCommand {
  const d = t.destination;
  return {
    companyId: t.companyId,
    apiKeyId: t.apiKeyId,
    transferId: t.id,
    rail: t.rail,
    amount: t.amount,
    fee: opts.computeFee ? null : t.fee,
    ivaApplicable: t.fee.ivaApplicable,
    reference: t.reference,
    awaitingApproval: t.approval !== null,
    ...(t.batchId ? { batchId: t.batchId } : {}),
    details: {
      targetName: t.targetName,
      targetDocument: t.targetDocument,
      bankName: d.bankName ?? null,
      bankAccountType: d.kind === 'ACH' ? (ACH_ACCOUNT_TYPES[d.accountTypeId] ?? null) : d.bankAccountType,
      // Masked: the ledger shows it masked, and the full number must not reach its request hash.
      bankAccountNumber: d.kind === 'ACH' ? maskAccount(d.accountNumber) : null,
      description: t.description,
    },
  };
}

const isCode = (err: unknown, ...codes: string[]) => err instanceof AppError && codes.includes(err.code);

/** What a provider said, for a money exception. */
export interface ProviderOutcome {
  source: 'callback' | 'status';
  status: 'COMPLETED' | 'FAILED';
  providerTransferId: string | null;
  errorMessage?: string | null;
  callbackEventId?: string;
}

export interface StepResult {
  transfer: TransferRecord;
  /** This call's event changed the transfer (false: a duplicate, lost to another writer, or a contradiction). */
  applied: boolean;
}

/**
 * The send saga's one writer. Every change of a transfer's state goes through `apply`, which looks
 * the event up in `TRANSFER_MACHINE` and runs its compare-and-set (state + history + outbox event in
 * one statement); the money step a won transition owes runs in `settle`, only after the win. Every
 * step is safe to run twice and concurrently: ledger calls carry keys derived from the transfer id,
 * rail dispatch is idempotent on the transfer id.
 */
export class TransferSaga {
  constructor(private readonly deps: TransferDeps) {}

  callbackUrl(t: TransferRecord): string {
    return `${this.deps.settings.callbackBaseUrl.replace(/\/$/, '')}/${t.rail === 'BREB' ? 'breb' : 'ach'}`;
  }

  /**
   * Applies one event of the table to `t` (as read by the caller). Returns the transfer as the
   * transition left it, or undefined when the state was not one the event leaves from (another
   * writer won). A transition into a money state is scheduled for the sweeper after the grace, so
   * the step is finished even if this process dies now.
   */
  async apply(
    t: TransferRecord,
    event: TransferEvent,
    actor: Actor,
    patch: TransitionPatch = {},
    opts: { callbackEventId?: string; approvedBy?: string[] } = {},
  ): Promise<TransferRecord | undefined> {
    const { deps } = this;
    const spec = TRANSFER_MACHINE[event];
    // The table says who may move a transfer which way; a writer outside it is a programming error.
    if (!spec.by.includes(actor)) throw new Error(`${actor} may not apply ${event}`);
    const p = this.scheduled(spec, patch);
    const next = await deps.store.transition(t, spec.from, spec.to, p, this.eventOf(spec, t, p, opts.approvedBy), opts.callbackEventId);
    if (next && spec.emits) deps.eventsWritten();
    return next;
  }

  /**
   * Applies one event of the table to many transfers of a batch at once: the table must declare it
   * `bulk` for this actor; `write` runs the store's one statement (compare-and-set per row, history,
   * outbox) with the move, which only this function makes. Every bulk writer of a transfer's state
   * goes through here, as every single writer goes through `apply`.
   */
  async applyBulk<T>(event: TransferEvent, actor: Actor, write: (move: BulkMove) => Promise<T>): Promise<T> {
    const spec = TRANSFER_MACHINE[event];
    if (!spec.bulk?.by.includes(actor) || !spec.by.includes(actor)) throw new Error(`${actor} may not apply ${event} in bulk`);
    if (spec.money && !spec.bulk.moneyStepInBulk) throw new Error(`${event} owes a money step: never applied in bulk`);
    const move = { event, from: spec.from, to: spec.to, startsDispatchClock: spec.bulk.startsDispatchClock === true } as BulkMove;
    const out = await write(move);
    if (spec.emits) this.deps.eventsWritten();
    return out;
  }

  /** The patch with the sweeper's look after the grace when the transition enters a money state. */
  private scheduled(spec: TransitionSpec, patch: TransitionPatch): TransitionPatch {
    const p: TransitionPatch = { ...patch };
    if (MONEY_STATES[spec.to] && p.nextAttemptInMs === undefined) p.nextAttemptInMs = this.deps.settings.sweeperGraceSeconds * 1000;
    return p;
  }

  private eventOf(spec: TransitionSpec, t: TransferRecord, p: TransitionPatch, approvedBy?: string[]): ((t: TransferRecord) => OutboxEvent) | null {
    const { deps } = this;
    switch (spec.emits) {
      case undefined:
        return null;
      case 'failed or rejected': {
        const rejected = (p.releaseEvent ?? t.releaseEvent) === 'rejected';
        const by = p.rejectedBy ?? t.rejectedBy;
        return rejected ? transferEvent(deps, 'rejected', by ? { rejectedBy: by } : {}) : transferEvent(deps, 'failed');
      }
      case 'approved':
        return transferEvent(deps, 'approved', { approvedBy: approvedBy ?? [] });
      default:
        return transferEvent(deps, spec.emits);
    }
  }

  /**
   * The money step a transfer in ABANDONING, RELEASING, EXPIRING or COMPLETING owes, then the event
   * that closes it. Only the winner of the move into that state (or, after a crash, the sweeper)
   * gets here. Any other state: returned as it is.
   */
  async settle(t: TransferRecord, actor: Actor): Promise<TransferRecord> {
    switch (t.state) {
      case 'ABANDONING':
        return this.finishAbandon(t, actor);
      case 'RELEASING':
      case 'EXPIRING':
        return this.finishRelease(t, actor);
      case 'COMPLETING':
        return this.finishCommit(t, actor);
      default:
        return t;
    }
  }

  /** ABANDONING: fence the reserve (void its key); if it had landed, release its hold. */
  private async finishAbandon(t: TransferRecord, actor: Actor): Promise<TransferRecord> {
    const { deps } = this;
    const v = await deps.ledger.voidReserve(t.companyId, t.id, t.rail, t.fee.ivaApplicable);
    if (v.voided) {
      const next = await this.apply(t, 'abandoned_unreserved', actor, { rejectCode: 'ABANDONED', reason: 'abandoned before reserve', nextAttemptInMs: null });
      deps.log.warn({ transferId: t.id }, 'abandoned transfer rejected (its reserve is voided: nothing was or can be held)');
      return next ?? this.reload(t);
    }
    if (v.holdStatus === 'OPEN') {
      await this.releaseHold(t, v.holdId, MESSAGES.abandoned, 'FAILED');
    } else if (v.holdStatus === 'COMMITTED') {
      // Nothing commits a transfer that was never accepted: an operator must look.
      return this.contradiction(t, 'RELEASE_REFUSED', { holdId: v.holdId, holdStatus: v.holdStatus }, { source: 'ledger' });
    }
    // A single send records its fee with its acceptance (the ledger computed it): one given up
    // after its hold landed shows the fee that hold reserved and gave back.
    const next = await this.apply(t, 'abandoned_released', actor, {
      holdId: v.holdId,
      errorMessage: MESSAGES.abandoned,
      reason: 'abandoned after reserve',
      nextAttemptInMs: null,
      ...(v.fee ? { fee: v.fee } : {}),
    });
    // Two finishers may release (idempotent in the ledger); only the one that closes it says so.
    if (next) deps.log.warn({ transferId: t.id }, 'abandoned transfer failed and its hold released');
    return next ?? this.reload(t);
  }

  /** RELEASING / EXPIRING: release the hold (if one was taken), then FAILED / EXPIRED. */
  private async finishRelease(t: TransferRecord, actor: Actor): Promise<TransferRecord> {
    const expiring = t.state === 'EXPIRING';
    if (t.holdId) {
      const released = await this.releaseHold(t, t.holdId, t.errorMessage ?? MESSAGES.railFailed, expiring ? 'EXPIRED' : 'FAILED');
      if (!released) return this.contradiction(t, 'RELEASE_REFUSED', { holdId: t.holdId, holdStatus: 'COMMITTED' }, { source: 'ledger' });
    }
    const next = await this.apply(t, expiring ? 'expired_released' : 'released', actor, { nextAttemptInMs: null });
    return next ?? this.reload(t);
  }

  /** COMPLETING: commit the hold (amount to rail clearing, fee, IVA), then COMPLETED. */
  private async finishCommit(t: TransferRecord, actor: Actor): Promise<TransferRecord> {
    const { deps } = this;
    if (!t.holdId) return this.contradiction(t, 'COMMIT_REFUSED', { holdId: null }, { source: 'ledger' });
    let completedAt: Date | null;
    try {
      completedAt = (await deps.ledger.commit(t.companyId, t.id, t.holdId, { rail: t.rail, amount: t.amount, fee: t.fee.subtotalFee, iva: t.fee.ivaAmount }))
        .completedAt;
    } catch (err) {
      if (!isCode(err, 'INVALID_STATE_TRANSITION')) throw err;
      return this.contradiction(t, 'COMMIT_REFUSED', { holdId: t.holdId, ledger: (err as AppError).message }, { source: 'ledger' });
    }
    const next = await this.apply(t, 'committed', actor, { completedAt: completedAt ?? deps.now(), nextAttemptInMs: null });
    return next ?? this.reload(t);
  }

  /** Releases a hold under `transfer:<id>:release`; false when the ledger refuses because it was committed. */
  private async releaseHold(t: TransferRecord, holdId: string, message: string, to: 'FAILED' | 'EXPIRED'): Promise<boolean> {
    try {
      await this.deps.ledger.release(t.companyId, t.id, holdId, message, to);
      return true;
    } catch (err) {
      // Released already under this key with another message: the hold is closed the way we want.
      if (isCode(err, 'REFERENCE_CONFLICT')) return true;
      if (isCode(err, 'INVALID_STATE_TRANSITION')) return false;
      throw err;
    }
  }

  /**
   * EXECUTING (quorum reached) → the ledger's movement shows EXECUTING, then the transfer is
   * dispatched like any send. The ledger step comes first: the rail's commit is accepted from
   * EXECUTING or PENDING, never from AWAITING_APPROVAL. Safe to repeat (the sweeper resumes here).
   */
  async execute(t: TransferRecord, actor: Actor): Promise<TransferRecord> {
    if (t.state !== 'EXECUTING') return t;
    try {
      await this.deps.ledger.setMovementStatus(t.companyId, t.id, 'EXECUTING', 'AWAITING_APPROVAL');
    } catch (err) {
      // Already further (an earlier attempt dispatched it and the rail answered): go on.
      if (!isCode(err, 'INVALID_STATE_TRANSITION')) throw err;
    }
    return this.dispatch(t, actor);
  }

  /**
   * RESERVED/EXECUTING → DISPATCHED (rail took it), RELEASING → FAILED (rail refused it), or
   * unchanged with a retry scheduled. The attempt is counted before the rail is called (the
   * request path counts its first attempt in the RESERVED transition), so a crash after sending
   * leaves the transfer "in doubt": it is then released only on the rail's definite "never received".
   */
  async dispatch(t: TransferRecord, actor: Actor, opts: { intentRecorded?: boolean } = {}): Promise<TransferRecord> {
    const { deps } = this;
    if (!opts.intentRecorded && !(await deps.store.recordDispatchIntent(t.id))) return this.reload(t);
    const res = await deps.rails.dispatch(t, this.callbackUrl(t));
    if (res.outcome === 'accepted') return this.markDispatched(t, actor, res.providerTransferId);
    if (res.outcome === 'rejected') {
      const won = await this.apply(t, 'dispatch_refused', actor, { errorMessage: res.message, reason: 'rail rejected at dispatch' });
      return won ? this.settle(won, actor) : this.reload(t);
    }
    const attempts = t.dispatchAttempts + 1;
    const delay = retryDelayMs(attempts, deps.settings.dispatchRetryBaseMs, deps.settings.dispatchRetryMaxMs);
    await deps.store.recordDispatchAttempt(t.id, delay, res.ambiguous, res.error);
    return { ...t, dispatchAttempts: attempts };
  }

  async markDispatched(t: TransferRecord, actor: Actor, providerTransferId: string): Promise<TransferRecord> {
    const { deps } = this;
    const next = await this.apply(t, 'dispatched', actor, {
      ...(providerTransferId ? { providerTransferId } : {}),
      dispatchedAt: deps.now(),
      nextAttemptInMs: deps.settings.confirmTimeoutSeconds * 1000,
    });
    if (next && t.state === 'EXECUTING') {
      // The listing shows PENDING from here; a commit that outran this leaves COMPLETED as it is.
      await deps.ledger.setMovementStatus(t.companyId, t.id, 'PENDING', 'EXECUTING').catch((err: unknown) => {
        if (!isCode(err, 'INVALID_STATE_TRANSITION'))
          deps.log.warn({ transferId: t.id, err: (err as Error).message }, 'could not show the approved transfer as PENDING in the ledger');
      });
    }
    return next ?? (await this.reload(t));
  }

  /** The rail says it paid (callback or status): COMPLETING is won, then the commit. */
  async complete(t: TransferRecord, outcome: ProviderOutcome): Promise<StepResult> {
    return this.railOutcome(
      t,
      'rail_completed',
      {
        ...(outcome.providerTransferId ? { providerTransferId: outcome.providerTransferId } : {}),
      },
      outcome,
    );
  }

  /**
   * A callback's COMPLETED for a transfer not read first, in the common case: DISPATCHED, of this
   * rail, the callback never handled. COMPLETING is won by one statement that also records the
   * callback (the same table entry as `complete`), then the commit. Undefined when that statement
   * finds anything else (another state, another rail, a callback seen, an unknown id): the caller
   * then reads the transfer and goes through `complete` and the general checks.
   */
  async completeUnread(id: string, rail: TransferRecord['rail'], outcome: ProviderOutcome & { callbackEventId: string }): Promise<StepResult | undefined> {
    const { deps } = this;
    const spec = TRANSFER_MACHINE.rail_completed;
    if (!deps.store.transitionOnCallback || spec.emits || !spec.by.includes('rail')) return undefined;
    const p = this.scheduled(spec, outcome.providerTransferId ? { providerTransferId: outcome.providerTransferId } : {});
    const won = await deps.store.transitionOnCallback(id, rail, spec.from, spec.to, p, outcome.callbackEventId);
    if (!won) return undefined;
    return { transfer: await this.settle(won, 'rail'), applied: true };
  }

  /**
   * A page of the rail's COMPLETED outcomes (a bulk callback) for transfers not read first. COMPLETING
   * is won for all of them in one statement (`rail_completed` in bulk: DISPATCHED, of this rail, the
   * callback never handled, recorded with it), then their holds are committed in one ledger
   * CommitBatch per company, then COMPLETED in one statement. A hold the batch did not commit is
   * finished by the single step (`settle`, as the sweeper would: a replay, or a money exception).
   * Answers the transfers it won (the caller takes every other outcome through the general path) and
   * their state now. Undefined when the store or the ledger cannot do it in bulk.
   */
  async completeMany(
    outcomes: ReadonlyArray<{ id: string; rail: TransferRecord['rail']; providerTransferId: string | null; callbackEventId: string }>,
  ): Promise<TransferRecord[] | undefined> {
    const { deps } = this;
    const { store, ledger } = deps;
    if (!store.transitionOnCallbacks || !store.finishMany || !ledger.commitMany) return undefined;
    const grace = deps.settings.sweeperGraceSeconds * 1000;
    const won = await this.applyBulk('rail_completed', 'rail', (move) => store.transitionOnCallbacks!(move, outcomes, grace));
    const finished: TransferRecord[] = [];
    const byCompany = new Map<string, TransferRecord[]>();
    for (const t of won) {
      // A transfer in COMPLETING without a hold cannot be committed: the single step says so (an exception).
      if (!t.holdId) finished.push(await this.settle(t, 'rail'));
      else if (byCompany.has(t.companyId)) byCompany.get(t.companyId)!.push(t);
      else byCompany.set(t.companyId, [t]);
    }
    for (const [companyId, ts] of byCompany) {
      const committed = await ledger.commitMany!(
        companyId,
        ts.map((t) => ({ transferId: t.id, holdId: t.holdId!, rail: t.rail, amount: t.amount, fee: t.fee.subtotalFee, iva: t.fee.ivaAmount })),
      );
      const rows = ts.flatMap((t) => {
        if (!committed.has(t.id)) return [];
        const next: TransferRecord = { ...t, state: TRANSFER_MACHINE.committed.to, completedAt: committed.get(t.id) ?? deps.now() };
        return [{ id: t.id, holdId: null, rejectCode: null, completedAt: next.completedAt!, event: transferEvent(deps, 'completed')(next), next }];
      });
      const done = rows.length > 0 ? await this.applyBulk('committed', 'rail', (move) => store.finishMany!(move, rows)) : new Set<string>();
      for (const r of rows) if (done.has(r.id)) finished.push(r.next);
      // Not committed in the batch, or overtaken before COMPLETED: the single step, as the sweeper would.
      for (const t of ts) if (!done.has(t.id)) finished.push(await this.settle(await this.reload(t), 'rail'));
    }
    return finished;
  }

  /** The rail says it failed (callback or status): RELEASING is won, then the release. */
  async railFailed(t: TransferRecord, outcome: ProviderOutcome): Promise<StepResult> {
    return this.railOutcome(
      t,
      'rail_failed',
      {
        errorMessage: outcome.errorMessage || MESSAGES.railFailed,
        reason: 'rail failed',
        ...(outcome.providerTransferId ? { providerTransferId: outcome.providerTransferId } : {}),
      },
      outcome,
    );
  }

  private async railOutcome(t: TransferRecord, event: 'rail_completed' | 'rail_failed', patch: TransitionPatch, outcome: ProviderOutcome): Promise<StepResult> {
    // A callback is the rail's own word; a status lookup is the sweeper's.
    const actor: Actor = outcome.source === 'callback' ? 'rail' : 'sweeper';
    // A rail outcome implies the dispatch: record it first if we had not.
    if (DISPATCHABLE_STATES.includes(t.state)) t = await this.markDispatched(t, actor, outcome.providerTransferId ?? '');
    const won = await this.apply(t, event, actor, patch, outcome.callbackEventId ? { callbackEventId: outcome.callbackEventId } : {});
    if (won) return { transfer: await this.settle(won, actor), applied: true };
    const current = await this.reload(t);
    const contradiction = CONTRADICTIONS[event];
    if (contradiction?.in.includes(current.state)) {
      return { transfer: await this.contradiction(current, contradiction.kind, {}, outcome), applied: false };
    }
    // A repeat, or an agreeing outcome that another writer applied: help finish its money step.
    if (DUPLICATES[event]?.includes(current.state)) return { transfer: await this.settle(current, actor), applied: false };
    return { transfer: current, applied: false };
  }

  /**
   * A provider outcome or a ledger answer that contradicts our state: a money exception (one per
   * kind and transfer), an error log and the exceptions metric. Nothing moves; a transfer stuck in a
   * money state is parked (the sweeper stops retrying) until an operator resolves the exception.
   */
  async contradiction(
    t: TransferRecord,
    kind: ExceptionKind,
    ours: Record<string, unknown>,
    theirs: Partial<ProviderOutcome> | { source: 'ledger' },
  ): Promise<TransferRecord> {
    const { deps } = this;
    const { opened, exception } = await deps.store.exceptions.open({
      id: deps.newExceptionId(),
      kind,
      companyId: t.companyId,
      rail: t.rail,
      resourceId: t.id,
      ours: { state: t.state, holdId: t.holdId, amount: t.amount.toString(), totalDebit: totalDebit(t).toString(), ...ours },
      theirs: { ...theirs },
    });
    if (MONEY_STATES[t.state]) await deps.store.reschedule(t.id, t.state, null);
    deps.log.error(
      { transferId: t.id, companyId: t.companyId, exceptionId: exception.id, kind, state: t.state, opened },
      'money exception: a provider outcome contradicts the transfer',
    );
    return this.reload(t);
  }

  async reload(t: TransferRecord): Promise<TransferRecord> {
    return (await this.deps.store.get(t.id)) ?? t;
  }
}
