import { AppError, type Logger } from '@wallet/platform';
import nodemailer, { type Transporter } from 'nodemailer';
import { headerSafe } from '../domain/email-template.js';
import type { Mailer } from '../app/ports.js';

/** nodemailer over SMTP_URL. Any SMTP failure → SERVICE_UNAVAILABLE (the message was not accepted). */
export class SmtpMailer implements Mailer {
  private readonly transport: Transporter;
  constructor(
    smtpUrl: string,
    private readonly from: string,
    timeoutMs: number,
    private readonly log: Logger,
  ) {
    const u = new URL(smtpUrl);
    this.transport = nodemailer.createTransport({
      host: u.hostname,
      port: Number(u.port || (u.protocol === 'smtps:' ? 465 : 25)),
      secure: u.protocol === 'smtps:',
      ...(u.username ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } } : {}),
      // Loopback sinks speak plain SMTP; real relays upgrade with STARTTLS when offered.
      ignoreTLS: ['127.0.0.1', 'localhost', '::1'].includes(u.hostname),
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    });
  }

  async send(m: { to: { name?: string; address: string }; subject: string; text: string; html: string }): Promise<{ messageId: string }> {
    try {
      const info = await this.transport.sendMail({
        from: this.from,
        to: m.to.name ? { name: headerSafe(m.to.name), address: headerSafe(m.to.address) } : headerSafe(m.to.address),
        subject: headerSafe(m.subject),
        text: m.text,
        html: m.html,
      });
      if (info.rejected && info.rejected.length > 0) throw new Error('recipient rejected');
      return { messageId: info.messageId };
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'SMTP send failed');
      throw new AppError('SERVICE_UNAVAILABLE', 'No fue posible enviar el correo; intente de nuevo.');
    }
  }

  close(): void {
    this.transport.close();
  }
}
