import nodemailer, { type Transporter } from 'nodemailer';
import type { MailTransport } from '../app/mail-outbox.js';

/**
 * nodemailer over SMTP (as services/pse-deposit/src/adapters/mailer.ts): `smtp://` (STARTTLS when
 * the server offers it, except on loopback sinks) or `smtps://`, credentials in the URL.
 */
export class SmtpMailTransport implements MailTransport {
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
    timeoutMs: number,
  ) {
    const u = new URL(smtpUrl);
    this.transport = nodemailer.createTransport({
      host: u.hostname,
      port: Number(u.port || (u.protocol === 'smtps:' ? 465 : 25)),
      secure: u.protocol === 'smtps:',
      ...(u.username ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } } : {}),
      // Loopback sinks speak plain SMTP; real relays upgrade with STARTTLS when offered.
      ignoreTLS: ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(u.hostname),
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    });
  }

  async send(m: { to: string; subject: string; text: string; html?: string }): Promise<{ messageId: string }> {
    const info = await this.transport.sendMail({
      from: this.from,
      to: m.to,
      subject: m.subject,
      text: m.text,
      ...(m.html !== undefined ? { html: m.html } : {}),
    });
    if (info.rejected && info.rejected.length > 0) throw new Error('recipient rejected');
    return { messageId: String(info.messageId ?? '') };
  }

  close(): void {
    this.transport.close();
  }
}
