import { Migration } from '@mikro-orm/migrations';
import { outboxInboxDdl } from '@wallet/platform';

/**
 * The company is told (docs/security.md "The company is told").
 *
 * - `gateway.outbox` (and its inbox, unused for now; the shape every service shares): the gateway's
 *   events, `company.security_changed`, written in the transaction of the change and relayed to
 *   JetStream after commit (ARCHITECTURE rule 4).
 * - `gateway.mail_outbox`: e-mails written in the transaction that decides them and sent after
 *   commit by the gateway's mail sender (at least once; several replicas share the work with
 *   `for update skip locked`). A body may carry a credential (an enrolment link, an API key), so
 *   subject and bodies are sealed (AES-256-GCM, GATEWAY_ENCRYPTION_KEY) and the bodies are blanked
 *   once the mail was sent or given up.
 */
export class Migration0009SecurityNotices extends Migration {
  override name = '0009-security-notices';

  override up(): void {
    for (const sql of outboxInboxDdl('gateway')) this.addSql(sql);
    this.addSql(`
      create table if not exists gateway.mail_outbox (
        id uuid primary key,
        kind text not null,
        company_id uuid,
        recipient text not null,
        subject_enc text not null,
        text_enc text,
        html_enc text,
        -- Which key sealed it (a fingerprint, not the key): a sender claims only what it can open, so
        -- gateways with another GATEWAY_ENCRYPTION_KEY (a rotation in progress, a second stack on the
        -- same database) never give up each other's mails.
        sealed_with text not null,
        created_at timestamptz not null default now(),
        next_attempt_at timestamptz not null default now(),
        attempts int not null default 0,
        last_error text,
        sent_at timestamptz,
        message_id text,
        failed_at timestamptz,
        check (sent_at is null or failed_at is null)
      )`);
    this.addSql(`create index if not exists mail_outbox_due_idx on gateway.mail_outbox (next_attempt_at) where sent_at is null and failed_at is null`);
    this.addSql(`create index if not exists mail_outbox_company_idx on gateway.mail_outbox (company_id, created_at)`);
  }

  override down(): void {
    this.addSql('drop table if exists gateway.mail_outbox');
    this.addSql('drop table if exists gateway.inbox');
    this.addSql('drop table if exists gateway.outbox');
  }
}
