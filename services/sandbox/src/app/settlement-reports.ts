import { randomBytes } from 'node:crypto';
import {
  EXTRA_DEFAULTS,
  REPORT_COLUMNS,
  TrailerTotals,
  addDays,
  applyToLine,
  bogotaDayRange,
  extraLines,
  lateRefs,
  lineRecord,
  trailerRecord,
  type Direction,
  type Discrepancy,
  type DiscrepancySpec,
  type LineDiscrepancy,
  type LineStatus,
  type ReportLine,
  type ReportRail,
  type Trailer,
} from '../domain/settlement-report.js';
import { ProviderError } from './errors.js';
import type { ReportBook } from './ports.js';

/** Where a rendered report goes: CSV records, in order, with back-pressure. */
export interface ReportSink {
  /**
   * Called once, before the first record, when the report is known to be servable (the date is
   * published and the query is running): until then a failure is an ordinary error answer.
   */
  ready(): void;
  /** Resolves when the sink can take more (a slow reader holds the cursor back). */
  write(records: ReadonlyArray<readonly string[]>): Promise<void>;
}

/** An `extra` discrepancy as asked for; the provider id and the defaults are filled in here. */
export interface ExtraInput {
  kind: 'extra';
  amountCents?: bigint;
  feeCents?: bigint;
  direction?: Direction;
  status?: LineStatus;
  counterparty?: string;
}
export type DiscrepancyInput = LineDiscrepancy | ExtraInput | Extract<DiscrepancySpec, { kind: 'trailer' }>;

export const reportNotAvailable = () => new ProviderError(404, 'REPORT_NOT_AVAILABLE', 'El reporte de esa fecha aún no se ha publicado.');

/** Lines read from the cursor per round trip. */
const DEFAULT_BATCH = 1000;
const EXTRA_AMOUNT_CENTS = 100_000n;
const EXTRA_COUNTERPARTY = 'SIN IDENTIFICAR';

/**
 * The providers' daily settlement reports: render one (the provider's records of that Bogotá
 * day, shaped by the injected discrepancies, then the trailer of the lines as served) and
 * inject, list and clear discrepancies.
 */
export class SettlementReports {
  constructor(
    private readonly store: ReportBook,
    private readonly batchSize = DEFAULT_BATCH,
  ) {}

  /**
   * Writes the header, the lines and the trailer of `rail`'s report for `date` into `sink`,
   * from one database snapshot: first the lines a `late_value_date` discrepancy moved in from
   * the day before, then the day's own lines in settlement order, then the injected extras.
   * 404 REPORT_NOT_AVAILABLE for a date after today (Bogotá, database clock).
   */
  render(rail: ReportRail, date: string, sink: ReportSink): Promise<Trailer> {
    return this.store.snapshot(async (s) => {
      if (date > (await s.today())) throw reportNotAvailable();
      const discrepancies = await s.discrepancies(rail, date);
      const previous = addDays(date, -1);
      const previousDiscrepancies = await s.discrepancies(rail, previous);
      const movedIn = (await s.linesWithRefs(rail, previous, bogotaDayRange(previous), lateRefs(previousDiscrepancies))).flatMap(
        (l) => applyToLine(l, previousDiscrepancies).nextDay,
      );

      const totals = new TrailerTotals();
      const records = (lines: readonly ReportLine[]) =>
        lines.map((l) => {
          totals.add(l);
          return lineRecord(l);
        });
      let started = false;
      const start = async () => {
        if (started) return;
        started = true;
        sink.ready();
        await sink.write([REPORT_COLUMNS, ...records(movedIn)]);
      };
      await s.streamLines(rail, date, bogotaDayRange(date), this.batchSize, async (lines) => {
        await start();
        await sink.write(records(lines.flatMap((l) => applyToLine(l, discrepancies).today)));
      });
      await start();
      await sink.write(records(extraLines(date, discrepancies)));
      const stated = totals.stated(discrepancies);
      await sink.write([trailerRecord(stated)]);
      return stated;
    });
  }

  /**
   * Stores a discrepancy for the report of `rail` on `date`. A kind that acts on a line needs
   * that line in the day's report as the provider's records have it (404 REPORT_LINE_NOT_FOUND).
   */
  async inject(rail: ReportRail, date: string, input: DiscrepancyInput): Promise<Discrepancy> {
    let spec: DiscrepancySpec;
    if (input.kind === 'extra') {
      const defaults = EXTRA_DEFAULTS[rail];
      spec = {
        kind: 'extra',
        providerId: `${defaults.prefix}${randomBytes(12).toString('hex')}`,
        direction: input.direction ?? defaults.direction,
        amountCents: input.amountCents ?? EXTRA_AMOUNT_CENTS,
        feeCents: input.feeCents ?? 0n,
        status: input.status ?? defaults.status,
        counterparty: input.counterparty ?? EXTRA_COUNTERPARTY,
      };
    } else {
      spec = input;
      if (input.kind !== 'trailer' && !(await this.store.hasLine(rail, bogotaDayRange(date), input.ref, input.lineStatus))) {
        throw new ProviderError(404, 'REPORT_LINE_NOT_FOUND', 'El reporte de ese día no tiene una línea con esa referencia.', {
          ref: input.ref,
          ...(input.lineStatus ? { lineStatus: input.lineStatus } : {}),
        });
      }
    }
    return this.store.insertDiscrepancy(`dsc_${randomBytes(12).toString('hex')}`, rail, date, spec);
  }

  list(rail: ReportRail, date: string): Promise<Discrepancy[]> {
    return this.store.discrepancies(rail, date);
  }

  /** Deletes every discrepancy of the report, or one (404 DISCREPANCY_NOT_FOUND when it is not this report's). */
  async clear(rail: ReportRail, date: string, id?: string): Promise<number> {
    const n = await this.store.deleteDiscrepancies(rail, date, id);
    if (id !== undefined && n === 0) throw new ProviderError(404, 'DISCREPANCY_NOT_FOUND', 'No existe esa discrepancia en este reporte.');
    return n;
  }
}
