import { instantFromDate } from '@wallet/platform';
import type { Readable } from 'node:stream';
import type { StatementDocument, StatementLineView } from './statement.js';
import { bogotaDayTime, copPesos, paginate, statementPdf } from './statement-pdf.js';

/**
 * The statement PDF from a statement as StatementQuery.json builds it (the builder and its cap are
 * statement.spec.ts's): a valid PDF whose text (drawn uncompressed here) has the company, the NIT,
 * es-CO amounts, Bogotá dates, the repeated table header and "Página n de m"; written page by page
 * as it is read.
 */

function statement(lines: number): StatementDocument {
  const opening = 500_000n;
  let running = opening;
  const view: StatementLineView[] = [];
  for (let i = 0; i < lines; i++) {
    const amount = i % 2 === 0 ? 123_456_789n : -100_370n;
    running += amount;
    view.push({
      postingId: `p${i}`,
      postedAt: instantFromDate(new Date(Date.UTC(2026, 10, 21, 15, 0) + i * 60_000)),
      postedAtBogota: '',
      entry: i % 2 === 0 ? 'CREDIT' : 'TRANSFER_OUT',
      movementId: `m${i}`,
      movementType: null,
      movementRail: 'ACH',
      movementStatus: 'COMPLETED',
      reference: `REF-${i}`,
      counterparty: i % 2 ? 'Ana María Pérez Gómez' : null,
      description: i % 2 ? 'Pago proveedor' : null,
      amountCents: amount.toString(),
      feeCents: i % 2 ? '300' : '0',
      ivaCents: i % 2 ? '57' : '0',
      balanceAfterCents: running.toString(),
    });
  }
  const credits = BigInt(Math.ceil(lines / 2)) * 123_456_789n;
  const debits = BigInt(Math.floor(lines / 2)) * 100_370n;
  return {
    company: { name: 'Extractos Ñandú S.A.S.', nit: '900123456-7' },
    rail: 'ACH',
    currency: 'COP',
    timezone: 'America/Bogota',
    from: '2026-11-01T05:00:00.000000Z',
    to: '2026-12-01T05:00:00.000000Z',
    fromBogota: '',
    toBogota: '',
    opening: { availableCents: opening.toString(), pendingOutCents: '0' },
    closing: { availableCents: running.toString(), pendingOutCents: '25000' },
    totals: {
      inCents: credits.toString(),
      outCents: debits.toString(),
      feesCents: String(300 * Math.floor(lines / 2)),
      ivaCents: String(57 * Math.floor(lines / 2)),
      lineCount: lines,
    },
    lines: view,
    journalHeads: [{ day: '2026-11-30', seq: '48213', hash: 'ab'.repeat(32) }],
  };
}

