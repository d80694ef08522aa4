import { winAnsi } from '@wallet/platform';
import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import type { ReceiptView } from './receipt-view.js';

/**
 * One A4 page laid out absolutely (no automatic page breaks): a navy header band with the company
 * and the receipt title/number, the headline amount and a status badge, the operation / origin /
 * destination (or payer / beneficiary) sections, the values box, an optional notice, and a footer
 * with the verification QR and the full SHA-256 of the canonical content. The PDF is signed after
 * rendering (app/render-receipt.ts); the footer says so. Built-in Helvetica only
 * (WinAnsi: accents and ñ render; anything outside it is transliterated or replaced), every value
 * truncated to its column so long names never spill onto a second page.
 */

const PAGE = { w: 595.28, h: 841.89 };
const M = 40;
const NAVY = '#0B3D6E';
const INK = '#1F2933';
const MUTED = '#5F6B7A';
const RULE = '#D5DBE3';
const TONES = { ok: '#1E7E34', failed: '#B42318', pending: '#B26A00' } as const;
const TONE_BG = { ok: '#E8F5EC', failed: '#FDECEA', pending: '#FFF4E0' } as const;

export { winAnsi };

export interface RenderOptions {
  view: ReceiptView;
  sha256: string;
  verifyUrl: string;
  /** Written into the PDF metadata (the generation time). */
  generatedAt?: Date;
}

