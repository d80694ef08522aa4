import { createHash } from 'node:crypto';
import { escapeHtml } from '../docs/reference-page.js';
import { PAGE_SECURITY_HEADERS } from '../../http/static-answer.js';
import type { ReceiptVerificationAnswer } from './verify.schemas.js';

/**
 * The public verification page a receipt's QR opens (docs/receipts.md "Verifying a receipt"): one
 * server-rendered page in Spanish, no script, its one inline stylesheet allowed by hash (the
 * Content-Security-Policy allows nothing else), never cached, never indexed, never framed.
 */

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f4f6f9;color:#1d2433}
main{max-width:40rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.4rem;color:#14305a;margin:0 0 1rem}
.banner{border-radius:.5rem;padding:1rem 1.2rem;margin-bottom:1.2rem}
.ok{background:#e6f4ea;border:1px solid #9ccfa8}
.bad{background:#fdecea;border:1px solid #f1a7a0}
.note{background:#fff8e1;border:1px solid #f2d27a;border-radius:.5rem;padding:.8rem 1.2rem;margin:1rem 0}
table{width:100%;border-collapse:collapse;background:#fff;border-radius:.5rem;overflow:hidden}
th,td{text-align:left;padding:.55rem .8rem;border-bottom:1px solid #e3e7ee;vertical-align:top}
th{width:40%;color:#5a6478;font-weight:500}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.8rem;word-break:break-all}
footer{color:#5a6478;font-size:.85rem;margin-top:1.5rem}
`.trim();

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** Nothing but the page's own stylesheet; no script at all, no form, no framing. */
const VERIFY_PAGE_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

export const VERIFY_PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': VERIFY_PAGE_CSP,
  'Cache-Control': 'no-store',
  'X-Robots-Tag': 'noindex, nofollow',
  ...PAGE_SECURITY_HEADERS,
};

const page = (title: string, body: string): string =>
  `<!doctype html><html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
  `<meta name="robots" content="noindex,nofollow"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
  `<body><main>${body}</main></body></html>`;

const row = (label: string, value: string, code = false): string =>
  `<tr><th scope="row">${escapeHtml(label)}</th><td>${code ? `<code>${escapeHtml(value)}</code>` : escapeHtml(value)}</td></tr>`;

const BOGOTA = new Intl.DateTimeFormat('es-CO', { timeZone: 'America/Bogota', dateStyle: 'long', timeStyle: 'medium' });

/** The page of a receipt found: what it said, what the operation is now, its hash and signature. */
export function verifiedPage(v: ReceiptVerificationAnswer): string {
  const i = v.issued;
  const now = v.current
    ? v.current.sameContent
      ? `<div class="note">Vigente: la operación sigue como la muestra este comprobante (${escapeHtml(v.current.statusLabel)}).</div>`
      : `<div class="note">La operación cambió después de emitido este comprobante: hoy está <strong>${escapeHtml(v.current.statusLabel)}</strong>. ` +
        `Pida a quien se lo entregó un comprobante actualizado.</div>`
    : `<div class="note">El estado actual de la operación no está disponible en este momento; el contenido del comprobante sí quedó verificado.</div>`;
  const signers = v.signers.map((s) => row('Firmado digitalmente por', `${s.name} — certificado SHA-256 ${s.certificateSha256}`)).join('');
  return page(
    `Comprobante ${v.receiptNumber} verificado`,
    `<h1>Verificación de comprobante</h1>` +
      `<div class="banner ok" role="status"><strong>Comprobante auténtico.</strong> Lo emitimos para ${escapeHtml(i.company.name)} ` +
      `(NIT ${escapeHtml(i.company.nit)}) con este contenido.</div>` +
      `<table>` +
      row('Número', v.receiptNumber) +
      row('Tipo', i.title) +
      row('Fecha', i.dateLabel) +
      row(i.headline.label, i.headline.value) +
      row(i.total.label, i.total.value) +
      row('Estado en el comprobante', i.statusLabel) +
      row('Emitido por primera vez', `${BOGOTA.format(new Date(v.issuedAt))} (hora de Colombia)`) +
      row('Huella SHA-256 del contenido', v.sha256, true) +
      signers +
      `</table>` +
      now +
      `<footer>Compare la huella con la impresa en el comprobante. La firma del PDF muestra si el archivo cambió después de emitido ` +
      `(su lector de PDF, o <code>pdfsig</code>). Esta página confirma el contenido del comprobante, no la identidad de quien se lo entregó.</footer>`,
  );
}

/** The page of a number and hash that name no receipt issued. */
export function notFoundPage(message: string): string {
  return page(
    'Comprobante no verificado',
    `<h1>Verificación de comprobante</h1><div class="banner bad" role="alert"><strong>No pudimos verificar este comprobante.</strong> ` +
      `${escapeHtml(message)}</div><footer>Si el enlace o el código QR están completos y aún así no se verifica, no confíe en el comprobante ` +
      `y consulte a quien se lo entregó.</footer>`,
  );
}
