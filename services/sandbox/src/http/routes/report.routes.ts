import type { Router } from '@koa/router';
import { stringify, type Stringifier } from 'csv-stringify';
import type { ParameterizedContext } from 'koa';
import { z } from 'zod';
import type { DiscrepancyInput, ReportSink } from '../../app/settlement-reports.js';
import {
  DISCREPANCY_KINDS,
  RAIL_STATUSES,
  REPORT_RAILS,
  isReportDate,
  type Discrepancy,
  type LineStatus,
  type ReportRail,
} from '../../domain/settlement-report.js';
import type { SandboxHttpDeps } from '../context.js';
import { invalidRequest, parse, readJson, text } from '../http-input.js';

/** A JSON integer of centavos that a discrepancy may set: 0 … 2^53-1. */
const cents = z
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .transform((n) => BigInt(n));
const ref = z.string().min(1).max(64);
const ALL_STATUSES = ['COMPLETED', 'FAILED', 'PAID', 'REVERSED', 'REFUNDED', 'RECEIVED', 'RETURNED'] as const;
const status = z.enum(ALL_STATUSES);

const discrepancyBody = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({ kind: z.literal('missing'), ref, lineStatus: status.optional() }),
    z.strictObject({ kind: z.literal('duplicate'), ref, lineStatus: status.optional() }),
    z.strictObject({ kind: z.literal('late_value_date'), ref, lineStatus: status.optional() }),
    z.strictObject({ kind: z.literal('status'), ref, lineStatus: status.optional(), status }),
    z
      .strictObject({ kind: z.literal('amount'), ref, lineStatus: status.optional(), amountCents: cents.optional(), feeCents: cents.optional() })
      .refine((b) => b.amountCents !== undefined || b.feeCents !== undefined, { message: 'Indique amountCents o feeCents.', path: ['amountCents'] }),
    z.strictObject({
      kind: z.literal('extra'),
      amountCents: cents.optional(),
      feeCents: cents.optional(),
      direction: z.enum(['IN', 'OUT']).optional(),
      status: status.optional(),
      counterparty: text(150).optional(),
    }),
    z
      .strictObject({
        kind: z.literal('trailer'),
        lines: z.int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
        amountCents: cents.optional(),
        feeCents: cents.optional(),
      })
      .refine((b) => b.lines !== undefined || b.amountCents !== undefined || b.feeCents !== undefined, {
        message: 'Indique lines, amountCents o feeCents.',
        path: ['lines'],
      }),
  ],
  { error: () => `Debe ser uno de ${DISCREPANCY_KINDS.join(', ')}.` },
);

const REPORT_FILE = /^(.*)\.csv$/;

/** The rail and date of a report URL: 400 INVALID_REQUEST naming `path.rail` and/or `path.date`. */
function reportOf(ctx: ParameterizedContext, dateParam: string): { rail: ReportRail; date: string } {
  const rail = String(ctx.params.rail ?? '');
  const date = dateParam;
  const fields: Array<{ path: string; message: string }> = [];
  if (!(REPORT_RAILS as readonly string[]).includes(rail)) fields.push({ path: 'path.rail', message: `Debe ser uno de ${REPORT_RAILS.join(', ')}.` });
  if (!isReportDate(date)) fields.push({ path: 'path.date', message: 'Debe ser una fecha real AAAA-MM-DD (el reporte: AAAA-MM-DD.csv).' });
  if (fields.length > 0) throw invalidRequest(fields);
  return { rail: rail as ReportRail, date };
}

/** Statuses a discrepancy names must be the report's own (a PSE report has no COMPLETED). */
function checkStatuses(rail: ReportRail, b: { status?: LineStatus; lineStatus?: LineStatus }): void {
  const allowed = RAIL_STATUSES[rail];
  const fields = (['status', 'lineStatus'] as const)
    .filter((f) => b[f] !== undefined && !allowed.includes(b[f]!))
    .map((f) => ({ path: f, message: `Debe ser uno de ${allowed.join(', ')} en el reporte ${rail}.` }));
  if (fields.length > 0) throw invalidRequest(fields);
}

