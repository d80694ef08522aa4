import { randomUUID } from 'node:crypto';
import { AppError, checkScheduleRule, type BusinessDayRule, invalidRequest, Problems, upcomingRuns, type CallContext, type Database } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { LedgerClient } from '../../clients/ledger-client.js';
import type { TransferClient } from '../../clients/transfer-client.js';
import { ScheduleStore, type NextRun, type RunRow, type ScheduleRow, type ScheduleStatus, type StoredRule } from '../../persistence/schedule.store.js';
import type { SchedulerClock } from './clock.js';
import { nextAfter, nextOnResume, ruleOf, storedNext } from './schedule-rules.js';
import { counterpartiesNamed, projectRuns, type Projection } from './projection.js';

const store = new ScheduleStore();

/** POST /schedules as the route validated it (api/schedules/schemas.ts CreateScheduleBody). */
export interface CreateScheduleInput {
  description?: string | undefined;
  recurrence: { kind: string; executeAt?: string } & Record<string, unknown>;
  businessDayRule: BusinessDayRule;
  startAt?: string | undefined;
  endAt?: string | undefined;
  maxRuns?: number | undefined;
  action: { kind: string } & Record<string, unknown>;
}

/** PATCH /schedules/{id} as the route validated it (UpdateScheduleBody). */
export interface UpdateScheduleInput {
  status?: 'ACTIVE' | 'PAUSED' | undefined;
  description?: string | undefined;
  endAt?: string | null | undefined;
  maxRuns?: number | null | undefined;
  action?: ({ kind: string } & Record<string, unknown>) | undefined;
}

export type { RunRow, ScheduleRow } from '../../persistence/schedule.store.js';
const RECURRENCE_FIELDS = new Set(['executeAt', 'dayOfMonth', 'time', 'dayOfWeek', 'expression']);

/** The company and the key a schedule request comes from (only API keys write schedules). */
function authorOf(call: CallContext): { companyId: string; keyId: string } {
  const p = call.principal;
  if (p?.kind !== 'apikey') throw new AppError('INTERNAL_ERROR');
  return { companyId: p.companyId, keyId: p.keyId };
}

/** The company a schedule is read for: an API key's, or a dashboard user's (the dashboard reads schedules, never writes them). */
function readerOf(call: CallContext): { companyId: string } {
  const p = call.principal;
  if (p?.kind === 'apikey' || p?.kind === 'user') return { companyId: p.companyId };
  throw new AppError('INTERNAL_ERROR');
}

/** Scheduled payouts (docs/schedules.md): the requests of /schedules. The scheduler (scheduler.ts) starts the runs. */
export class Schedules {
  constructor(
    private readonly db: Database,
    private readonly ledger: LedgerClient,
    private readonly clock: SchedulerClock,
    /** Reads the counterparties a projection's sends name (absent in compositions without the transfer service). */
    private readonly transfer?: Pick<TransferClient, 'getCounterparty'>,
  ) {}

  async create(call: CallContext, body: CreateScheduleInput): Promise<ScheduleRow> {
    const { companyId, keyId } = authorOf(call);
    const now = this.clock.now();
    const rule: StoredRule = {
      recurrence: normalizedRecurrence(body.recurrence),
      businessDayRule: body.businessDayRule,
      startAt: body.startAt ? new Date(body.startAt).toISOString() : now.toISOString(),
      endAt: body.endAt ? new Date(body.endAt).toISOString() : null,
      maxRuns: body.maxRuns ?? null,
    };
    const p = new Problems();
    if (body.recurrence.kind === 'ONCE' && Date.parse(String(body.recurrence.executeAt)) <= now.getTime())
      p.add('recurrence.executeAt', 'Debe ser un instante futuro.');
    else checkRule(p, rule);
    p.throwIfAny();
    return store.insert(this.db, {
      id: randomUUID(),
      companyId,
      description: body.description ?? null,
      rule,
      action: body.action as ScheduleRow['action'],
      authorKind: 'apikey',
      authorId: keyId,
      next: nextAfter(rule, null),
    });
  }

  async get(call: CallContext, id: string): Promise<ScheduleRow> {
    const s = await store.find(this.db, readerOf(call).companyId, id);
    if (!s) throw new AppError('SCHEDULE_NOT_FOUND');
    return s;
  }

