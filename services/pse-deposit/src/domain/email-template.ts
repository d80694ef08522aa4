import { formatCop } from '@wallet/platform';

/** Removes CR, LF and other line breaks: nothing a caller sends can add a mail header. */
export function headerSafe(v: string): string {
  return v
    .replace(/[\r\n\u0085\u2028\u2029]+/g, ' ')
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
}

export function escapeHtml(v: string): string {
  return v.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** "21 de noviembre de 2026, 2:16 a. m." in America/Bogota. */
export function bogotaDateTime(d: Date): string {
  return new Intl.DateTimeFormat('es-CO', { timeZone: 'America/Bogota', dateStyle: 'long', timeStyle: 'short' }).format(d);
}

export interface PaymentRequestMail {
  companyName: string;
  recipientName?: string | undefined;
  amountCents: bigint;
  payUrl: string;
  expiresAt: Date | null;
  customMessage?: string | undefined;
  internalRef?: string | null;
}

/**
 * The standard Spanish payment-request e-mail (§4.7: no custom templates). The custom message is
 * the only free text in the body: HTML-escaped in the html part, as is in the text part.
 */
export function paymentRequestMail(m: PaymentRequestMail): { subject: string; text: string; html: string } {
  const company = headerSafe(m.companyName) || 'la empresa';
  const subject = headerSafe(`Solicitud de pago de ${company}`);
  const greeting = m.recipientName ? `Hola ${m.recipientName},` : 'Hola,';
  const amount = formatCop(m.amountCents);
  const expiry = m.expiresAt ? bogotaDateTime(m.expiresAt) : null;
  const lines = [
    greeting,
    '',
    `${company} le solicita un pago de ${amount} por PSE.`,
    ...(m.customMessage ? ['', 'Mensaje:', m.customMessage] : []),
    '',
    `Pague aquí: ${m.payUrl}`,
    ...(expiry ? [`El enlace vence el ${expiry} (hora de Colombia).`] : []),
    ...(m.internalRef ? [`Referencia: ${m.internalRef}`] : []),
    '',
    'Si no esperaba esta solicitud, ignore este mensaje.',
  ];
  const e = escapeHtml;
  const html = `<!doctype html><html lang="es"><body style="font-family:Arial,sans-serif;color:#222">
<p>${e(greeting)}</p>
<p><strong>${e(company)}</strong> le solicita un pago de <strong>${e(amount)}</strong> por PSE.</p>
${m.customMessage ? `<p>Mensaje:</p><blockquote style="white-space:pre-wrap">${e(m.customMessage)}</blockquote>\n` : ''}<p><a href="${e(m.payUrl)}" style="background:#0b5;color:#fff;padding:10px 16px;text-decoration:none;border-radius:4px">Pagar con PSE</a></p>
<p>O copie este enlace: ${e(m.payUrl)}</p>
${expiry ? `<p>El enlace vence el ${e(expiry)} (hora de Colombia).</p>\n` : ''}${m.internalRef ? `<p>Referencia: ${e(m.internalRef)}</p>\n` : ''}<p style="color:#777;font-size:12px">Si no esperaba esta solicitud, ignore este mensaje.</p>
</body></html>`;
  return { subject, text: lines.join('\n'), html };
}
