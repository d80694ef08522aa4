import type { Database } from '@wallet/platform';

/** The SMTP sink's messages. */

export interface EmailRow {
  messageId: string;
  to: string[];
  from: string | null;
  subject: string | null;
  text: string | null;
  html: string | null;
  receivedAt: string;
}

export interface NewEmail {
  messageId: string;
  to: string[];
  from: string | null;
  subject: string | null;
  text: string | null;
  html: string | null;
}

interface RawEmail {
  message_id: string;
  recipients: string[];
  from_address: string | null;
  subject: string | null;
  text_body: string | null;
  html_body: string | null;
  received_at: string;
}

const COLS = `message_id, recipients, from_address, subject, text_body, html_body,
  to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as received_at`;

function toEmail(r: RawEmail): EmailRow {
  return {
    messageId: r.message_id,
    to: r.recipients,
    from: r.from_address,
    subject: r.subject,
    text: r.text_body,
    html: r.html_body,
    receivedAt: r.received_at,
  };
}

export class EmailStore {
  constructor(private readonly db: Database) {}

  async insert(e: NewEmail): Promise<void> {
    await this.db.prepared(
      `insert into sandbox.emails (message_id, recipients, recipients_lower, from_address, subject, text_body, html_body)
       values ($1, $2::text[], $3::text[], $4, $5, $6, $7)`,
      [e.messageId, e.to, e.to.map((a) => a.toLowerCase()), e.from, e.subject, e.text, e.html],
    );
  }

  /** Newest first; `to` matches any recipient, case-insensitively. */
  async list(to: string | undefined, limit: number): Promise<EmailRow[]> {
    const rows =
      to === undefined
        ? await this.db.prepared<RawEmail>(`select ${COLS} from sandbox.emails order by received_at desc, id desc limit $1`, [limit])
        : await this.db.prepared<RawEmail>(
            `select ${COLS} from sandbox.emails where recipients_lower @> array[lower($1)]::text[] order by received_at desc, id desc limit $2`,
            [to, limit],
          );
    return rows.map(toEmail);
  }
}
