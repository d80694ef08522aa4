import type { Queryable } from './sql.js';

/** A mail as stored: subject and bodies sealed (the caller seals them). */
export interface SealedMail {
  id: string;
  kind: string;
  companyId: string | null;
  recipient: string;
  subjectEnc: string;
  textEnc: string;
  htmlEnc: string | null;
  /** Fingerprint of the sealing key. */
  sealedWith: string;
}

/** A mail due for sending, claimed by the sender's transaction. */
export interface DueMail {
  id: string;
  kind: string;
  recipient: string;
  subjectEnc: string;
  textEnc: string | null;
  htmlEnc: string | null;
  attempts: number;
}

/** The gateway's mail outbox (gateway.mail_outbox); bodies are blanked once a mail is sent or given up. */
export class MailOutboxStore {
  async insert(q: Queryable, m: SealedMail): Promise<void> {
    await q.query(
      `insert into gateway.mail_outbox (id, kind, company_id, recipient, subject_enc, text_enc, html_enc, sealed_with) values (?, ?, ?, ?, ?, ?, ?, ?)`,
      [m.id, m.kind, m.companyId, m.recipient, m.subjectEnc, m.textEnc, m.htmlEnc, m.sealedWith],
    );
  }

  /**
   * Claims the next due mail sealed with `keyId` (`for update skip locked`: several senders share
   * the outbox), held until the transaction ends.
   */
  async claimNext(tx: Queryable, keyId: string): Promise<DueMail | undefined> {
    const [row] = await tx.query<{
      id: string;
      kind: string;
      recipient: string;
      subject_enc: string;
      text_enc: string | null;
      html_enc: string | null;
      attempts: number;
    }>(
      `select id::text as id, kind, recipient, subject_enc, text_enc, html_enc, attempts from gateway.mail_outbox
        where sent_at is null and failed_at is null and next_attempt_at <= now() and sealed_with = ?
        order by next_attempt_at, created_at limit 1 for update skip locked`,
      [keyId],
    );
    return row
      ? {
          id: row.id,
          kind: row.kind,
          recipient: row.recipient,
          subjectEnc: row.subject_enc,
          textEnc: row.text_enc,
          htmlEnc: row.html_enc,
          attempts: row.attempts,
        }
      : undefined;
  }

  async markSent(tx: Queryable, id: string, messageId: string): Promise<void> {
    await tx.query(
      `update gateway.mail_outbox set sent_at = now(), message_id = ?, attempts = attempts + 1, last_error = null, text_enc = null, html_enc = null where id = ?`,
      [messageId, id],
    );
  }

  /** Gives the mail up after one more attempt (it cannot be opened). */
  async markUnopenable(tx: Queryable, id: string, error: string): Promise<void> {
    await tx.query(`update gateway.mail_outbox set failed_at = now(), attempts = attempts + 1, last_error = ?, text_enc = null, html_enc = null where id = ?`, [
      error,
      id,
    ]);
  }

  /** Gives the mail up after its last attempt. */
  async markFailed(tx: Queryable, id: string, attempts: number, error: string): Promise<void> {
    await tx.query(`update gateway.mail_outbox set failed_at = now(), attempts = ?, last_error = ?, text_enc = null, html_enc = null where id = ?`, [
      attempts,
      error,
      id,
    ]);
  }

  async scheduleRetry(tx: Queryable, id: string, attempts: number, error: string, delayMs: number): Promise<void> {
    await tx.query(
      `update gateway.mail_outbox set attempts = ?, last_error = ?, next_attempt_at = now() + (?::bigint * interval '1 millisecond') where id = ?`,
      [attempts, error, delayMs, id],
    );
  }
}
