import { escapeHtml, headerSafe, paymentRequestMail } from './email-template.js';

describe('payment request e-mail', () => {
  const base = {
    companyName: 'Acme S.A.S.',
    recipientName: 'Luis',
    amountCents: 123_456_789n,
    payUrl: 'http://127.0.0.1:8090/pse/pay/dep_abc',
    expiresAt: new Date('2026-03-01T05:00:00Z'),
  };

  it('Spanish template: subject, greeting, es-CO amount, link, Bogotá expiry', () => {
    const m = paymentRequestMail(base);
    expect(m.subject).toBe('Solicitud de pago de Acme S.A.S.');
    expect(m.text).toContain('Hola Luis,');
    expect(m.text).toContain('$ 1.234.567,89');
    expect(m.text).toContain(base.payUrl);
    expect(m.text).toMatch(/1 de marzo de 2026/); // 00:00 in Bogotá (UTC−5)
    expect(m.html).toContain(`href="${base.payUrl}"`);
  });

  it('escapes the custom message in html and keeps it plain in text', () => {
    const m = paymentRequestMail({ ...base, customMessage: '<b>hola</b> & "adiós"' });
    expect(m.html).toContain('&lt;b&gt;hola&lt;/b&gt; &amp; &quot;adiós&quot;');
    expect(m.html).not.toContain('<b>hola</b>');
    expect(m.text).toContain('<b>hola</b> & "adiós"');
    expect(escapeHtml(`'`)).toBe('&#39;');
  });

  it('nothing reaches a header with CR/LF', () => {
    expect(headerSafe('Acme\r\nBcc: evil@x.co')).toBe('Acme Bcc: evil@x.co');
    expect(paymentRequestMail({ ...base, companyName: 'Acme\r\nBcc: evil@x.co' }).subject).not.toMatch(/[\r\n]/);
  });
});
