import { formatCop, instantToDate, winAnsi } from '@wallet/platform';
import type { Readable } from 'node:stream';
import PDFDocument from 'pdfkit';
import { bogotaCell } from '../csv-cells.js';
import { ENTRY_ES, type StatementDocument } from './statement.js';

/**
 * The statement as a PDF (docs/statements.md): A4 landscape, built-in Helvetica, in Spanish. The
 * first page has the company (name, NIT), the wallet, the period in Bogotá time and the opening
 * balances; then the table of lines (fecha, concepto, referencia, descripción / beneficiario,
 * débito, crédito, saldo), its header repeated on every page; after the last line the totals and
 * the closing balances; "Página n de m" on every page. Amounts in es-CO pesos (`$ 1.234.567,89`).
 *
 * Drawn from the JSON statement (already capped at 10,000 lines and checked opening + lines =
 * closing), so every row is one text line of a fixed height and the pages are counted before the
 * first is drawn: the page numbers are written as each page is, and the document is streamed page
 * by page, following the reader's pace (never the whole file in memory).
 */

const PAGE = { w: 841.89, h: 595.28 }; // A4 landscape
const M = 36;
const NAVY = '#0B3D6E';
const INK = '#1F2933';
const MUTED = '#5F6B7A';
const RULE = '#D5DBE3';
const STRIPE = '#F4F6F9';

/** The table's columns, left to right (widths add up to the page width between margins). */
const COLUMNS = [
  { title: 'Fecha (Bogotá)', width: 84, align: 'left' },
  { title: 'Concepto', width: 128, align: 'left' },
  { title: 'Referencia', width: 100, align: 'left' },
  { title: 'Descripción / beneficiario', width: PAGE.w - 2 * M - 84 - 128 - 100 - 88 - 88 - 102, align: 'left' },
  { title: 'Débito', width: 88, align: 'right' },
  { title: 'Crédito', width: 88, align: 'right' },
  { title: 'Saldo', width: 102, align: 'right' },
] as const;
const PAD = 4;
const ROW_H = 15;
const HEAD_H = 18;
/** Where the table starts on the first page (below the header band and the opening box) and on the others. */
const TABLE_TOP_FIRST = 166;
const TABLE_TOP_OTHER = 66;
/** The lowest y a row or the totals may reach: the footer sits below. */
const BOTTOM = PAGE.h - M - 24;
const TOTALS_GAP = 14;
const TOTALS_H = 124;

const ROWS_FIRST = Math.floor((BOTTOM - TABLE_TOP_FIRST - HEAD_H) / ROW_H);
const ROWS_OTHER = Math.floor((BOTTOM - TABLE_TOP_OTHER - HEAD_H) / ROW_H);

export interface StatementPdfOptions {
  /** Off in tests, to read the page content as written. */
  compress?: boolean;
  /** The generation time, printed in the footer and the metadata. */
  generatedAt?: Date;
}

/** One page: the rows [from, to) of the table (none on a page that only has the totals), and whether the totals close it. */
export interface PdfPage {
  from: number;
  to: number;
  table: boolean;
  totals: boolean;
}

/**
 * The pages of a statement of `lines` lines (an empty one has a single "sin movimientos" row): the
 * rows fill each page, and the totals go after the last row, on a page of their own when they do
 * not fit below it.
 */
export function paginate(lines: number): PdfPage[] {
  const rows = Math.max(lines, 1);
  const pages: PdfPage[] = [];
  for (let i = 0; i < rows;) {
    const take = Math.min(pages.length === 0 ? ROWS_FIRST : ROWS_OTHER, rows - i);
    pages.push({ from: i, to: i + take, table: true, totals: false });
    i += take;
  }
  const last = pages[pages.length - 1]!;
  const top = pages.length === 1 ? TABLE_TOP_FIRST : TABLE_TOP_OTHER;
  if (top + HEAD_H + (last.to - last.from) * ROW_H + TOTALS_GAP + TOTALS_H <= BOTTOM) last.totals = true;
  else pages.push({ from: rows, to: rows, table: false, totals: true });
  return pages;
}