function discrepancyView(d: Discrepancy): Record<string, unknown> {
  const { rail, date, createdAt, id, ...spec } = d;
  const fields = Object.fromEntries(Object.entries(spec).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]));
  return { id, rail, date, ...fields, createdAt };
}

/** The reader went away: the rendering stops and gives its connection back (not an error). */
class ReportAborted extends Error {
  constructor() {
    super('the report download was aborted');
  }
}

/** Waits for the stream to take more; rejects when it was destroyed (the client went away). */
function drained(s: Stringifier): Promise<void> {
  if (s.destroyed) return Promise.reject(new ReportAborted());
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      s.off('drain', onDrain);
      s.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new ReportAborted());
    s.on('drain', onDrain);
    s.on('close', onClose);
  });
}

/**
 * The providers' daily settlement reports (`GET /sandbox/reports/{rail}/{date}.csv`, streamed)
 * and their discrepancy switches.
 */
export function reportRoutes(router: Router, d: SandboxHttpDeps): void {
  router.get('/sandbox/reports/:rail/:file', async (ctx) => {
    // The date without `.csv` (or with another extension) is as bad as no date.
    const { rail, date } = reportOf(ctx, REPORT_FILE.exec(String(ctx.params.file ?? ''))?.[1] ?? '');
    // RFC 4180: CRLF line ends, quotes only where a field needs them.
    const csv = stringify({ record_delimiter: 'windows' });
    let signalReady!: () => void;
    const ready = new Promise<void>((resolve) => {
      signalReady = resolve;
    });
    const sink: ReportSink = {
      ready: () => signalReady(),
      async write(records) {
        if (csv.destroyed) throw new ReportAborted();
        let full = false;
        for (const r of records) if (!csv.write(r)) full = true;
        if (full) await drained(csv);
      },
    };
    const rendering = d.reports.render(rail, date, sink);
    // Until the query runs, a failure is an ordinary JSON error; after that the body is streaming.
    await Promise.race([ready, rendering]);
    rendering.then(
      (trailer) => {
        d.log.debug({ rail, date, lines: trailer.lines }, 'settlement report served');
        csv.end();
      },
      (err: unknown) => {
        if (err instanceof ReportAborted) {
          d.log.debug({ rail, date }, 'settlement report download aborted');
          return;
        }
        d.log.error({ err, rail, date }, 'settlement report failed while streaming');
        csv.destroy(err as Error); // the response is cut short: no trailer, so the reader cannot mistake it for a whole report
      },
    );
    ctx.status = 200;
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="${rail}-settlement-${date}.csv"`);
    ctx.set('Cache-Control', 'no-store');
    // Koa pipes the body and destroys it when the response ends unread (HEAD, a client gone):
    // the rendering then stops at its next write and gives its connection back.
    ctx.body = csv;
  });

  router.get('/sandbox/reports/:rail/:date/discrepancies', async (ctx) => {
    const { rail, date } = reportOf(ctx, String(ctx.params.date ?? ''));
    ctx.body = { items: (await d.reports.list(rail, date)).map(discrepancyView) };
  });

  router.post('/sandbox/reports/:rail/:date/discrepancies', async (ctx) => {
    const { rail, date } = reportOf(ctx, String(ctx.params.date ?? ''));
    const b = parse(discrepancyBody, await readJson(ctx.req)) as DiscrepancyInput;
    checkStatuses(rail, b as { status?: LineStatus; lineStatus?: LineStatus });
    const created = await d.reports.inject(rail, date, b);
    d.log.info({ rail, date, kind: created.kind, id: created.id }, 'settlement report discrepancy injected');
    ctx.status = 201;
    ctx.body = discrepancyView(created);
  });

  router.delete('/sandbox/reports/:rail/:date/discrepancies', async (ctx) => {
    const { rail, date } = reportOf(ctx, String(ctx.params.date ?? ''));
    ctx.body = { deleted: await d.reports.clear(rail, date) };
  });

  router.delete('/sandbox/reports/:rail/:date/discrepancies/:id', async (ctx) => {
    const { rail, date } = reportOf(ctx, String(ctx.params.date ?? ''));
    ctx.body = { deleted: await d.reports.clear(rail, date, String(ctx.params.id ?? '')) };
  });
}
