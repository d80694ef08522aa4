import { AppError, ERRORS, type CallContext, type Database, type Logger } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { LedgerClient } from '../../clients/ledger-client.js';
import type { TransferClient } from '../../clients/transfer-client.js';
import { requestHash, sendRequestOf, statusName } from '../../api/transfers/presenters.js';
import { railToProto } from '../../api/wallets/presenters.js';
import { jsonBatchRequestOf } from '../../api/transfers/batches/presenters.js';
import { ApiKeyStore, type KeyPrincipalRow } from '../../persistence/api-key.store.js';

import { ScheduleStore, type RunRow } from '../../persistence/schedule.store.js';
import { appendRunEvent } from './schedule-events.js';
import type { SchedulerClock } from './clock.js';

const keys = new ApiKeyStore();
/** How long a replica reuses an author key's state (its revocation reaches the runs within it). */
const KEY_CACHE_MS = 1_000;
const store = new ScheduleStore();

/** Refusals that may pass (a service or a rail down): the run is tried again, under its key, until it gives up. */
const TRANSIENT = new Set(['SERVICE_UNAVAILABLE', 'ACH_RAIL_UNAVAILABLE', 'BREB_DIRECTORY_LOOKUP_FAILED', 'INTERNAL_ERROR', 'RATE_LIMITED']);

/** A run's failure that no catalogue code names. */
export const AUTHOR_INACTIVE = {
  code: 'SCHEDULE_AUTHOR_INACTIVE',
  message:
    'La clave de API que creó o modificó por última vez el programa fue revocada, perdió el permiso de escritura o la empresa está suspendida; el programa quedó en pausa.',
};
export const BATCH_REJECTED = {
  code: 'BATCH_REJECTED',
  message: 'El lote de la ejecución fue rechazado en la validación (un ítem inválido en modo all, o ningún ítem válido): no se movió dinero.',
};
/** As POST /transfers/batches waits for a large batch's validation. */
const BATCH_CREATE_DEADLINE_MS = 55_000;
const TOP_UP_NOTHING = 'El saldo de la billetera destino ya alcanzaba el objetivo: no se movió nada.';

type Action =
  | { kind: 'SEND'; send: Parameters<typeof sendRequestOf>[0] }
  | { kind: 'BATCH'; batch: { description?: string; mode: 'all' | 'valid_only'; items: Array<{ amount: number }> } }
  | { kind: 'MOVE'; from: 'BREB' | 'ACH'; to: 'BREB' | 'ACH'; amountCents: number; description?: string }
  | { kind: 'TOP_UP'; from: 'BREB' | 'ACH'; to: 'BREB' | 'ACH'; targetBalanceCents: number; description?: string };

type Outcome =
  | { kind: 'started'; transferId: string | null; moveId: string | null; batchId?: string; amountCents: bigint; status: string }
  | { kind: 'failed'; code: string; message: string; amountCents: bigint }
  | { kind: 'skipped'; reason: string };

export interface RunExecutorDeps {
  db: Database;
  ledger: LedgerClient;
  transfer: TransferClient;
  clock: SchedulerClock;
  log: Logger;
  sendDeadlineMs: number;
  /** A bulk payout's execute (BATCH_EXECUTE_DEADLINE_MS): it grows with the batch. */
  batchExecuteDeadlineMs: number;
  runGiveUpSeconds: number;
  /** Called after a run's outcome (and its event) committed: the outbox relay looks at once. */
  onEvent: () => void;
}

/**
 * Makes one run: acts as the API key that wrote the schedule (checked active at the run) and asks
 * for the run's send or move under the run's key — the transfer service and the ledger bind that key
 * to what they make, so a run tried twice (a replica died, a service was down) is still one send or
 * one move. The outcome ends the run once (STARTING → STARTED / FAILED / SKIPPED) with its event.
 */
export class RunExecutor {
  constructor(private readonly deps: RunExecutorDeps) {}