export async function renderReceiptPdf(o: RenderOptions): Promise<Buffer> {
  const { view, sha256, verifyUrl } = o;
  const qr = await QRCode.toBuffer(verifyUrl, { type: 'png', errorCorrectionLevel: 'M', margin: 1, scale: 6 });
  const doc = new PDFDocument({
    size: 'A4',
    margins: { top: 0, bottom: 0, left: 0, right: 0 },
    autoFirstPage: true,
    info: {
      Title: winAnsi(`${view.title} ${view.receiptNumber}`),
      Author: winAnsi(view.company.name || 'Billetera de pagos'),
      Subject: winAnsi(view.title),
      Keywords: `sha256:${sha256}`,
      CreationDate: o.generatedAt ?? new Date(),
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  /** One line of text at (x, y), cut with an ellipsis to fit `width`. */
  const line = (
    text: string,
    x: number,
    y: number,
    width: number,
    opts: { font?: string; size?: number; minSize?: number; color?: string; align?: 'left' | 'right' | 'center' } = {},
  ) => {
    let size = opts.size ?? 10;
    doc
      .font(opts.font ?? 'Helvetica')
      .fontSize(size)
      .fillColor(opts.color ?? INK);
    const clean = winAnsi(text);
    // Shrink first (down to minSize), then cut with an ellipsis.
    while (opts.minSize !== undefined && size > opts.minSize && doc.widthOfString(clean) > width) doc.fontSize((size -= 0.5));
    const t = fit(doc, clean, width);
    doc.text(t, x, y, { width, align: opts.align ?? 'left', lineBreak: false });
  };

  // Header band.
  doc.rect(0, 0, PAGE.w, 104).fill(NAVY);
  line(view.company.name || 'Empresa', M, 30, 300, { font: 'Helvetica-Bold', size: 17, minSize: 12, color: '#FFFFFF' });
  line(view.company.nit ? `NIT ${view.company.nit}` : 'NIT —', M, 54, 300, { size: 10, color: '#C9D6E8' });
  line('Billetera de pagos empresarial', M, 70, 300, { size: 8.5, color: '#C9D6E8' });
  line(view.title, PAGE.w - M - 230, 30, 230, { font: 'Helvetica-Bold', size: 13, color: '#FFFFFF', align: 'right' });
  line(`No. ${view.receiptNumber}`, PAGE.w - M - 230, 50, 230, { size: 10, color: '#FFFFFF', align: 'right' });
  line(view.issuedFor, PAGE.w - M - 230, 66, 230, { size: 8.5, color: '#C9D6E8', align: 'right' });

  // Headline amount and status badge.
  let y = 128;
  line(view.headline.label, M, y, 300, { size: 10, color: MUTED });
  line(view.headline.value, M, y + 14, 330, { font: 'Helvetica-Bold', size: 26, minSize: 16, color: INK });
  doc.font('Helvetica-Bold').fontSize(11);
  const badgeText = winAnsi(view.statusLabel);
  const bw = Math.min(200, doc.widthOfString(badgeText) + 28);
  const bx = PAGE.w - M - bw;
  doc.roundedRect(bx, y + 12, bw, 26, 13).fill(TONE_BG[view.tone]);
  doc.circle(bx + 13, y + 25, 3.5).fill(TONES[view.tone]);
  line(view.statusLabel, bx + 20, y + 19, bw - 24, { font: 'Helvetica-Bold', size: 11, color: TONES[view.tone] });
  line('Estado', bx, y, bw, { size: 9, color: MUTED, align: 'right' });
  y += 58;
  doc
    .moveTo(M, y)
    .lineTo(PAGE.w - M, y)
    .lineWidth(0.8)
    .strokeColor(RULE)
    .stroke();
  y += 14;

  // Sections.
  const labelW = 150;
  const valueX = M + labelW + 10;
  const valueW = PAGE.w - M - valueX;
  for (const s of view.sections) {
    line(s.title.toUpperCase(), M, y, 300, { font: 'Helvetica-Bold', size: 9.5, color: NAVY });
    y += 15;
    for (const l of s.lines) {
      line(l.label, M, y, labelW, { size: 9.5, color: MUTED });
      line(l.value, valueX, y, valueW, { size: 10, color: INK });
      y += 15.5;
    }
    y += 9;
  }

  // Values box.
  const rows = view.totals.length + 1;
  const boxH = rows * 17 + 14;
  doc.roundedRect(M, y, PAGE.w - 2 * M, boxH, 6).fill('#F4F6F9');
  let ty = y + 10;
  line('VALORES', M + 14, ty, 200, { font: 'Helvetica-Bold', size: 9.5, color: NAVY });
  for (const t of view.totals) {
    line(t.label, M + 200, ty, 150, { size: 10, color: MUTED });
    line(t.value, PAGE.w - M - 14 - 160, ty, 160, { size: 10, color: INK, align: 'right' });
    ty += 17;
  }
  doc
    .moveTo(M + 200, ty - 3)
    .lineTo(PAGE.w - M - 14, ty - 3)
    .lineWidth(0.6)
    .strokeColor(RULE)
    .stroke();
  line(view.grandTotal.label, M + 200, ty + 2, 160, { font: 'Helvetica-Bold', size: 11, color: INK });
  line(view.grandTotal.value, PAGE.w - M - 14 - 160, ty + 2, 160, { font: 'Helvetica-Bold', size: 11, color: INK, align: 'right' });
  y += boxH + 12;

  // Notice (failed / reversed / unassigned).
  if (view.notice) {
    doc.font('Helvetica').fontSize(9.5);
    const text = winAnsi(view.notice);
    const w = PAGE.w - 2 * M - 28;
    const lines = wrap(doc, text, w, 3);
    const h = lines.length * 13 + 16;
    doc.roundedRect(M, y, PAGE.w - 2 * M, h, 6).fill(TONE_BG[view.tone === 'ok' ? 'pending' : view.tone]);
    lines.forEach((l, i) => line(l, M + 14, y + 9 + i * 13, w, { size: 9.5, color: TONES[view.tone === 'ok' ? 'pending' : view.tone] }));
    y += h + 10;
  }

  // Footer: verification (fixed at the bottom of the page).
  const fy = PAGE.h - M - 118;
  doc
    .moveTo(M, fy - 12)
    .lineTo(PAGE.w - M, fy - 12)
    .lineWidth(0.8)
    .strokeColor(RULE)
    .stroke();
  doc.image(qr, M, fy, { width: 100, height: 100 });
  const fx = M + 116;
  const fw = PAGE.w - M - fx;
  line('Verificación del comprobante', fx, fy + 2, fw, { font: 'Helvetica-Bold', size: 10, color: NAVY });
  if (/^https?:\/\//.test(verifyUrl)) {
    line('Escanee el código QR o consulte:', fx, fy + 17, fw, { size: 8.5, color: MUTED });
    line(verifyUrl, fx, fy + 29, fw, { size: 8, color: NAVY });
  } else {
    // No public verification page: the QR carries the number and the hash, to compare with the
    // receipt downloaded again from the API (header X-Receipt-Sha256).
    line('El QR contiene el número y la huella; compárela con', fx, fy + 17, fw, { size: 8.5, color: MUTED });
    line('la del comprobante descargado de nuevo desde la API.', fx, fy + 29, fw, { size: 8.5, color: MUTED });
  }
  line('Huella SHA-256 del contenido del comprobante:', fx, fy + 45, fw, { size: 8.5, color: MUTED });
  line(sha256, fx, fy + 57, fw, { font: 'Courier', size: 8, color: INK });
  doc.font('Helvetica').fontSize(7.5).fillColor(MUTED);
  const legal = wrap(
    doc,
    winAnsi(
      'Documento generado a partir de los registros de la plataforma y firmado digitalmente (PAdES): su lector de PDF indica si fue alterado. ' +
        'Fechas y horas en hora de Colombia (America/Bogota, UTC-5). Valores en pesos colombianos (COP). ' +
        'Por seguridad, los números de cuenta se muestran enmascarados.',
    ),
    fw,
    3,
  );
  legal.forEach((l, i) => line(l, fx, fy + 74 + i * 10, fw, { size: 7.5, color: MUTED }));

  doc.end();
  return done;
}

function fit(doc: PDFKit.PDFDocument, text: string, width: number): string {
  if (doc.widthOfString(text) <= width) return text;
  let lo = 0,
    hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (doc.widthOfString(`${text.slice(0, mid).trimEnd()}…`) <= width) lo = mid;
    else hi = mid - 1;
  }
  return `${text.slice(0, lo).trimEnd()}…`;
}

/** Greedy word wrap into at most `max` lines (the last one cut with an ellipsis). */
function wrap(doc: PDFKit.PDFDocument, text: string, width: number, max: number): string[] {
  const words = text.split(/\s+/).filter(Boolean);
  const lines: string[] = [];
  let cur = '';
  for (let i = 0; i < words.length; i++) {
    const next = cur ? `${cur} ${words[i]}` : words[i]!;
    if (doc.widthOfString(next) <= width || !cur) {
      cur = next;
      continue;
    }
    lines.push(cur);
    cur = words[i]!;
    if (lines.length === max - 1) {
      cur = words.slice(i).join(' ');
      break;
    }
  }
  if (cur) lines.push(cur);
  return lines.slice(0, max).map((l) => fit(doc, l, width));
}