/** Centavos (a decimal string or bigint) as es-CO pesos, `$ 1.234.567,89`, `-$ 5,50`: the platform's `formatCop`. */
export function copPesos(cents: bigint | string): string {
  return formatCop(BigInt(cents));
}

/** `21/11/2026 10:00`: an instant as a Bogotá wall-clock time (Colombia keeps UTC−5 all year). */
export function bogotaDayTime(d: Date): string {
  const c = bogotaCell(d); // `2026-11-21 10:00:00`
  return `${c.slice(8, 10)}/${c.slice(5, 7)}/${c.slice(0, 4)} ${c.slice(11, 16)}`;
}

const WALLET: Record<string, string> = { BREB: 'Bre-B', ACH: 'ACH' };

/**
 * Renders `s` into a PDF stream (pdfkit's document, a Readable): pipe it to the answer. A failure
 * while drawing destroys the stream with the error (the download is cut, never a wrong file).
 */
export function statementPdf(s: StatementDocument, opts: StatementPdfOptions = {}): Readable {
  const generatedAt = opts.generatedAt ?? new Date();
  const wallet = WALLET[s.rail] ?? s.rail;
  const period = `${bogotaDayTime(instantToDate(s.from))} – ${bogotaDayTime(instantToDate(s.to))}`;
  const doc = new PDFDocument({
    size: 'A4',
    layout: 'landscape',
    margins: { top: 0, bottom: 0, left: 0, right: 0 },
    autoFirstPage: false,
    compress: opts.compress ?? true,
    info: {
      Title: winAnsi(`Extracto de billetera ${wallet} ${period}`),
      Author: winAnsi(s.company.name || 'Billetera de pagos'),
      Subject: winAnsi(`Extracto de billetera ${wallet}`),
      CreationDate: generatedAt,
    },
  });
  const stream = doc as unknown as Readable;
  const ready = pace(stream);

  /**
   * One line of text at (x, y), cut with an ellipsis to fit `width`. Placed by hand (no `width`
   * option: pdfkit's line wrapper measures every word again, and a 10,000-line table is ~70,000 cells).
   */
  const line = (text: string, x: number, y: number, width: number, o: { bold?: boolean; size?: number; color?: string; align?: 'left' | 'right' } = {}) => {
    doc
      .font(o.bold ? 'Helvetica-Bold' : 'Helvetica')
      .fontSize(o.size ?? 7.5)
      .fillColor(o.color ?? INK);
    const [t, w] = fit(doc, winAnsi(text), width);
    if (t) doc.text(t, o.align === 'right' ? x + width - w : x, y, { lineBreak: false });
  };

  const firstHeader = () => {
    doc.rect(0, 0, PAGE.w, 96).fill(NAVY);
    line(s.company.name || 'Empresa', M, 26, 420, { bold: true, size: 16, color: '#FFFFFF' });
    line(s.company.nit ? `NIT ${s.company.nit}` : 'NIT —', M, 50, 420, { size: 10, color: '#C9D6E8' });
    line('Billetera de pagos empresarial', M, 66, 420, { size: 8.5, color: '#C9D6E8' });
    line('Extracto de billetera', PAGE.w - M - 320, 26, 320, { bold: true, size: 13, color: '#FFFFFF', align: 'right' });
    line(`Billetera ${wallet}`, PAGE.w - M - 320, 46, 320, { size: 10, color: '#FFFFFF', align: 'right' });
    line(`Periodo: ${period} (hora de Bogotá)`, PAGE.w - M - 320, 62, 320, { size: 8.5, color: '#C9D6E8', align: 'right' });
    // Opening balances.
    const y = 110;
    doc.roundedRect(M, y, PAGE.w - 2 * M, 42, 5).fill(STRIPE);
    const cells: [string, string][] = [
      ['Saldo disponible inicial', copPesos(s.opening.availableCents)],
      ['Saldo en tránsito inicial', copPesos(s.opening.pendingOutCents)],
      ['Movimientos en el periodo', s.totals.lineCount.toLocaleString('es-CO')],
      ['Moneda', 'Pesos colombianos (COP)'],
    ];
    const w = (PAGE.w - 2 * M) / cells.length;
    cells.forEach(([label, value], i) => {
      line(label, M + 12 + i * w, y + 8, w - 24, { size: 8, color: MUTED });
      line(value, M + 12 + i * w, y + 21, w - 24, { bold: true, size: 11 });
    });
  };

  const otherHeader = () => {
    line(`${s.company.name || 'Empresa'} · NIT ${s.company.nit || '—'}`, M, M - 4, 400, { bold: true, size: 10, color: NAVY });
    line(`Extracto de billetera ${wallet} · ${period} (hora de Bogotá)`, PAGE.w - M - 380, M - 2, 380, { size: 8.5, color: MUTED, align: 'right' });
    doc
      .moveTo(M, M + 16)
      .lineTo(PAGE.w - M, M + 16)
      .lineWidth(0.8)
      .strokeColor(RULE)
      .stroke();
  };

  const tableHeader = (y: number) => {
    doc.rect(M, y, PAGE.w - 2 * M, HEAD_H).fill(NAVY);
    let x = M;
    for (const c of COLUMNS) {
      line(c.title, x + PAD, y + 5.5, c.width - 2 * PAD, { bold: true, color: '#FFFFFF', align: c.align });
      x += c.width;
    }
  };

  const row = (i: number, y: number) => {
    if (i % 2 === 1) doc.rect(M, y, PAGE.w - 2 * M, ROW_H).fill(STRIPE);
    const l = s.lines[i];
    if (!l) {
      line('Sin movimientos en el periodo.', M + PAD, y + 4, 400, { color: MUTED });
      return;
    }
    const amount = BigInt(l.amountCents);
    const cells = [
      bogotaDayTime(instantToDate(l.postedAt)),
      ENTRY_ES[l.entry] ?? l.entry,
      l.reference ?? '',
      [l.counterparty, l.description].filter(Boolean).join(' · '),
      amount < 0n ? copPesos(-amount) : '',
      amount >= 0n ? copPesos(amount) : '',
      copPesos(l.balanceAfterCents),
    ];
    let x = M;
    COLUMNS.forEach((c, k) => {
      line(cells[k]!, x + PAD, y + 4, c.width - 2 * PAD, { align: c.align });
      x += c.width;
    });
  };

  const totals = (y: number) => {
    doc.roundedRect(M, y, PAGE.w - 2 * M, TOTALS_H, 6).fill(STRIPE);
    line('RESUMEN DEL PERIODO', M + 14, y + 10, 300, { bold: true, size: 9.5, color: NAVY });
    const columns: [string, string, boolean?][][] = [
      [
        ['Saldo disponible inicial', copPesos(s.opening.availableCents)],
        ['Total entradas', copPesos(s.totals.inCents)],
        ['Total salidas', copPesos(s.totals.outCents)],
        ['Saldo disponible final', copPesos(s.closing.availableCents), true],
      ],
      [
        ['Total comisiones', copPesos(s.totals.feesCents)],
        ['Total IVA', copPesos(s.totals.ivaCents)],
        ['Saldo en tránsito final', copPesos(s.closing.pendingOutCents)],
        ['Número de movimientos', s.totals.lineCount.toLocaleString('es-CO')],
      ],
    ];
    const w = (PAGE.w - 2 * M - 28) / 2;
    columns.forEach((col, c) =>
      col.forEach(([label, value, strong], r) => {
        const x = M + 14 + c * (w + 28);
        const ry = y + 30 + r * 16;
        line(label, x, ry, w - 170, { bold: strong, size: 9.5, color: strong ? INK : MUTED });
        line(value, x + w - 170, ry, 170, { bold: strong, size: 9.5, align: 'right' });
      }),
    );
    line(
      'Saldo disponible inicial + entradas − salidas = saldo disponible final. Las comisiones y el IVA están incluidos en los valores de los movimientos.',
      M + 14,
      y + TOTALS_H - 22,
      PAGE.w - 2 * M - 28,
      { size: 7.5, color: MUTED },
    );
    // the tamper-evident journal's last daily head of the period (docs/journal.md), when recorded
    const head = s.journalHeads.at(-1);
    if (head) {
      line(
        `Diario contable sellado al cierre del ${head.day}: posición ${Number(head.seq).toLocaleString('es-CO')}, huella SHA-256 ${head.hash}`,
        M + 14,
        y + TOTALS_H - 11,
        PAGE.w - 2 * M - 28,
        { size: 6.5, color: MUTED },
      );
    }
  };

  const footer = (n: number, of: number) => {
    doc
      .moveTo(M, PAGE.h - M - 16)
      .lineTo(PAGE.w - M, PAGE.h - M - 16)
      .lineWidth(0.6)
      .strokeColor(RULE)
      .stroke();
    line(
      `Generado el ${bogotaDayTime(generatedAt)} (hora de Bogotá) a partir de los registros contables de la plataforma. Valores en pesos colombianos (COP).`,
      M,
      PAGE.h - M - 8,
      560,
      { size: 7, color: MUTED },
    );
    line(`Página ${n} de ${of}`, PAGE.w - M - 120, PAGE.h - M - 8, 120, { size: 7.5, color: MUTED, align: 'right' });
  };

  const pages = paginate(s.lines.length);
  void (async () => {
    for (const [p, page] of pages.entries()) {
      await ready();
      if (stream.destroyed) return; // the reader went away
      doc.addPage(); // writes out the previous page
      if (p === 0) firstHeader();
      else otherHeader();
      let y = p === 0 ? TABLE_TOP_FIRST : TABLE_TOP_OTHER;
      if (page.table) {
        tableHeader(y);
        y += HEAD_H;
        for (let i = page.from; i < page.to; i++, y += ROW_H) row(i, y);
      }
      if (page.totals) totals(page.table ? y + TOTALS_GAP : y);
      footer(p + 1, pages.length);
    }
    doc.end();
  })().catch((err: unknown) => stream.destroy(err as Error));
  return stream;
}

