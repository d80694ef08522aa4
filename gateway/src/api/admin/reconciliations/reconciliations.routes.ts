import { z } from 'zod';
import { queryInt } from '../../../http/validation.js';
import { AppError, bogotaDateOf, reconciliationBreakView, reconciliationRunView } from '@wallet/platform';
import { adminActor } from '../../../auth/admin-principal.js';
import type { ReconciliationClient } from '../../../clients/reconciliation-client.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { isoDate } from '../../../http/schemas.js';

/** The rails whose provider publishes a daily settlement report (docs/reconciliation.md). */
export const RECONCILIATION_RAILS = ['breb', 'ach', 'pse', 'breb-inbound'] as const;
export const RUN_STATUSES = ['RUNNING', 'RECONCILED', 'REJECTED', 'FAILED'] as const;
export const BREAK_KINDS = ['missing_at_provider', 'missing_in_our_books', 'amount_mismatch', 'status_mismatch', 'duplicate', 'value_date_mismatch'] as const;
export const BREAK_STATUSES = ['OPEN', 'RESOLVED'] as const;

const RUN_ID = /^run_[0-9a-f]{32}$/;
const cents = (description: string) =>
  z
    .string()
    .regex(/^-?\d+$/)
    .meta({ description: `${description} Centavos, as a decimal string.` });
const count = (description: string) => z.number().int().min(0).meta({ description });