async function read(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const cp1252 = new TextDecoder('windows-1252');

/** The text drawn on each page (pdfkit writes the built-in fonts' text as hex WinAnsi strings in TJ arrays). */
function pagesText(pdf: Buffer): string[] {
  const raw = pdf.toString('latin1');
  const streams = [...raw.matchAll(/stream\n([\s\S]*?)\nendstream/g)].map((m) => m[1]!).filter((c) => c.includes(' TJ'));
  return streams.map((c) =>
    [...c.matchAll(/\[(.*?)\] TJ/g)]
      .map((tj) => [...tj[1]!.matchAll(/<([0-9a-f]*)>/g)].map((h) => cp1252.decode(Buffer.from(h[1]!, 'hex'))).join(''))
      .join('\n'),
  );
}

const at = new Date('2026-12-02T14:30:00Z');

describe('statementPdf', () => {
  it('is a PDF with the company, NIT, wallet, Bogotá period, es-CO amounts, totals and closing balance', async () => {
    const pdf = await read(statementPdf(statement(3), { compress: false, generatedAt: at }));
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdf.subarray(-6).toString()).toMatch(/%%EOF\s*$/);
    const pages = pagesText(pdf);
    expect(pages).toHaveLength(1);
    const text = pages[0]!;
    for (const s of [
      'Extractos Ñandú S.A.S.',
      'NIT 900123456-7',
      'Extracto de billetera',
      'Billetera ACH',
      'Periodo: 01/11/2026 00:00 – 01/12/2026 00:00 (hora de Bogotá)',
      'Saldo disponible inicial',
      '$ 5.000,00', // opening
      'Fecha (Bogotá)',
      'Concepto',
      'Referencia',
      'Descripción / beneficiario',
      'Débito',
      'Crédito',
      'Saldo',
      '21/11/2026 10:00',
      'Abono de saldo',
      'REF-0',
      '$ 1.234.567,89',
      '$ 1.239.567,89',
      '21/11/2026 10:01',
      'Transferencia enviada',
      'Ana María Pérez Gómez · Pago proveedor',
      '$ 1.003,70',
      '$ 1.238.564,19',
      'Total entradas',
      '$ 2.469.135,78',
      'Total salidas',
      'Total comisiones',
      '$ 3,00',
      'Total IVA',
      '$ 0,57',
      'Saldo disponible final',
      '$ 2.473.132,08',
      'Saldo en tránsito final',
      '$ 250,00',
      'Número de movimientos',
      'Generado el 02/12/2026 09:30 (hora de Bogotá)',
      'Página 1 de 1',
      // the journal's last daily head of the period (docs/journal.md)
      `Diario contable sellado al cierre del 2026-11-30: posición 48.213, huella SHA-256 ${'ab'.repeat(32)}`,
    ])
      expect(text).toContain(s);
  });

  it('repeats the table header on every page and numbers the pages "Página n de m"', async () => {
    const lines = 200;
    const layout = paginate(lines);
    const pages = pagesText(await read(statementPdf(statement(lines), { compress: false, generatedAt: at })));
    expect(pages).toHaveLength(layout.length);
    expect(layout.length).toBeGreaterThan(5);
    pages.forEach((p, i) => {
      expect(p).toContain(`Página ${i + 1} de ${pages.length}`);
      if (layout[i]!.table) expect(p).toContain('Descripción / beneficiario');
      if (i > 0) expect(p).toContain('Extractos Ñandú S.A.S. · NIT 900123456-7');
    });
    expect(pages.join('\n')).toContain('REF-199');
    expect(pages.filter((p) => p.includes('Saldo disponible final'))).toHaveLength(1);
    expect(pages[pages.length - 1]).toContain('Saldo disponible final');
    // every line once, in order
    expect(layout.reduce((n, p) => n + (p.to - p.from), 0)).toBe(lines);
  });

  it('puts the totals on a page of their own when they do not fit below the last row', () => {
    for (let n = 0; n < 400; n++) {
      const layout = paginate(n);
      expect(layout.filter((p) => p.totals)).toHaveLength(1);
      expect(layout[layout.length - 1]!.totals).toBe(true);
    }
    expect(paginate(0)).toEqual([{ from: 0, to: 1, table: true, totals: true }]); // the "sin movimientos" row
    expect(new Set(Array.from({ length: 60 }, (_, n) => paginate(n).some((p) => !p.table))).has(true)).toBe(true);
  });

  it('says so when the period has no lines', async () => {
    const [text] = pagesText(await read(statementPdf(statement(0), { compress: false, generatedAt: at })));
    expect(text).toContain('Sin movimientos en el periodo.');
    expect(text).toContain('Página 1 de 1');
  });

  it('is written as it is read: an unread document stops after a page or so', async () => {
    const stream = statementPdf(statement(2_000), { compress: false, generatedAt: at });
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(stream.readableLength).toBeLessThan(3 * stream.readableHighWaterMark);
    const pdf = await read(stream);
    expect(pdf.length).toBeGreaterThan(8 * stream.readableHighWaterMark);
    expect(pdf.subarray(-6).toString()).toMatch(/%%EOF\s*$/);
  });

  it('compresses its pages by default', async () => {
    const pdf = await read(statementPdf(statement(3)));
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdf.toString('latin1')).toContain('/FlateDecode');
    expect(pagesText(pdf)).toEqual([]);
  });

  it('destroying the stream (the client left) stops the drawing', async () => {
    const stream = statementPdf(statement(10_000), { generatedAt: at });
    stream.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(stream.destroyed).toBe(true);
  });

  it('formats es-CO pesos from centavos exactly, and Bogotá day and time', () => {
    expect([copPesos(0n), copPesos('5'), copPesos(-550n), copPesos(500_000n), copPesos(123_456_789n), copPesos('123456789012345678901')]).toEqual([
      '$ 0,00',
      '$ 0,05',
      '-$ 5,50',
      '$ 5.000,00',
      '$ 1.234.567,89',
      '$ 1.234.567.890.123.456.789,01',
    ]);
    expect(bogotaDayTime(new Date('2026-01-01T04:59:00Z'))).toBe('31/12/2025 23:59');
  });
});