  async list(
    call: CallContext,
    q: { status?: ScheduleStatus | undefined; limit: number; cursor?: string | undefined },
  ): Promise<{ items: ScheduleRow[]; nextCursor: string | null }> {
    const after = q.cursor ? decodeCursor(q.cursor) : undefined;
    const rows = await store.list(this.db, readerOf(call).companyId, {
      limit: q.limit + 1,
      ...(after ? { after } : {}),
      ...(q.status ? { status: q.status } : {}),
    });
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > q.limit && last ? encodeCursor(last) : null };
  }

  /**
   * PATCH: pause or resume, a new end or number of runs, a new action, a new description. The key that
   * makes the change becomes the schedule's author (the runs act as it). A run already started keeps
   * what it did. A CANCELLED or COMPLETED schedule answers 409 SCHEDULE_ENDED.
   */
  async update(call: CallContext, id: string, patch: UpdateScheduleInput): Promise<ScheduleRow> {
    const { companyId, keyId } = authorOf(call);
    return this.db.tx(async (tx) => {
      const s = await store.find(tx, companyId, id, { forUpdate: true });
      if (!s) throw new AppError('SCHEDULE_NOT_FOUND');
      if (s.status === 'CANCELLED' || s.status === 'COMPLETED') throw new AppError('SCHEDULE_ENDED');
      const rule: StoredRule = {
        ...s.rule,
        ...(patch.endAt !== undefined ? { endAt: patch.endAt === null ? null : new Date(patch.endAt).toISOString() } : {}),
        ...(patch.maxRuns !== undefined ? { maxRuns: patch.maxRuns } : {}),
      };
      const p = new Problems();
      if (patch.endAt !== undefined || patch.maxRuns !== undefined) checkRule(p, rule, { ended: s.runsStarted > 0 });
      if (rule.maxRuns !== null && rule.maxRuns < s.runsStarted) p.add('maxRuns', `Ya se iniciaron ${s.runsStarted} ejecuciones.`);
      p.throwIfAny();
      const status = patch.status ?? s.status;
      const last = s.lastNominalAt ? { seq: s.runsStarted, nominalAt: s.lastNominalAt } : null;
      let next: NextRun | null = null;
      if (status === 'ACTIVE') next = s.status === 'PAUSED' ? nextOnResume(rule, last, this.clock.now()) : nextAfter(rule, last);
      const updated = await store.update(tx, s.id, {
        status: status === 'ACTIVE' && next === null ? 'COMPLETED' : status,
        description: patch.description ?? s.description,
        rule,
        action: (patch.action as ScheduleRow['action'] | undefined) ?? s.action,
        next,
        author: { kind: 'apikey', id: keyId },
      });
      return updated;
    });
  }

  /** DELETE: no further runs (a run already started is not undone: its transfer or move goes on). Cancelling twice answers the same. */
  async cancel(call: CallContext, id: string): Promise<ScheduleRow> {
    const { companyId } = authorOf(call);
    return this.db.tx(async (tx) => {
      const s = await store.find(tx, companyId, id, { forUpdate: true });
      if (!s) throw new AppError('SCHEDULE_NOT_FOUND');
      if (s.status === 'CANCELLED' || s.status === 'COMPLETED') return s;
      return store.update(tx, s.id, { status: 'CANCELLED', description: s.description, rule: s.rule, action: s.action, next: null });
    });
  }

  async runs(call: CallContext, id: string, q: { limit: number; cursor?: string | undefined }): Promise<{ items: RunRow[]; nextCursor: string | null }> {
    const s = await this.get(call, id);
    const rows = await store.listRuns(this.db, s.companyId, s.id, { limit: q.limit + 1, ...(q.cursor ? { beforeSeq: Number(q.cursor) } : {}) });
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > q.limit && last ? String(last.seq) : null };
  }

  /** The company's ACTIVE schedules' runs due in the next `days`, against the wallets' balances now. */
  async projection(call: CallContext, days: number): Promise<Projection> {
    const { companyId } = readerOf(call);
    const schedules = await store.active(this.db, companyId);
    const { wallets } = await this.ledger.getBalances({ ivaApplicable: false }, call);
    const available = {
      BREB: wallets.find((w) => w.rail === ledgerV1.Rail.BREB)?.availableCents ?? 0n,
      ACH: wallets.find((w) => w.rail === ledgerV1.Rail.ACH)?.availableCents ?? 0n,
    };
    const from = this.clock.now();
    // A send to a counterparty takes from the counterparty's rail (a deleted one: not counted as either, it will fail).
    const rails = new Map<string, 'BREB' | 'ACH'>();
    if (this.transfer) {
      for (const id of counterpartiesNamed(schedules)) {
        const c = await this.transfer.getCounterparty({ id }, call).catch(() => undefined);
        if (c && (c.rail === 'BREB' || c.rail === 'ACH')) rails.set(id, c.rail);
      }
    }
    return projectRuns(schedules, available, from, new Date(from.getTime() + days * 86_400_000), rails);
  }

  /** The schedule's next runs (up to `count`), from its next one. */
  static upcoming(s: ScheduleRow, count: number): NextRun[] {
    if (!s.next) return [];
    const first = s.next;
    const rest = upcomingRuns(ruleOf(s.rule), { seq: first.seq, nominalAt: new Date(first.nominalAt) }, count - 1);
    return [first, ...rest.map((r) => storedNext(r)!)];
  }
}

function normalizedRecurrence(r: CreateScheduleInput['recurrence']): StoredRule['recurrence'] {
  return r.kind === 'ONCE' ? { kind: 'ONCE', executeAt: new Date(String(r.executeAt)).toISOString() } : { ...r };
}

/** The rules' own checks, with the API's field paths (a recurrence's fields under `recurrence.`). */
function checkRule(p: Problems, rule: StoredRule, opts: { ended?: boolean } = {}): void {
  const inner = new Problems();
  checkScheduleRule(inner, ruleOf(rule));
  if (inner.empty) return;
  try {
    inner.throwIfAny();
  } catch (err) {
    const fields = ((err as AppError).details?.fields ?? []) as Array<{ path: string; message: string }>;
    for (const f of fields) {
      // A schedule that already ran names no run "between its start and its end" once its end passed: that is what the new end says.
      if (opts.ended && f.path === 'recurrence') continue;
      p.add(RECURRENCE_FIELDS.has(f.path) ? `recurrence.${f.path}` : f.path, f.message);
    }
  }
}

function encodeCursor(s: ScheduleRow): string {
  return Buffer.from(`${s.createdAt}|${s.id}`, 'utf8').toString('base64url');
}

function decodeCursor(c: string): { createdAt: string; id: string } {
  const [createdAt, id] = Buffer.from(c, 'base64url').toString('utf8').split('|');
  if (!createdAt || !id || Number.isNaN(Date.parse(createdAt)) || !/^[0-9a-f-]{36}$/.test(id))
    throw invalidRequest([{ path: 'cursor', message: 'No es un cursor de esta lista.' }]);
  return { createdAt, id };
}
