import { randomBytes } from 'node:crypto';
import type { exceptionsV1 } from '@wallet/proto';
import { AppError, Problems } from '../errors/catalogue.js';

/**
 * Money exceptions (CONTRACT §10): a provider outcome that contradicts a service's state, kept for
 * an operator. Each owning service (transfer, pse-deposit) has the same table in its own schema,
 * and the gateway merges their listings with one cursor, so the table, its queries and the cursor
 * live here once.
 */
export type ExceptionStatus = 'OPEN' | 'RESOLVING' | 'RESOLVED';

export interface NewMoneyException {
  id: string;
  kind: string;
  companyId: string;
  rail: string;
  resourceId: string;
  ours: Record<string, unknown>;
  theirs: Record<string, unknown>;
}

export interface MoneyException extends NewMoneyException {
  status: ExceptionStatus;
  openedAt: Date;
  resolvedAt: Date | null;
  resolvedBy: string | null;
  action: string | null;
  note: string | null;
}

/** `exc_` + 32 hex. */
export const EXCEPTION_ID = /^exc_[0-9a-f]{32}$/;
export const newExceptionId = (): string => `exc_${randomBytes(16).toString('hex')}`;

/** The table (one per kind and resource; `opened_at` to the millisecond: the gateway merges on it). */
export function moneyExceptionsDdl(schema: string): string[] {
  return [
    `create table ${schema}.money_exceptions (
        id text primary key,
        kind text not null,
        status text not null default 'OPEN' check (status in ('OPEN', 'RESOLVING', 'RESOLVED')),
        company_id text not null,
        rail text not null,
        resource_id text not null,
        ours jsonb not null,
        theirs jsonb not null,
        opened_at timestamptz not null default date_trunc('milliseconds', now()),
        resolved_at timestamptz,
        resolved_by text,
        action text,
        note text,
        constraint money_exceptions_kind_resource_uq unique (kind, resource_id)
      )`,
    `create index money_exceptions_listing_idx on ${schema}.money_exceptions (opened_at desc, id desc)`,
    `create index money_exceptions_open_idx on ${schema}.money_exceptions (kind) where status <> 'RESOLVED'`,
  ];
}

/** Runs one statement with `$n` placeholders (each store passes its own prepared-statement runner). */
export type RunSql = <R>(sql: string, params: unknown[]) => Promise<R[]>;

interface Row {
  id: string;
  kind: string;
  status: ExceptionStatus;
  company_id: string;
  rail: string;
  resource_id: string;
  ours: Record<string, unknown>;
  theirs: Record<string, unknown>;
  opened_at: Date | string;
  resolved_at: Date | string | null;
  resolved_by: string | null;
  action: string | null;
  note: string | null;
}
const toException = (r: Row): MoneyException => ({
  id: r.id,
  kind: r.kind,
  status: r.status,
  companyId: r.company_id,
  rail: r.rail,
  resourceId: r.resource_id,
  ours: r.ours,
  theirs: r.theirs,
  openedAt: new Date(r.opened_at),
  resolvedAt: r.resolved_at === null ? null : new Date(r.resolved_at),
  resolvedBy: r.resolved_by,
  action: r.action,
  note: r.note,
});

/** What a service's use cases need of its money exceptions (its store exposes it as `exceptions`). */
/** A page of exceptions: filters, and only these resources (the ones of one external movement). */
export interface ExceptionListQuery {
  status?: string;
  kind?: string;
  limit: number;
  before?: { openedAt: string; id: string };
  resourceIds?: readonly string[];
  /** Only this exception (by its primary key). */
  id?: string;
}

/** ListExceptions as every owner takes it (GET /admin/exceptions, and the gateway's look-up by id). */
export interface ExceptionListRequest {
  status?: string | undefined;
  kind?: string | undefined;
  limit?: number;
  cursor?: string | undefined;
  /** Only the exceptions about this external movement. */
  movement?: string | undefined;
  /** Only this exception. */
  id?: string | undefined;
}

export interface MoneyExceptionStore {
  /** One per (kind, resource): a repeat answers the first, `opened: false`. */
  open(e: NewMoneyException): Promise<{ exception: MoneyException; opened: boolean }>;
  /** Newest first (opened_at desc, id desc), strictly before `before`; each with the cursor that follows it. */
  list(q: ExceptionListQuery): Promise<Array<MoneyException & { cursor: string }>>;
  get(id: string): Promise<MoneyException | undefined>;
  /** OPEN → RESOLVING for this action (the same action again resumes an interrupted one). Undefined otherwise. */
  begin(id: string, r: { action: string; note: string; resolvedBy: string }): Promise<MoneyException | undefined>;
  /** RESOLVING → RESOLVED, after the correcting entry (if any) was posted. */
  finish(id: string): Promise<MoneyException | undefined>;
  /** RESOLVING (this action) → OPEN: the action was refused before it moved anything (a refusal the operator must see). */
  reopen(id: string, action: string): Promise<void>;
  countOpen(): Promise<Array<{ kind: string; n: number }>>;
}

