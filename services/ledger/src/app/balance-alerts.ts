import { formatInstant, instantFromMicros, instantMicros, PeriodicTask, type Logger } from '@wallet/platform';
import { walletEventsV1, ledgerV1 } from '@wallet/proto';
import {
  crossings,
  isDisabled,
  settingsProblems,
  stateAfter,
  type BalanceAlertKind,
  type BalanceAlertSettings,
  type BalanceAlertState,
} from '../domain/balance-alerts.js';
import { isWalletRail, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import { protoRail } from './events.js';
import { decodeCursor, encodeCursor } from './list-movements.js';
import type { BalanceAlertEventRecord, BalanceAlertPlan, BalanceAlertRecord, DueBalanceAlert, OutboxEvent } from './ports.js';
import { Problems, requireCompany } from './validation.js';

/** Subjects of the WALLETS stream's balance alerts (docs/balance-alerts.md, docs/events.md), one per crossing. */
export const BALANCE_ALERT_SUBJECTS: Readonly<Record<BalanceAlertKind, string>> = {
  LOW: 'wallet.balance_low',
  RECOVERED: 'wallet.balance_recovered',
  HIGH: 'wallet.balance_high',
  NORMAL: 'wallet.balance_normal',
};

export const protoAlertKind = (k: BalanceAlertKind): ledgerV1.BalanceAlertKind => ledgerV1.BalanceAlertKind[k];
export const protoAlertState = (s: BalanceAlertState): ledgerV1.BalanceAlertState => ledgerV1.BalanceAlertState[s];

/** The alerts evaluated per transaction (the evaluator loops while a pass fills it). */
export const EVALUATION_BATCH = 200;

/**
 * The decision for one due alert: its crossings (domain/balance-alerts.ts), each a history row and
 * a `wallet.balance_*` event with the same id and instant.
 */
export function planEvaluation(deps: LedgerDeps, a: DueBalanceAlert): BalanceAlertPlan {
  const cs = crossings(a.state, a.availableCents, a.settings);
  const at = instantMicros(formatInstant(deps.now()));
  return {
    state: stateAfter(a.state, cs, a.settings),
    crossings: cs.map((c, i) => {
      // Two crossings of one evaluation (LOW → NORMAL → HIGH) are a microsecond apart: the history keeps their order.
      const occurredAt = instantFromMicros(at + BigInt(i));
      const record: BalanceAlertEventRecord = {
        id: deps.newId(),
        companyId: a.companyId,
        rail: a.rail,
        kind: c.kind,
        state: c.state,
        availableCents: a.availableCents,
        thresholdCents: c.threshold,
        settings: a.settings,
        walletVersion: a.version,
        occurredAt,
      };
      return { record, event: balanceAlertEvent(deps, record) };
    }),
  };
}

function balanceAlertEvent(deps: LedgerDeps, r: BalanceAlertEventRecord): OutboxEvent {
  const id = deps.newId();
  const payload = walletEventsV1.WalletBalanceAlert.toJSON({
    eventId: id,
    companyId: r.companyId,
    alertId: r.id,
    rail: protoRail(r.rail),
    kind: protoAlertKind(r.kind),
    state: protoAlertState(r.state),
    availableCents: r.availableCents,
    thresholdCents: r.thresholdCents,
    lowThresholdCents: r.settings.low,
    ...(r.settings.high !== null ? { highThresholdCents: r.settings.high } : {}),
    hysteresisCents: r.settings.hysteresis,
    occurredAt: r.occurredAt,
  });
  const tp = deps.traceparent();
  return { id, subject: BALANCE_ALERT_SUBJECTS[r.kind], payload, ...(tp ? { traceparent: tp } : {}) };
}

/**
 * Evaluates the alerts of wallets that moved since their last evaluation, every `intervalMs`, in
 * transactions of EVALUATION_BATCH alerts locked `for update skip locked`: replicas share the work
 * and never evaluate one alert twice at once; the state guard (`where state = old`) decides the
 * crossing, and its history row and events commit with it (docs/balance-alerts.md). The posting
 * path is untouched: it only bumps the wallet's version, which is what this reads.
 */
export class BalanceAlertEvaluator {
  private readonly task: PeriodicTask;

  constructor(
    private readonly deps: LedgerDeps,
    opts: { intervalMs: number },
    log: Logger,
  ) {
    this.task = new PeriodicTask('balance alert evaluator', opts.intervalMs, () => this.tick(), log);
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /** Evaluates due alerts until none is left (or the evaluator stops); returns the crossings written. */
  async tick(): Promise<number> {
    let total = 0;
    for (;;) {
      let seen = 0;
      const n = await this.deps.store.evaluateBalanceAlerts(EVALUATION_BATCH, (a) => {
        seen++;
        return planEvaluation(this.deps, a);
      });
      total += n;
      if (n > 0) this.deps.events.nudge();
      if (seen < EVALUATION_BATCH || this.task.stopping) return total;
    }
  }

  /** One wallet's alert, now (after its settings changed). */
  async evaluate(companyId: string, rail: WalletRail): Promise<number> {
    const n = await this.deps.store.evaluateBalanceAlerts(1, (a) => planEvaluation(this.deps, a), { companyId, rail });
    if (n > 0) this.deps.events.nudge();
    return n;
  }
}

export interface SetBalanceAlertCommand {
  rail: string;
  lowThresholdCents: bigint;
  highThresholdCents?: bigint;
  hysteresisCents: bigint;
}

/**
 * Sets the alert of one of the company's wallets (low 0 and no high: removes it), then evaluates it
 * at once: a wallet already below a new low threshold alerts now, once.
 */
export class SetBalanceAlert {
  constructor(
    private readonly deps: LedgerDeps,
    private readonly evaluator: Pick<BalanceAlertEvaluator, 'evaluate'>,
  ) {}

  async execute(caller: string | undefined, cmd: SetBalanceAlertCommand): Promise<BalanceAlertRecord> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    if (!isWalletRail(cmd.rail)) p.add('rail', 'Debe ser BREB o ACH.');
    const settings: BalanceAlertSettings = {
      low: cmd.lowThresholdCents,
      high: cmd.highThresholdCents === undefined || cmd.highThresholdCents === 0n ? null : cmd.highThresholdCents,
      hysteresis: cmd.hysteresisCents,
    };
    for (const [path, message] of settingsProblems(settings)) p.add(path, message);
    p.throwIfAny();
    const rail = cmd.rail as WalletRail;
    if (isDisabled(settings)) {
      await this.deps.store.deleteBalanceAlert(companyId, rail);
    } else {
      await this.deps.store.upsertBalanceAlert(companyId, rail, settings);
      await this.evaluator.evaluate(companyId, rail);
    }
    const all = await this.deps.store.balanceAlerts(companyId);
    return all.find((a) => a.rail === rail)!;
  }
}

/** Both wallets' alerts (BREB, ACH), set or not, with their state. */
export class GetBalanceAlerts {
  constructor(private readonly deps: LedgerDeps) {}

  execute(caller: string | undefined): Promise<BalanceAlertRecord[]> {
    return this.deps.store.balanceAlerts(requireCompany(caller));
  }
}

export const DEFAULT_ALERT_PAGE = 20;
export const MAX_ALERT_PAGE = 100;

export interface ListBalanceAlertEventsCommand {
  rail?: string;
  limit: number;
  cursor?: string;
}

/** The company's alert history, newest first, keyset-paged (the cursor is opaque, as the movements'). */
export class ListBalanceAlertEvents {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(
    caller: string | undefined,
    cmd: ListBalanceAlertEventsCommand,
  ): Promise<{ items: BalanceAlertEventRecord[]; nextCursor: string | null; hasMore: boolean }> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    let rail: WalletRail | undefined;
    if (cmd.rail !== undefined && cmd.rail !== '' && cmd.rail !== 'UNSPECIFIED') {
      if (isWalletRail(cmd.rail)) rail = cmd.rail;
      else p.add('rail', 'Debe ser BREB o ACH.');
    }
    const limit = cmd.limit === 0 ? DEFAULT_ALERT_PAGE : cmd.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_ALERT_PAGE) p.add('limit', `Debe estar entre 1 y ${MAX_ALERT_PAGE}.`);
    const after = cmd.cursor ? decodeCursor(cmd.cursor) : undefined;
    if (cmd.cursor && !after) p.add('cursor', 'No es un cursor de este listado.');
    p.throwIfAny();
    const rows = await this.deps.store.listBalanceAlertEvents(companyId, rail, limit + 1, after);
    const items = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    const last = items[items.length - 1];
    return { items, hasMore, nextCursor: hasMore && last ? encodeCursor({ createdAt: last.occurredAt, id: last.id }) : null };
  }
}
