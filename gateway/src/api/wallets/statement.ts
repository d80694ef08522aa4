import { Readable } from 'node:stream';
import { AppError, bogotaClock, instantFromDate, instantMicros, type CallContext, type Instant } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { LedgerClient } from '../../clients/ledger-client.js';
import { movementStatusToApi, movementTypeToApi, railFromProto, railToProto, type ApiRail } from './presenters.js';
import { bogotaCell, bogotaIso, CSV_BOM, csvCell as cell, csvRow as row, pesos } from '../csv-cells.js';

/** The most lines a JSON (or PDF) statement carries; more → 422 asking for format=csv (which streams). */
export const MAX_JSON_STATEMENT_LINES = 10_000;
/** The longest period a statement covers. */
export const MAX_STATEMENT_DAYS = 366;
/** Lines per batch read from the ledger's stream. */
const BATCH = 1_000;

/** The bounds are instants (six fraction digits), compared by the ledger at full precision. */
const DAY_US = 86_400_000_000n;

/** A statement's period: (from, to], `to` not in the future, at most MAX_STATEMENT_DAYS days (422 VALIDATION_ERROR naming the field). */
export function checkStatementPeriod(from: Instant, to: Instant, now: Date): void {
  const invalid = (message: string, path: string, field: string) => new AppError('VALIDATION_ERROR', message, { fields: [{ path, message: field }] });
  const fromUs = instantMicros(from),
    toUs = instantMicros(to);
  if (fromUs >= toUs) throw invalid('La fecha inicial (from) debe ser anterior a la final (to).', 'query.from', 'debe ser anterior a to');
  if (toUs > instantMicros(instantFromDate(now))) throw invalid('La fecha final (to) no puede estar en el futuro.', 'query.to', 'no puede estar en el futuro');
  if (toUs - fromUs > BigInt(MAX_STATEMENT_DAYS) * DAY_US) {
    throw invalid(`El periodo no puede superar ${MAX_STATEMENT_DAYS} días.`, 'query.to', `a lo sumo ${MAX_STATEMENT_DAYS} días después de from`);
  }
}

export interface StatementRequest {
  rail: ApiRail;
  from: Instant;
  to: Instant;
}
export interface StatementCompany {
  name: string;
  nit: string;
}

export interface StatementLineView {
  postingId: string;
  postedAt: string;
  postedAtBogota: string;
  entry: string;
  movementId: string | null;
  movementType: string | null;
  movementRail: string | null;
  movementStatus: string | null;
  reference: string | null;
  counterparty: string | null;
  description: string | null;
  amountCents: string;
  feeCents: string;
  ivaCents: string;
  balanceAfterCents: string;
}

/** What a posting kind is in a statement line (`entry`). */
const ENTRY: Record<string, string> = {
  credit: 'CREDIT',
  fee_charge: 'FEE_CHARGE',
  reserve: 'TRANSFER_OUT',
  release: 'TRANSFER_OUT_RETURNED',
  inflow: 'TRANSFER_IN',
  reversal: 'TRANSFER_IN_REVERSED',
  correction: 'CORRECTION',
};
/** A move between the company's own wallets (docs/wallet-moves.md): out of one wallet's statement, into the other's. */
const moveEntry = (effectCents: bigint) => (effectCents < 0n ? 'WALLET_MOVE_OUT' : 'WALLET_MOVE_IN');
/** Spanish names of the entries, for the CSV and the PDF. */
export const ENTRY_ES: Record<string, string> = {
  CREDIT: 'Abono de saldo',
  FEE_CHARGE: 'Cobro de comisión',
  TRANSFER_OUT: 'Transferencia enviada',
  TRANSFER_OUT_RETURNED: 'Devolución de transferencia fallida',
  TRANSFER_IN: 'Recaudo recibido',
  TRANSFER_IN_REVERSED: 'Reverso de recaudo',
  CORRECTION: 'Corrección',
  WALLET_MOVE_OUT: 'Traslado a otra billetera propia',
  WALLET_MOVE_IN: 'Traslado desde otra billetera propia',
};

interface Totals {
  inCents: bigint;
  outCents: bigint;
  feesCents: bigint;
  ivaCents: bigint;
  lines: number;
}

const entryOf = (l: ledgerV1.StatementLine): string =>
  l.postingKind === 'move' ? moveEntry(l.effectCents) : (ENTRY[l.postingKind] ?? l.postingKind.toUpperCase());