  async execute(run: RunRow): Promise<void> {
    const { deps } = this;
    const call = await this.callFor(run);
    if (!call) return this.finish(run, { kind: 'failed', ...AUTHOR_INACTIVE, amountCents: plannedAmount(run) }, { pause: true });
    let outcome: Outcome;
    try {
      outcome = await this.make(run, run.action as unknown as Action, call);
    } catch (err) {
      const code = err instanceof AppError ? err.code : 'SERVICE_UNAVAILABLE';
      const overdue = deps.clock.now().getTime() - Date.parse(run.dueAt) > deps.runGiveUpSeconds * 1000;
      if (TRANSIENT.has(code) && !overdue) {
        // Left STARTING: its lease runs out and a replica tries again, under the same key.
        deps.log.warn({ runId: run.id, scheduleId: run.scheduleId, code, attempts: run.attempts }, 'schedule run not made yet; it will be tried again');
        return;
      }
      const message = err instanceof AppError && !TRANSIENT.has(code) ? err.message : ERRORS.SERVICE_UNAVAILABLE.message;
      outcome = { kind: 'failed', code: TRANSIENT.has(code) ? 'SERVICE_UNAVAILABLE' : code, message, amountCents: run.amountCents ?? plannedAmount(run) };
    }
    await this.finish(run, outcome);
  }

  private async make(run: RunRow, action: Action, call: CallContext): Promise<Outcome> {
    const { deps } = this;
    switch (action.kind) {
      case 'SEND': {
        const res = await deps.transfer.send({ ...sendRequestOf(action.send), requestHash: requestHash(action.send), idempotencyKey: run.runKey }, call, {
          deadlineMs: deps.sendDeadlineMs,
        });
        const t = res.transfer!;
        return { kind: 'started', transferId: t.id, moveId: null, amountCents: BigInt(action.send.amount), status: statusName(t.status) };
      }
      case 'BATCH':
        return this.makeBatch(run, action, call);
      case 'MOVE': {
        const r = await deps.ledger.move(moveRequest(run, action, BigInt(action.amountCents)), call);
        return { kind: 'started', transferId: null, moveId: r.moveId, amountCents: BigInt(action.amountCents), status: 'COMPLETED' };
      }
      case 'TOP_UP': {
        let amount = run.amountCents;
        if (amount === null) {
          const { wallets } = await deps.ledger.getBalances({ ivaApplicable: false }, call);
          const to = wallets.find((w) => w.rail === railToProto(action.to));
          if (!to) throw new AppError('WALLET_NOT_PROVISIONED');
          const lack = BigInt(action.targetBalanceCents) - to.availableCents;
          if (lack <= 0n) return { kind: 'skipped', reason: TOP_UP_NOTHING };
          // Kept before the move is asked: a retry of this run moves this amount (the ledger answers it again), never a new one.
          amount = await store.fixAmount(deps.db, run.id, lack);
        }
        const r = await deps.ledger.move(moveRequest(run, action, amount), call);
        return { kind: 'started', transferId: null, moveId: r.moveId, amountCents: amount, status: 'COMPLETED' };
      }
    }
  }

  /**
   * A BATCH run: creates the bulk payout under the run's key (a retry gets that batch) and executes it
   * (executing again is safe: it answers the batch as it is). A batch rejected at validation (mode `all`
   * with an invalid item, or no valid item) fails the run (BATCH_REJECTED). An execution the wallets
   * cannot fund (INSUFFICIENT_BALANCE) or the policy refuses fails the run, and the batch is cancelled
   * so nothing stays waiting; a refusal that may pass (a service down) leaves the run to be tried again.
   */
  private async makeBatch(run: RunRow, action: Extract<Action, { kind: 'BATCH' }>, call: CallContext): Promise<Outcome> {
    const { deps } = this;
    const amountCents = action.batch.items.reduce((sum, i) => sum + BigInt(i.amount), 0n);
    const created = await deps.transfer.createBatch(
      jsonBatchRequestOf(
        { mode: action.batch.mode, items: action.batch.items, ...(action.batch.description !== undefined ? { description: action.batch.description } : {}) },
        run.runKey,
      ),
      call,
      { deadlineMs: BATCH_CREATE_DEADLINE_MS },
    );
    const batch = created.batch!;
    if (batch.state === 'REJECTED') return { kind: 'failed', code: BATCH_REJECTED.code, message: BATCH_REJECTED.message, amountCents };
    try {
      const b = await deps.transfer.executeBatch({ batchId: batch.id }, call, { deadlineMs: deps.batchExecuteDeadlineMs });
      return { kind: 'started', transferId: null, moveId: null, batchId: b.id, amountCents, status: b.state };
    } catch (err) {
      if (err instanceof AppError && !TRANSIENT.has(err.code)) {
        await deps.transfer.cancelBatch({ batchId: batch.id }, call).catch((e: unknown) => {
          deps.log.warn({ err: (e as Error).message, batchId: batch.id }, 'the batch of a failed schedule run could not be cancelled; it expires unexecuted');
        });
      }
      throw err;
    }
  }

