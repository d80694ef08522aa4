import { createHash, randomUUID } from 'node:crypto';
import { PeriodicTask, SecretBox, type Database, type Logger } from '@wallet/platform';
import { MailOutboxStore } from '../persistence/mail-outbox.store.js';
import type { Queryable } from '../persistence/sql.js';

/** One e-mail as a use case decides it. `kind` says what it is (logged and kept; e.g. `company.security_changed`). */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
  kind: string;
  companyId?: string | null;
}

/** Where the sender hands a mail over (SMTP in the product; tests may put a fake in its place). */
export interface MailTransport {
  send(m: { to: string; subject: string; text: string; html?: string }): Promise<{ messageId: string }>;
  close(): void;
}

/** Something plausible as one address: no spaces, no header-breaking characters, one `@`. */
const ADDRESS = /^[^\s@<>(),;:"\\[\]]+@[^\s@<>(),;:"\\[\]]+$/;
/** Header text on one line (a CR or LF in a subject would start a header of its own). */
const oneLine = (s: string) => s.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();

/** A fingerprint of the sealing key (never the key): which senders can open a row. */
export function sealingKeyId(secretKey: string): string {
  return createHash('sha256').update(`gateway.mail_outbox:${secretKey}`, 'utf8').digest('hex').slice(0, 32);
}

/**
 * The gateway's durable mail outbox (docs/security.md, "The company is told"). `enqueue` writes
 * the mail in the caller's transaction, so it leaves if and only if the change that decided it
 * commits; the MailSender sends it after commit. A body may carry a credential (an enrolment link,
 * a new API key): subject and bodies are stored sealed with GATEWAY_ENCRYPTION_KEY, the bodies are
 * blanked once sent, and nothing of them is ever logged.
 */
export class MailOutbox {
  private readonly box: SecretBox;
  private readonly keyId: string;
  private readonly store = new MailOutboxStore();

  constructor(
    opts: { secretKey: string },
    private readonly wake: () => void = () => undefined,
  ) {
    this.box = new SecretBox(opts.secretKey);
    this.keyId = sealingKeyId(opts.secretKey);
  }

  /** Writes the mail in `tx`; returns its id. The sender picks it up once `tx` commits. */
  async enqueue(tx: Queryable, mail: OutgoingMail): Promise<string> {
    const to = mail.to.trim();
    if (!ADDRESS.test(to) || to.length > 320) throw new Error('mail outbox: not one e-mail address'); // a caller's bug: the address itself is not logged
    if (!/^[a-z0-9_.-]{1,64}$/.test(mail.kind)) throw new Error(`mail outbox: not a mail kind: ${mail.kind.slice(0, 64)}`);
    const id = randomUUID();
    await this.store.insert(tx, {
      id,
      kind: mail.kind,
      companyId: mail.companyId ?? null,
      recipient: to,
      subjectEnc: this.box.seal(oneLine(mail.subject)),
      textEnc: this.box.seal(mail.text),
      htmlEnc: mail.html === undefined ? null : this.box.seal(mail.html),
      sealedWith: this.keyId,
    });
    return id;
  }

  /** Asks the sender to look now (call after the transaction that enqueued commits); the poll finds the mail anyway. */
  nudge(): void {
    this.wake();
  }
}

export interface MailSenderOptions {
  secretKey: string;
  /** How often the outbox is polled (a nudge looks at once). */
  intervalMs: number;
  /** Mails sent per run at most (each in its own transaction). */
  batch?: number;
  /** First retry after this long, doubling each attempt up to `retryMaxDelayMs`. */
  retryBaseMs: number;
  retryMaxDelayMs: number;
  /** After this many failed attempts the mail is given up (failed_at, bodies blanked). */
  maxAttempts: number;
}

