import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { maskPersonalData, type Logger } from '@wallet/platform';
import { simpleParser, type AddressObject } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { EmailStore } from '../persistence/email.store.js';

/** Largest message the sink takes (the product's mails are small; attachments are not kept). */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

export interface SmtpSink {
  port: number;
  close(): Promise<void>;
}

function addresses(a: AddressObject | AddressObject[] | undefined): string[] {
  const list = a === undefined ? [] : Array.isArray(a) ? a : [a];
  return list.flatMap((o) => o.value.map((v) => v.address ?? '')).filter(Boolean);
}

/**
 * An SMTP server that accepts every message (no auth, no TLS: it listens on loopback only),
 * parses it and stores it; the product's mails are then read with GET /sandbox/emails.
 * Recipients are the envelope's RCPT TO addresses (To, Cc and Bcc alike).
 */
export async function startSmtpSink(o: { host: string; port: number; store: EmailStore; log: Logger }): Promise<SmtpSink> {
  const server = new SMTPServer({
    name: 'sandbox.local',
    banner: 'wallet sandbox SMTP sink',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    hideSTARTTLS: true,
    size: MAX_MESSAGE_BYTES,
    logger: false,
    closeTimeout: 2_000,
    socketTimeout: 30_000,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then(async (mail) => {
          if (stream.sizeExceeded) {
            const err = Object.assign(new Error('El mensaje supera el tamaño permitido'), { responseCode: 552 });
            return callback(err);
          }
          const envelopeTo = session.envelope.rcptTo.map((r) => r.address);
          const to = envelopeTo.length > 0 ? envelopeTo : [...addresses(mail.to), ...addresses(mail.cc), ...addresses(mail.bcc)];
          const mailFrom = session.envelope.mailFrom;
          const messageId = mail.messageId ?? `<${randomUUID()}@sandbox.local>`;
          await o.store.insert({
            messageId,
            to,
            from: mail.from?.text ?? (mailFrom ? mailFrom.address : null),
            subject: mail.subject ?? null,
            text: mail.text ?? null,
            html: typeof mail.html === 'string' ? mail.html : null,
          });
          // Recipients are personal data: logged masked (`c***@example.com`).
          o.log.info({ messageId, to: to.map(maskPersonalData), subject: mail.subject }, 'e-mail received');
          callback();
        })
        .catch((err: unknown) => {
          o.log.error({ err }, 'could not store an e-mail');
          callback(Object.assign(new Error('No se pudo guardar el mensaje'), { responseCode: 451 }));
        });
    },
  });
  server.on('error', (err) => o.log.error({ err }, 'SMTP sink error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    port,
    close: () => (closing ??= new Promise<void>((resolve) => server.close(() => resolve()))),
  };
}