function lineView(l: ledgerV1.StatementLine, balanceAfter: bigint): StatementLineView {
  const m = l.movement;
  const d = m?.details;
  // Exactly the posting's created_at (microseconds): a valid bound for the next statement.
  return {
    postingId: l.postingId,
    postedAt: l.postedAt,
    postedAtBogota: bogotaIso(l.postedAt),
    entry: entryOf(l),
    movementId: m ? m.id : null,
    movementType: m ? movementTypeToApi(m.type) : null,
    movementRail: m ? railFromProto(m.rail) : null,
    movementStatus: m ? movementStatusToApi(m.status) : null,
    reference: m?.reference ?? null,
    counterparty: d?.targetName ?? d?.payerName ?? null,
    description: d?.description ?? null,
    amountCents: l.effectCents.toString(),
    feeCents: l.feeCents.toString(),
    ivaCents: l.ivaCents.toString(),
    balanceAfterCents: balanceAfter.toString(),
  };
}

/**
 * One line of the CSV, written straight from the ledger's line (the cells of lineView, without the
 * view: a 1,000,000-line export writes a million of them).
 */
function csvLine(l: ledgerV1.StatementLine, balanceAfter: bigint): string {
  const m = l.movement;
  const d = m?.details;
  const entry = entryOf(l);
  const movement = m
    ? `${cell(m.id)};${cell(movementTypeToApi(m.type))};${cell(railFromProto(m.rail))};${cell(movementStatusToApi(m.status))};${cell(m.reference ?? '')}`
    : '"";"";"";"";""';
  return (
    `${cell(bogotaCell(l.postedAt))};${cell(ENTRY_ES[entry] ?? entry)};${cell(entry)};${movement};` +
    `${cell(d?.targetName ?? d?.payerName ?? '')};${cell(d?.description ?? '')};` +
    `${cell(pesos(l.effectCents))};${cell(pesos(l.feeCents))};${cell(pesos(l.ivaCents))};${cell(pesos(balanceAfter))}\r\n`
  );
}

/**
 * A wallet's statement between two instants (docs/statements.md): the balances at `from` and `to`
 * from the journal (GetBalanceAt), and in between the ledger's lines (StreamStatement: every
 * posting that changed available in (from, to]), each with the running available balance. Checks
 * opening + Σ lines = closing before it answers JSON, and before it writes the CSV's last rows
 * (a failed check aborts the download: an incomplete file, never a wrong one).
 */
export class StatementQuery {
  constructor(private readonly ledger: LedgerClient) {}

  private async opening(req: StatementRequest, call: CallContext) {
    return this.ledger.getBalanceAt({ rail: railToProto(req.rail), at: req.from }, call);
  }

  private lines(req: StatementRequest, call: CallContext): AsyncIterable<ledgerV1.StatementBatch> {
    return this.ledger.streamStatement({ rail: railToProto(req.rail), from: req.from, to: req.to, batchSize: BATCH }, call);
  }

  private async closing(req: StatementRequest, call: CallContext, opening: bigint, totals: Totals) {
    const closing = await this.ledger.getBalanceAt({ rail: railToProto(req.rail), at: req.to }, call);
    if (opening + totals.inCents - totals.outCents !== closing.availableCents) {
      // Only possible while postings dated before `to` are still committing (a `to` of a few seconds ago).
      throw new AppError('SERVICE_UNAVAILABLE', 'El extracto cambió mientras se generaba (movimientos en curso); intente de nuevo en un minuto.');
    }
    return closing;
  }

  async json(req: StatementRequest, company: StatementCompany, call: CallContext) {
    const opening = await this.opening(req, call);
    const totals: Totals = { inCents: 0n, outCents: 0n, feesCents: 0n, ivaCents: 0n, lines: 0 };
    const lines: StatementLineView[] = [];
    let running = opening.availableCents;
    for await (const batch of this.lines(req, call)) {
      for (const l of batch.lines) {
        if (lines.length === MAX_JSON_STATEMENT_LINES) {
          throw new AppError(
            'VALIDATION_ERROR',
            `El extracto tiene más de ${MAX_JSON_STATEMENT_LINES.toLocaleString('es-CO')} movimientos; pídalo con format=csv o acorte el periodo.`,
            { fields: [{ path: 'query.format', message: 'use csv para más de 10.000 movimientos' }] },
          );
        }
        running += l.effectCents;
        add(totals, l);
        lines.push(lineView(l, running));
      }
    }
    const [closing, journalHeads] = await Promise.all([this.closing(req, call, opening.availableCents, totals), this.journalHeads(req, call)]);
    return {
      company: { name: company.name, nit: company.nit },
      rail: req.rail,
      currency: 'COP' as const,
      timezone: 'America/Bogota' as const,
      from: req.from,
      to: req.to,
      fromBogota: bogotaIso(req.from),
      toBogota: bogotaIso(req.to),
      opening: { availableCents: opening.availableCents.toString(), pendingOutCents: opening.pendingOutCents.toString() },
      closing: { availableCents: closing.availableCents.toString(), pendingOutCents: closing.pendingOutCents.toString() },
      totals: {
        inCents: totals.inCents.toString(),
        outCents: totals.outCents.toString(),
        feesCents: totals.feesCents.toString(),
        ivaCents: totals.ivaCents.toString(),
        lineCount: totals.lines,
      },
      lines,
      journalHeads,
    };
  }