/** A calendar date YYYY-MM-DD that exists (2026-02-30 does not). */
const calendarDate = () =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'Debe ser una fecha AAAA-MM-DD.')
    .refine((s) => {
      const d = new Date(`${s}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
    }, 'No es una fecha del calendario.')
    .meta({ format: 'date' });

export const ReconciliationRunSchema = z
  .object({
    id: z.string().meta({ description: '`run_` + 32 hex.' }),
    rail: z.enum(RECONCILIATION_RAILS),
    date: z.string().meta({ format: 'date', description: 'The day reconciled (Bogotá).' }),
    trigger: z
      .enum(['SCHEDULE', 'ON_DEMAND', 'RERUN'])
      .meta({ description: '`SCHEDULE` (the daily run), `ON_DEMAND` (an operator), `RERUN` (a money exception resolved by `rerun`).' }),
    status: z.enum(RUN_STATUSES).meta({
      description:
        '`RUNNING`; `RECONCILED` (the report was read and matched, breaks or not); `REJECTED` (the report itself is unusable, see `rejectReason`); `FAILED` (the report could not be fetched or read, see `detail`).',
    }),
    requestedBy: z.string().meta({ description: '`scheduler`, `operator:<id>` or `admin`.' }),
    startedAt: isoDate(),
    finishedAt: isoDate().nullable(),
    coversUntil: isoDate().nullable().meta({
      description:
        "The instant the report covers its day up to: the run's start for a same-day run, else the end of the day (Bogotá). `ledger:check` counts later postings of the day as not reconciled yet.",
    }),
    rejectReason: z
      .string()
      .nullable()
      .meta({ description: 'REJECTED: EMPTY, BAD_HEADER, MALFORMED_CSV, MALFORMED_LINE, MISSING_TRAILER, CONTENT_AFTER_TRAILER or TRAILER_MISMATCH.' }),
    detail: z.string().nullable().meta({ description: 'REJECTED: what differs; FAILED: why (without internals).' }),
    report: z.object({
      lines: count("Lines of the provider's report (duplicates included)."),
      amountCents: cents("Sum of the lines' amounts."),
      feeCents: cents("Sum of the lines' fees."),
      netCents: cents("The report's effect on the rail's clearing account (signed)."),
    }),
    ours: z.object({
      count: count('Our settled records of the day.'),
      amountCents: cents('Their amounts.'),
      netCents: cents("Their effect on the rail's clearing account (signed)."),
    }),
    matched: z.object({ count: count('Records matched line for line.'), amountCents: cents('Their amounts.') }),
    breaks: z.object({
      total: count('Breaks this run found (new or still there).'),
      opened: count('Of them, new (each opened a money exception).'),
      byKind: z.record(z.string(), z.number().int().min(0)).meta({ description: 'Breaks by kind (lower case, e.g. `amount_mismatch`).' }),
    }),
  })
  .meta({ id: 'ReconciliationRun' });

export const ReconciliationBreakSchema = z
  .object({
    key: z.string().meta({ description: '`<rail>:<date>:<kind>:<ref>`: the same difference found again keeps its key.' }),
    kind: z.enum(BREAK_KINDS),
    rail: z.enum(RECONCILIATION_RAILS),
    date: z.string().meta({ format: 'date' }),
    ourId: z.string().nullable().meta({ description: 'Our record (transfer id, `dep_…`, inbound payment id); null when we have none.' }),
    providerId: z.string().nullable().meta({ description: "The provider's reference; null when the report has no line." }),
    ours: z.record(z.string(), z.unknown()).meta({ description: 'Our record (amounts as decimal strings); `{}` when missing.' }),
    theirs: z.record(z.string(), z.unknown()).meta({ description: "The provider's line(s); `{}` when missing." }),
    status: z.enum(BREAK_STATUSES),
    runId: z.string().meta({ description: 'The run that found it first.' }),
    lastSeenRunId: z.string().meta({ description: 'The last run that still found it.' }),
    openedAt: isoDate(),
    resolvedAt: isoDate().nullable(),
    resolution: z.string().nullable().meta({
      description:
        '`accept_provider`, `explain`, `rerun` (gone from a corrected report), `superseded` (a later value date) or `linked` (another case corrected its movement).',
    }),
    exceptionId: z.string().meta({ description: 'Its money exception (`exc_…`), resolved through `POST /admin/exceptions/{id}/resolve`.' }),
    differenceCents: cents("The provider's effect on the clearing account minus ours (0 for `value_date_mismatch`)."),
    movement: z.string().nullable().meta({
      description:
        'The external movement it is about (`<rail>:our:<our id>`, `breb-inbound:<provider id>`): one correcting entry per movement, whichever case posts it.',
      example: 'breb:our:2104c478-7604-4ac2-a58d-dd9136a5adcf',
    }),
    adjustmentState: z.enum(['POSTED', 'REVERSING', 'REVERSED']).nullable().meta({
      description: 'Its `accept_provider` adjustment: in force, being undone (a later run no longer finds the difference, or finds another) or undone.',
    }),
    linkedCase: z
      .string()
      .nullable()
      .meta({ description: 'Resolution `linked`: the case (money exception) whose correcting entry of the same movement stands for this break.' }),
  })
  .meta({ id: 'ReconciliationBreak' });

const StartBody = z
  .strictObject({
    rail: z.enum(RECONCILIATION_RAILS),
    date: calendarDate().meta({ description: 'The day to reconcile (Bogotá): today or before.' }),
  })
  .meta({ id: 'StartReconciliationRequest' });

const RunQuery = z.strictObject({
  rail: z.enum(RECONCILIATION_RAILS).optional(),
  date: calendarDate().optional(),
  status: z.enum(RUN_STATUSES).optional(),
  limit: queryInt(1, 100, 50),
  cursor: z.string().max(300).optional(),
});

const BreakQuery = z.strictObject({
  status: z.enum(BREAK_STATUSES).optional(),
  kind: z.enum(BREAK_KINDS).optional(),
  limit: queryInt(1, 100, 50),
  cursor: z.string().max(300).optional(),
});

const RunParams = z.object({ id: z.string().regex(RUN_ID) });

/**
 * Reconciliation with the rails (docs/reconciliation.md): each provider's daily settlement report matched against
 * our settled records by the reconciliation service; operators start a run, follow it, and read
 * the breaks it found (each break is also a money exception, resolved at /admin/exceptions).
 * `today`: the Bogotá date now (a clock for tests).
 */
export function adminReconciliationRoutes(recon: ReconciliationClient, today: () => string = () => bogotaDateOf(new Date())): AnyRoute[] {
  const runLocation = (id: string) => `/admin/reconciliations/${id}`;
  return [
    defineRoute({
      method: 'POST',
      path: '/admin/reconciliations',
      operationId: 'adminStartReconciliation',
      tags: ['Admin'],
      summary: "Reconcile a rail's day now",
      description:
        "Starts a run that fetches the provider's settlement report of that rail and day and matches it against our settled records; it runs in the background: follow it at `Location`. When a run of that rail and day is already under way, that run is answered instead of starting a second one. Running a day again is safe: a break found again keeps its key and its money exception, and breaks a corrected report no longer shows are resolved (`rerun`).",
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      body: StartBody,
      responses: {
        202: {
          description: 'The run (`RUNNING`, or already finished if it was that quick).',
          schema: ReconciliationRunSchema,
          headers: { Location: { description: '`/admin/reconciliations/{id}`: the run.', schema: { type: 'string' } } },
        },
      },
      errors: ['VALIDATION_ERROR', 'REPORT_NOT_AVAILABLE', 'SERVICE_UNAVAILABLE'],
      handler: async ({ body, call, admin }) => {
        if (body.date > today()) {
          throw new AppError('VALIDATION_ERROR', 'La fecha no puede ser posterior a hoy (hora de Bogotá).', {
            fields: [{ path: 'date', message: 'no posterior a hoy (Bogotá)' }],
          });
        }
        const res = await recon.startRun({ rail: body.rail, date: body.date, requestedBy: adminActor(admin!) }, call);
        if (!res.run) throw new AppError('SERVICE_UNAVAILABLE');
        return { status: 202, body: reconciliationRunView(res.run), headers: { Location: runLocation(res.run.id) } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/reconciliations',
      operationId: 'adminListReconciliations',
      tags: ['Admin'],
      summary: 'Reconciliation runs, newest first',
      description: 'Every run (scheduled, on demand, re-runs of a resolution), filtered by rail, day and status.',
      auth: { kind: 'admin' },
      query: RunQuery,
      responses: {
        200: { description: 'Runs; `nextCursor` pages on.', schema: z.object({ items: z.array(ReconciliationRunSchema), nextCursor: z.string().nullable() }) },
      },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const res = await recon.listRuns(
          {
            limit: query.limit,
            ...(query.rail ? { rail: query.rail } : {}),
            ...(query.date ? { date: query.date } : {}),
            ...(query.status ? { status: query.status } : {}),
            ...(query.cursor ? { cursor: query.cursor } : {}),
          },
          call,
        );
        return { status: 200, body: { items: res.items.map(reconciliationRunView), nextCursor: res.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/reconciliations/{id}',
      operationId: 'adminGetReconciliation',
      tags: ['Admin'],
      summary: 'One reconciliation run: its totals and its breaks by kind',
      auth: { kind: 'admin' },
      params: RunParams,
      paramErrors: { id: 'RECONCILIATION_NOT_FOUND' },
      responses: { 200: { description: 'The run.', schema: ReconciliationRunSchema } },
      errors: ['RECONCILIATION_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: reconciliationRunView(await recon.getRun({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/reconciliations/{id}/breaks',
      operationId: 'adminListReconciliationBreaks',
      tags: ['Admin'],
      summary: 'The breaks a run found: both sides and the difference',
      description:
        'The breaks this run found, first or again. Each is also a money exception (`exceptionId`) an operator resolves at `POST /admin/exceptions/{id}/resolve`: `accept_provider`, `explain` or `rerun`.',
      auth: { kind: 'admin' },
      params: RunParams,
      paramErrors: { id: 'RECONCILIATION_NOT_FOUND' },
      query: BreakQuery,
      responses: {
        200: {
          description: 'Breaks; `nextCursor` pages on.',
          schema: z.object({ items: z.array(ReconciliationBreakSchema), nextCursor: z.string().nullable() }),
        },
      },
      errors: ['RECONCILIATION_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, query, call }) => {
        // The run is read alongside (not before) its breaks: an unknown run is a 404, not an empty page.
        const [, res] = await Promise.all([
          recon.getRun({ id: params.id }, call),
          recon.listBreaks(
            {
              runId: params.id,
              limit: query.limit,
              ...(query.status ? { status: query.status } : {}),
              ...(query.kind ? { kind: query.kind } : {}),
              ...(query.cursor ? { cursor: query.cursor } : {}),
            },
            call,
          ),
        ]);
        return { status: 200, body: { items: res.items.map(reconciliationBreakView), nextCursor: res.nextCursor ?? null } };
      },
    }),
  ];
}