/** The queries of one service's `<schema>.money_exceptions`. */
export class MoneyExceptionsTable implements MoneyExceptionStore {
  private readonly t: string;

  constructor(
    private readonly run: RunSql,
    schema: string,
  ) {
    this.t = `${schema}.money_exceptions`;
  }

  async open(e: NewMoneyException): Promise<{ exception: MoneyException; opened: boolean }> {
    const rows = await this.run<Row>(
      `insert into ${this.t} (id, kind, company_id, rail, resource_id, ours, theirs)
       values ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb) on conflict (kind, resource_id) do nothing returning *`,
      [e.id, e.kind, e.companyId, e.rail, e.resourceId, JSON.stringify(e.ours), JSON.stringify(e.theirs)],
    );
    if (rows[0]) return { exception: toException(rows[0]), opened: true };
    const existing = await this.run<Row>(`select * from ${this.t} where kind = $1 and resource_id = $2`, [e.kind, e.resourceId]);
    return { exception: toException(existing[0]!), opened: false };
  }

  async list(q: ExceptionListQuery): Promise<Array<MoneyException & { cursor: string }>> {
    const rows = await this.run<Row & { cursor_ts: string }>(
      `select *, to_char(opened_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts from ${this.t}
        where ($1::text is null or status = $1) and ($2::text is null or kind = $2)
          and ($3::timestamptz is null or (opened_at, id) < ($3::timestamptz, $4::text))
          and ($6::text[] is null or resource_id = any($6::text[])) and ($7::text is null or id = $7)
        order by opened_at desc, id desc limit $5`,
      [q.status ?? null, q.kind ?? null, q.before?.openedAt ?? null, q.before?.id ?? null, q.limit, q.resourceIds ? [...q.resourceIds] : null, q.id ?? null],
    );
    return rows.map((r) => ({ ...toException(r), cursor: `${r.cursor_ts}|${r.id}` }));
  }

  async get(id: string): Promise<MoneyException | undefined> {
    const rows = await this.run<Row>(`select * from ${this.t} where id = $1`, [id]);
    return rows[0] && toException(rows[0]);
  }

  async begin(id: string, r: { action: string; note: string; resolvedBy: string }): Promise<MoneyException | undefined> {
    const rows = await this.run<Row>(
      // Resuming an interrupted resolution (RESOLVING, same action) keeps the first note and resolver:
      // the correcting entry's reason is built from them, and the ledger refuses another body under its key.
      `update ${this.t} set status = 'RESOLVING', action = $1,
          note = case when status = 'RESOLVING' then note else $2 end, resolved_by = case when status = 'RESOLVING' then resolved_by else $3 end
        where id = $4 and (status = 'OPEN' or (status = 'RESOLVING' and action = $1)) returning *`,
      [r.action, r.note, r.resolvedBy, id],
    );
    return rows[0] && toException(rows[0]);
  }

  async finish(id: string): Promise<MoneyException | undefined> {
    const rows = await this.run<Row>(`update ${this.t} set status = 'RESOLVED', resolved_at = now() where id = $1 and status = 'RESOLVING' returning *`, [id]);
    return rows[0] && toException(rows[0]);
  }

  async reopen(id: string, action: string): Promise<void> {
    await this.run(
      `update ${this.t} set status = 'OPEN', action = null, note = null, resolved_by = null where id = $1 and status = 'RESOLVING' and action = $2`,
      [id, action],
    );
  }

  async countOpen(): Promise<Array<{ kind: string; n: number }>> {
    const rows = await this.run<{ kind: string; n: string }>(`select kind, count(*)::text as n from ${this.t} where status <> 'RESOLVED' group by kind`, []);
    return rows.map((r) => ({ kind: r.kind, n: Number(r.n) }));
  }
}

/**
 * One page of a service's exceptions for `ListExceptions`: filters checked (400 naming each bad
 * one), newest first, `nextCursor` = base64url of "<opened_at, microseconds>|<id>" of the last item
 * (the format every service and the gateway share).
 */
