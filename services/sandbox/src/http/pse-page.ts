import { createHash } from 'node:crypto';
import { PSE_BANKS, formatCop } from '../domain/pse.js';
import type { PseLinkRow } from '../app/ports.js';

/**
 * The PSE pay page and its result pages: plain server-rendered HTML (no scripts, no external
 * assets), every interpolated value escaped, one inline stylesheet allowed by its hash in a
 * strict Content-Security-Policy.
 */

export function escapeHtml(v: string): string {
  return v.replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}
const e = escapeHtml;

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;background:#f2f5f9;color:#1c2733}
header{background:#0b3d66;color:#fff;padding:14px 24px;display:flex;align-items:center;gap:12px}
header .logo{font-weight:700;letter-spacing:.5px;background:#fff;color:#0b3d66;border-radius:6px;padding:4px 10px}
header .sub{font-size:14px;opacity:.85}
main{max-width:520px;margin:32px auto;padding:0 16px}
.card{background:#fff;border-radius:12px;box-shadow:0 2px 10px rgba(11,61,102,.12);padding:28px}
h1{font-size:20px;margin:0 0 18px}
dl{display:grid;grid-template-columns:auto 1fr;gap:10px 16px;margin:0 0 22px}
dt{color:#5b6b7b;font-size:14px}
dd{margin:0;font-weight:600;word-break:break-word}
.amount{font-size:26px;color:#0b3d66}
label{display:block;font-size:14px;color:#5b6b7b;margin-bottom:6px}
select{width:100%;padding:10px;border:1px solid #b9c6d3;border-radius:8px;font-size:16px;background:#fff;margin-bottom:22px}
.actions{display:flex;gap:12px}
button{flex:1;padding:12px;border-radius:8px;border:0;font-size:16px;font-weight:600;cursor:pointer}
.pay{background:#0b3d66;color:#fff}
.reject{background:#e9edf2;color:#1c2733}
.msg{padding:14px 16px;border-radius:8px;margin:0 0 18px}
.ok{background:#e5f5ea;color:#145c2e}
.bad{background:#fdecec;color:#8a1c1c}
.info{background:#eef3f8;color:#0b3d66}
.note{font-size:13px;color:#5b6b7b;margin-top:20px}
footer{text-align:center;font-size:12px;color:#7a8896;margin:24px 0}
`;

export const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy':
    `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; ` +
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

function layout(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="es-CO">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${e(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><span class="logo">PSE</span><span class="sub">Pagos Seguros en Línea</span></header>
<main><div class="card">
${body}
</div>
<footer>Entorno de pruebas (sandbox): no se mueve dinero real.</footer>
</main>
</body>
</html>
`;
}

function summary(l: PseLinkRow): string {
  return `<dl>
<dt>Comercio</dt><dd>${e(l.companyName)}</dd>
<dt>Valor a pagar</dt><dd class="amount">${e(formatCop(l.amountCents))}</dd>
<dt>Pagador</dt><dd>${e(l.payerName)}</dd>
${l.description ? `<dt>Descripción</dt><dd>${e(l.description)}</dd>\n` : ''}<dt>Referencia</dt><dd>${e(l.depositId)}</dd>
</dl>`;
}

/** The page for a link as it stands: the form while it can be paid, else why it cannot. */
export function payPage(l: PseLinkRow, error?: string): string {
  if (l.status !== 'PENDING') return finalPage(l);
  if (l.expired) {
    return layout(
      'Enlace vencido',
      `<h1>Enlace de pago vencido</h1>
<p class="msg bad">Este enlace de pago venció y ya no se puede usar. Solicite un nuevo enlace a ${e(l.companyName)}.</p>
${summary(l)}`,
    );
  }
  const action = `/pse/pay/${encodeURIComponent(l.depositId)}`;
  const options = PSE_BANKS.map((b) => `<option value="${e(b)}">${e(b)}</option>`).join('\n');
  return layout(
    `Pago PSE a ${l.companyName}`,
    `<h1>Confirme su pago</h1>
${error ? `<p class="msg bad">${e(error)}</p>\n` : ''}${summary(l)}
<form method="post" action="${e(action)}">
<label for="bank">Seleccione su banco</label>
<select id="bank" name="bank" required>
<option value="">— Seleccione su banco —</option>
${options}
</select>
<div class="actions">
<button class="pay" type="submit" name="action" value="pay">Pagar</button>
<button class="reject" type="submit" name="action" value="reject" formnovalidate>Rechazar</button>
</div>
</form>
<p class="note">Al pulsar Pagar autoriza a su banco a debitar ${e(formatCop(l.amountCents))} de su cuenta a favor de ${e(l.companyName)}.</p>`,
  );
}

/** The result of a link with an outcome (right after paying, and on any later visit). */
export function finalPage(l: PseLinkRow, justDecided = false): string {
  switch (l.status) {
    case 'PAID':
      return layout(
        'Pago aprobado',
        `<h1>${justDecided ? 'Pago aprobado' : 'Este pago ya fue realizado'}</h1>
<p class="msg ok">${justDecided ? 'Su pago fue aprobado' : 'El pago de este enlace ya fue aprobado'}${l.payerBank ? ` por ${e(l.payerBank)}` : ''}. ${e(l.companyName)} recibirá la confirmación.</p>
${summary(l)}
<p class="note">Código de transacción: ${e(l.providerTransferId)}</p>`,
      );
    case 'FAILED':
      return layout(
        'Pago rechazado',
        `<h1>Pago rechazado</h1>
<p class="msg bad">${justDecided ? 'El pago fue rechazado.' : 'Este pago fue rechazado y el enlace ya no se puede usar.'} No se debitó ningún valor de su cuenta.</p>
${summary(l)}`,
      );
    case 'REVERSED':
      return layout(
        'Pago reversado',
        `<h1>Pago reversado</h1>
<p class="msg info">Este pago fue aprobado y luego reversado por la entidad financiera. El enlace ya no se puede usar.</p>
${summary(l)}`,
      );
    default:
      return payPage(l);
  }
}

export function notFoundPage(): string {
  return layout(
    'Enlace no encontrado',
    `<h1>Enlace de pago no encontrado</h1>
<p class="msg bad">Este enlace de pago no existe o fue escrito de forma incorrecta. Verifique el enlace que recibió del comercio.</p>`,
  );
}