/**
 * Sends what the MailOutbox holds, after commit, at least once. Each mail is claimed with
 * `for update skip locked` in its own transaction, held while SMTP takes it, and marked sent in
 * that transaction: several replicas share the outbox without sending a mail twice, and a crash
 * between the SMTP answer and the commit sends it again (at least once, never lost). A failure is
 * retried with an exponential backoff; after `maxAttempts` the mail is given up.
 */
export class MailSender {
  private readonly box: SecretBox;
  private readonly keyId: string;
  private readonly task: PeriodicTask;
  private readonly store = new MailOutboxStore();
  private running: Promise<number> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly transport: MailTransport,
    private readonly opts: MailSenderOptions,
    private readonly log: Logger,
  ) {
    this.box = new SecretBox(opts.secretKey);
    this.keyId = sealingKeyId(opts.secretKey);
    this.task = new PeriodicTask('mail sender', opts.intervalMs, () => this.runOnce(), log);
  }

  start(): void {
    this.stopped = false;
    this.task.start();
  }

  /** Looks at the outbox now (coalesced with a run in progress). */
  nudge(): void {
    if (this.stopped) return;
    void this.runOnce().catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'mail sender failed; will retry'));
  }

  /** Sends the due mails (up to `batch`); resolves with how many were sent. */
  runOnce(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      let total = 0;
      try {
        do {
          this.again = false;
          total += await this.sendDue();
        } while (this.again && !this.stopped);
      } finally {
        this.running = undefined;
      }
      return total;
    })();
    return this.running;
  }

  private async sendDue(): Promise<number> {
    let sent = 0;
    for (let i = 0; i < (this.opts.batch ?? 50) && !this.stopped; i++) {
      const outcome = await this.db.tx(async (tx) => {
        const row = await this.store.claimNext(tx, this.keyId);
        if (!row) return 'none' as const;
        let mail: { to: string; subject: string; text: string; html?: string };
        try {
          mail = {
            to: row.recipient,
            subject: this.box.open(row.subjectEnc),
            text: this.box.open(row.textEnc ?? ''),
            ...(row.htmlEnc ? { html: this.box.open(row.htmlEnc) } : {}),
          };
        } catch {
          // Sealed with another key (or altered): no retry can read it.
          await this.store.markUnopenable(tx, row.id, 'cannot be opened with GATEWAY_ENCRYPTION_KEY');
          this.log.error({ mailId: row.id, kind: row.kind }, 'mail given up: its sealed content cannot be opened');
          return 'failed' as const;
        }
        try {
          const { messageId } = await this.transport.send(mail);
          await this.store.markSent(tx, row.id, messageId.slice(0, 500));
          this.log.info({ mailId: row.id, kind: row.kind, attempts: row.attempts + 1 }, 'mail sent');
          return 'sent' as const;
        } catch (err) {
          const attempts = row.attempts + 1;
          // An SMTP answer may quote the recipient: addresses are personal data, kept out of logs and the row.
          const error = String((err as Error)?.message ?? err)
            .replace(/[^\s<>@]+@[^\s<>@]+/g, '<dirección>')
            .slice(0, 500);
          if (attempts >= this.opts.maxAttempts) {
            await this.store.markFailed(tx, row.id, attempts, error);
            this.log.error({ mailId: row.id, kind: row.kind, attempts, err: error }, 'mail given up after its last attempt');
          } else {
            const delayMs = Math.min(this.opts.retryBaseMs * 2 ** (attempts - 1), this.opts.retryMaxDelayMs);
            await this.store.scheduleRetry(tx, row.id, attempts, error, delayMs);
            this.log.warn({ mailId: row.id, kind: row.kind, attempts, retryInMs: delayMs, err: error }, 'mail not sent; will retry');
          }
          return 'failed' as const;
        }
      });
      // After a failure the rest waits for the next run (an SMTP server that is down fails them all).
      if (outcome !== 'sent') break;
      sent++;
    }
    return sent;
  }

  /** Stops polling and waits for a mail in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.task.stop();
    await this.running?.catch(() => undefined);
  }
}