export async function listExceptionsPage<V>(
  list: MoneyExceptionStore['list'],
  kinds: readonly string[],
  view: (e: MoneyException) => V,
  q: {
    status?: string | undefined;
    kind?: string | undefined;
    limit?: number;
    cursor?: string | undefined;
    resourceIds?: readonly string[] | undefined;
    /** Only this exception: an id of another shape is no exception of anyone's (an empty page). */
    id?: string | undefined;
  },
): Promise<{ items: V[]; nextCursor: string | null }> {
  const p = new Problems();
  const status = q.status ? q.status.toUpperCase() : undefined;
  if (status && !['OPEN', 'RESOLVING', 'RESOLVED'].includes(status)) p.add('status', 'Debe ser OPEN, RESOLVING o RESOLVED.');
  if (q.kind && !kinds.includes(q.kind)) p.add('kind', `Debe ser uno de ${kinds.join(', ')}.`);
  const limit = q.limit && q.limit > 0 ? q.limit : 50;
  if (limit > 100) p.add('limit', 'Debe ser a lo sumo 100.');
  let before: { openedAt: string; id: string } | undefined;
  if (q.cursor) {
    const [at, id] = Buffer.from(q.cursor, 'base64url').toString('utf8').split('|');
    if (!id || !EXCEPTION_ID.test(id) || !at || Number.isNaN(Date.parse(at))) p.add('cursor', 'No es un cursor de este listado.');
    else before = { openedAt: at, id };
  }
  p.throwIfAny();
  if (q.resourceIds && q.resourceIds.length === 0) return { items: [], nextCursor: null };
  if (q.id !== undefined && !EXCEPTION_ID.test(q.id)) return { items: [], nextCursor: null };
  const rows = await list({
    ...(q.id !== undefined ? { id: q.id } : {}),
    ...(status ? { status } : {}),
    ...(q.kind ? { kind: q.kind } : {}),
    limit: limit + 1,
    ...(before ? { before } : {}),
    ...(q.resourceIds ? { resourceIds: q.resourceIds } : {}),
  });
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items: items.map(({ cursor: _c, ...e }) => view(e)),
    nextCursor: rows.length > limit && last ? Buffer.from(last.cursor).toString('base64url') : null,
  };
}

/** An exception as listed and answered: with the resolutions its kind admits. */
export interface ExceptionView extends MoneyException {
  actions: readonly string[];
  /** The external movement it is about (`externalMovementRef`), when its owner knows it. */
  movement?: string;
}

/** The wire form (`wallet.exceptions.v1.MoneyException`, shared by every owning service). */
export function moneyExceptionToProto(e: ExceptionView): exceptionsV1.MoneyException {
  return {
    id: e.id,
    kind: e.kind,
    status: e.status,
    rail: e.rail,
    resourceId: e.resourceId,
    companyId: e.companyId,
    oursJson: JSON.stringify(e.ours),
    theirsJson: JSON.stringify(e.theirs),
    openedAt: e.openedAt,
    ...(e.resolvedAt ? { resolvedAt: e.resolvedAt } : {}),
    ...(e.resolvedBy ? { resolvedBy: e.resolvedBy } : {}),
    ...(e.action ? { action: e.action } : {}),
    ...(e.note ? { note: e.note } : {}),
    actions: [...e.actions],
    ...(e.movement ? { movement: e.movement } : {}),
  };
}

/**
 * POST /admin/exceptions/{id}/resolve, the part every owning service shares: the input checked (a
 * malformed or unknown id reads EXCEPTION_NOT_FOUND; note, resolver and an action the kind admits),
 * the exception won for the action (OPEN → RESOLVING, a compare-and-set: two operators cannot
 * resolve it two ways; the same action again resumes an interrupted one), then `correct` (the
 * service's correcting entry, idempotent; it throws to leave the exception RESOLVING), then RESOLVED.
 */
/** Errors of a resolution's money step that leave nothing done, so the exception is OPEN again. */
const REFUSALS_THAT_REOPEN: ReadonlySet<string> = new Set(['MOVEMENT_ALREADY_CORRECTED', 'CASE_NOT_FINAL']);

export async function resolveMoneyException(
  exceptions: Pick<MoneyExceptionStore, 'get' | 'begin' | 'finish' | 'reopen'>,
  input: { id: string; action: string; note: string; resolvedBy: string },
  actionsOf: (kind: string) => readonly string[],
  correct: (won: MoneyException, note: string) => Promise<void>,
): Promise<ExceptionView> {
  if (!EXCEPTION_ID.test(input.id)) throw new AppError('EXCEPTION_NOT_FOUND');
  const note = input.note?.trim() ?? '';
  const p = new Problems();
  if (!note || [...note].length > 500) p.add('note', 'Es obligatoria, de a lo sumo 500 caracteres.');
  if (!input.resolvedBy || input.resolvedBy.length > 200) p.add('resolvedBy', 'Es obligatorio.');
  const current = await exceptions.get(input.id);
  if (!current) throw new AppError('EXCEPTION_NOT_FOUND');
  const allowed = actionsOf(current.kind);
  if (!allowed.includes(input.action)) p.add('action', `Debe ser una de ${allowed.join(', ')} para ${current.kind}.`);
  p.throwIfAny();

  const won = await exceptions.begin(input.id, { action: input.action, note, resolvedBy: input.resolvedBy });
  if (!won) throw new AppError('EXCEPTION_NOT_OPEN');
  // The note the exception was won with (a resumed resolution keeps the first one).
  try {
    await correct(won, won.note ?? note);
  } catch (err) {
    // Refused before anything moved (the movement is another case's, or not final yet: docs/reconciliation.md "One case per external movement"):
    // the exception is open again, for this or another action, and the operator is told why.
    if (err instanceof AppError && REFUSALS_THAT_REOPEN.has(err.code)) await exceptions.reopen(input.id, input.action);
    throw err;
  }
  const done = (await exceptions.finish(input.id)) ?? (await exceptions.get(input.id))!;
  return { ...done, actions: allowed };
}
