// TEMPORARY stand-in until the mail outbox branch merges (replaced by it).
import type { Queryable } from '../persistence/sql.js';
export interface OutgoingMail { to: string; subject: string; text: string; html?: string; kind: string; companyId?: string | null }
export class MailOutbox {
  async enqueue(_tx: Queryable, _mail: OutgoingMail): Promise<string> { return 'stub'; }
}