  /**
   * The call as the schedule's author (as it was when the run was leased): its key must still be active,
   * with WRITE, in an ACTIVE company. A key's state is read at most once a second per replica (runs due
   * together share the lookup); the API's own key cache lives up to five.
   */
  private async callFor(run: RunRow): Promise<CallContext | null> {
    if (run.author?.kind !== 'apikey') return null;
    const k = await this.authorKey(run.companyId, run.author.id);
    if (!k || k.revoked || k.scope !== 'WRITE' || k.companyStatus !== 'ACTIVE') return null;
    return {
      requestId: `schedule-run-${run.id}`,
      companyId: k.companyId,
      apiKeyId: k.keyId,
      actor: `schedule:${run.scheduleId}`,
      principal: {
        kind: 'apikey',
        companyId: k.companyId,
        keyId: k.keyId,
        scope: 'WRITE',
        profile: {
          nit: k.nit,
          name: k.companyName,
          ivaApplicable: k.taxRegime === 'COMMON',
          multiSigThreshold: k.multiSigThreshold,
          counterpartyDailyLimitCents: k.counterpartyDailyLimitCents,
          counterpartyMonthlyLimitCents: k.counterpartyMonthlyLimitCents,
        },
      },
    };
  }

  private readonly keyCache = new Map<string, { at: number; row: Promise<KeyPrincipalRow | undefined> }>();
  private authorKey(companyId: string, keyId: string): Promise<KeyPrincipalRow | undefined> {
    const now = Date.now();
    const hit = this.keyCache.get(keyId);
    if (hit && now - hit.at < KEY_CACHE_MS) return hit.row;
    if (this.keyCache.size > 10_000) this.keyCache.clear();
    const row = keys.findPrincipalById(this.deps.db, companyId, keyId);
    this.keyCache.set(keyId, { at: now, row });
    row.catch(() => this.keyCache.delete(keyId));
    return row;
  }

  private async finish(run: RunRow, o: Outcome, opts: { pause?: boolean } = {}): Promise<void> {
    const at = this.deps.clock.now().toISOString();
    const won = await this.deps.db.tx(async (tx) => {
      const ended = await store.finishRun(tx, run.id, {
        status: o.kind === 'started' ? 'STARTED' : o.kind === 'failed' ? 'FAILED' : 'SKIPPED',
        amountCents: o.kind === 'skipped' ? null : o.amountCents,
        transferId: o.kind === 'started' ? o.transferId : null,
        moveId: o.kind === 'started' ? o.moveId : null,
        batchId: o.kind === 'started' ? (o.batchId ?? null) : null,
        outcomeStatus: o.kind === 'started' ? o.status : null,
        errorCode: o.kind === 'failed' ? o.code : null,
        errorMessage: o.kind === 'failed' ? o.message : o.kind === 'skipped' ? o.reason : null,
        now: at,
      });
      if (!ended) return false;
      await appendRunEvent(tx, run, { ...o, at });
      if (opts.pause) await tx.query(`update gateway.schedules set status = 'PAUSED', updated_at = now() where id = ? and status = 'ACTIVE'`, [run.scheduleId]);
      return true;
    });
    if (won) this.deps.onEvent();
  }
}

function plannedAmount(run: RunRow): bigint {
  const a = run.action as unknown as Action;
  if (a.kind === 'SEND') return BigInt(a.send.amount);
  if (a.kind === 'BATCH') return a.batch.items.reduce((sum, i) => sum + BigInt(i.amount), 0n);
  if (a.kind === 'MOVE') return BigInt(a.amountCents);
  return run.amountCents ?? 0n;
}

function moveRequest(run: RunRow, a: Extract<Action, { kind: 'MOVE' | 'TOP_UP' }>, amount: bigint): ledgerV1.MoveRequest {
  return {
    idempotencyKey: run.runKey,
    fromRail: railToProto(a.from),
    toRail: railToProto(a.to),
    amountCents: amount,
    ...(a.description !== undefined ? { description: a.description } : {}),
  };
}