  /**
   * The tamper-evident journal's heads recorded for the Bogotá days of the period (docs/journal.md):
   * a day's head is recorded just after it closes, so a statement of today has none yet.
   */
  private async journalHeads(req: StatementRequest, call: CallContext) {
    const ms = (i: Instant) => Number(instantMicros(i) / 1000n);
    const fromDay = bogotaClock(new Date(ms(req.from))).date;
    const toDay = bogotaClock(new Date(ms(req.to) - 1)).date;
    const { heads } = await this.ledger.getJournalHeads({ fromDay, toDay: toDay < fromDay ? fromDay : toDay }, call);
    return heads.map((h) => ({ day: h.day, seq: h.seq.toString(), hash: h.hash }));
  }

  /**
   * The CSV as a stream: the opening balance and the first batch are read before it returns (so a
   * bad request or a missing wallet is still an HTTP error), then one batch at a time.
   */
  async csv(req: StatementRequest, company: StatementCompany, call: CallContext): Promise<Readable> {
    const opening = await this.opening(req, call);
    const it = this.lines(req, call)[Symbol.asyncIterator]();
    const first = await it.next();
    const self = this;
    async function* rows(): AsyncGenerator<string> {
      const totals: Totals = { inCents: 0n, outCents: 0n, feesCents: 0n, ivaCents: 0n, lines: 0 };
      let running = opening.availableCents;
      yield (
        CSV_BOM +
        [
          row(['Extracto de billetera', `${company.name}`]),
          row(['NIT', company.nit]),
          row(['Billetera', req.rail]),
          row(['Desde (hora de Bogotá)', bogotaCell(req.from)]),
          row(['Hasta (hora de Bogotá)', bogotaCell(req.to)]),
          row(['Saldo disponible inicial', pesos(opening.availableCents)]),
          row(['Saldo en tránsito inicial', pesos(opening.pendingOutCents)]),
          '\r\n',
          row([
            'Fecha (hora de Bogotá)',
            'Concepto',
            'Tipo de línea',
            'ID movimiento',
            'Tipo de movimiento',
            'Riel',
            'Estado actual',
            'Referencia',
            'Contraparte',
            'Descripción',
            'Valor',
            'Comisión',
            'IVA',
            'Saldo disponible',
          ]),
        ].join('')
      );
      let next = first;
      try {
        while (!next.done) {
          let chunk = '';
          for (const l of next.value.lines) {
            running += l.effectCents;
            add(totals, l);
            chunk += csvLine(l, running);
          }
          yield chunk;
          next = await it.next();
        }
      } finally {
        // the download stopped early (client gone, error): cancel the ledger's stream
        if (!next.done) await it.return?.();
      }
      const closing = await self.closing(req, call, opening.availableCents, totals);
      yield (
        '\r\n' +
        [
          row(['Total entradas', pesos(totals.inCents)]),
          row(['Total salidas', pesos(totals.outCents)]),
          row(['Total comisiones', pesos(totals.feesCents)]),
          row(['Total IVA', pesos(totals.ivaCents)]),
          row(['Número de líneas', String(totals.lines)]),
          row(['Saldo disponible final', pesos(closing.availableCents)]),
          row(['Saldo en tránsito final', pesos(closing.pendingOutCents)]),
        ].join('')
      );
    }
    return Readable.from(rows(), { objectMode: false });
  }
}

/** What `json` answers, and what the PDF (app/statement-pdf.ts) is drawn from. */
export type StatementDocument = Awaited<ReturnType<StatementQuery['json']>>;

function add(t: Totals, l: ledgerV1.StatementLine): void {
  if (l.effectCents > 0n) t.inCents += l.effectCents;
  else t.outCents -= l.effectCents;
  t.feesCents += l.feeCents;
  t.ivaCents += l.ivaCents;
  t.lines += 1;
}

/** `2026-11-28` → `261128`: a Bogotá day as the banks' formats write it (MT940's dates, camt.053's sequence). */
export const yymmdd = (isoDay: string) => isoDay.slice(2, 4) + isoDay.slice(5, 7) + isoDay.slice(8, 10);

/**
 * The journal's daily head as the statement files print it (MT940's closing `:86:`, camt.053's
 * AddtlStmtInf): in words a reader of the file understands, the hash whole.
 */
export function journalHeadText(head: { day: string; seq: string; hash: string }): string {
  return `Diario contable sellado al cierre del ${head.day}: posición ${head.seq}, SHA-256 ${head.hash}`;
}