/**
 * A wait for the reader: resolves at once while the stream's buffer is below its high-water mark
 * (after a turn of the event loop, so a long document never holds it), else when the reader asks
 * for more (`_read`) or the stream is destroyed. pdfkit pushes whatever it writes, ignoring
 * back-pressure (its `_read` does nothing); this is what keeps the file from piling up in memory.
 */
function pace(stream: Readable): () => Promise<void> {
  let wake: (() => void) | undefined;
  const resume = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  stream._read = resume;
  stream.once('close', resume);
  return async () => {
    await new Promise<void>((r) => setImmediate(r));
    while (!stream.destroyed && stream.readableLength >= stream.readableHighWaterMark) {
      // _read is the signal; the timer only guards against a missed one (the loop checks again).
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(resume, 250).unref();
      });
    }
  };
}

/** `text` cut with an ellipsis to fit `width` at the current font and size, and its width. */
function fit(doc: PDFKit.PDFDocument, text: string, width: number): [string, number] {
  const full = doc.widthOfString(text);
  if (full <= width) return [text, full];
  let lo = 0,
    hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (doc.widthOfString(`${text.slice(0, mid).trimEnd()}…`) <= width) lo = mid;
    else hi = mid - 1;
  }
  const cut = `${text.slice(0, lo).trimEnd()}…`;
  return [cut, doc.widthOfString(cut)];
}
