import { AppError, Problems } from '@wallet/platform';
import { BREAK_KINDS } from '../domain/matching.js';
import { REPORT_RAILS, isCalendarDate } from '../domain/report.js';
import type { Cursor, ReconciliationDeps } from './deps.js';
import { RUN_STATUSES, type BreakRecord, type RunRecord } from './ports.js';

const RUN_ID = /^run_[0-9a-f]{32}$/;
const isRail = (r: string) => (REPORT_RAILS as readonly string[]).includes(r);

function page(p: Problems, deps: ReconciliationDeps, q: { limit?: number; cursor?: string | undefined }): { limit: number; cursor?: Cursor } {
  const limit = q.limit && q.limit > 0 ? q.limit : 50;
  if (limit > 100) p.add('limit', 'Debe ser a lo sumo 100.');
  if (!q.cursor) return { limit };
  const cursor = deps.decodeCursor(q.cursor);
  if (!cursor) p.add('cursor', 'No es un cursor de este listado.');
  return cursor ? { limit, cursor } : { limit };
}

/** GetRun: RECONCILIATION_NOT_FOUND for an unknown or malformed id. */
export class GetRun {
  constructor(private readonly deps: ReconciliationDeps) {}

  async execute(id: string): Promise<RunRecord> {
    const run = RUN_ID.test(id) ? await this.deps.runs.get(id) : undefined;
    if (!run) throw new AppError('RECONCILIATION_NOT_FOUND');
    return run;
  }
}

/** ListRuns: newest first, keyset pages, filters checked (400 naming each bad one). */
export class ListRuns {
  constructor(private readonly deps: ReconciliationDeps) {}

  execute(q: {
    rail?: string | undefined;
    date?: string | undefined;
    status?: string | undefined;
    limit?: number;
    cursor?: string | undefined;
  }): Promise<{ items: RunRecord[]; nextCursor: string | null }> {
    const p = new Problems();
    if (q.rail && !isRail(q.rail)) p.add('rail', `Debe ser uno de ${REPORT_RAILS.join(', ')}.`);
    if (q.date && !isCalendarDate(q.date)) p.add('date', 'Debe ser una fecha AAAA-MM-DD.');
    if (q.status && !(RUN_STATUSES as readonly string[]).includes(q.status)) p.add('status', `Debe ser uno de ${RUN_STATUSES.join(', ')}.`);
    const pg = page(p, this.deps, q);
    p.throwIfAny();
    return this.deps.runs.list({ ...(q.rail ? { rail: q.rail } : {}), ...(q.date ? { date: q.date } : {}), ...(q.status ? { status: q.status } : {}), ...pg });
  }
}

/** ListBreaks: newest first, keyset pages; `runId` lists the breaks a run found first or again. */
export class ListBreaks {
  constructor(private readonly deps: ReconciliationDeps) {}

  execute(q: {
    runId?: string | undefined;
    rail?: string | undefined;
    date?: string | undefined;
    status?: string | undefined;
    kind?: string | undefined;
    limit?: number;
    cursor?: string | undefined;
  }): Promise<{ items: BreakRecord[]; nextCursor: string | null }> {
    const p = new Problems();
    if (q.runId && !RUN_ID.test(q.runId)) p.add('runId', 'Debe ser el id de una conciliación (run_…).');
    if (q.rail && !isRail(q.rail)) p.add('rail', `Debe ser uno de ${REPORT_RAILS.join(', ')}.`);
    if (q.date && !isCalendarDate(q.date)) p.add('date', 'Debe ser una fecha AAAA-MM-DD.');
    if (q.status && !['OPEN', 'RESOLVED'].includes(q.status)) p.add('status', 'Debe ser OPEN o RESOLVED.');
    if (q.kind && !(BREAK_KINDS as readonly string[]).includes(q.kind)) p.add('kind', `Debe ser uno de ${BREAK_KINDS.join(', ')}.`);
    const pg = page(p, this.deps, q);
    p.throwIfAny();
    return this.deps.breaks.list({
      ...(q.runId ? { runId: q.runId } : {}),
      ...(q.rail ? { rail: q.rail } : {}),
      ...(q.date ? { date: q.date } : {}),
      ...(q.status ? { status: q.status } : {}),
      ...(q.kind ? { kind: q.kind } : {}),
      ...pg,
    });
  }
}
