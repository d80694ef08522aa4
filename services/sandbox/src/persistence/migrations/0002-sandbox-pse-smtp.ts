import { Migration } from '@mikro-orm/migrations';

/**
 * The PSE gateway's payment links, the SMTP sink's messages, and several callbacks per
 * transaction (a PSE link sends PAID then REVERSED): `callbacks.seq` numbers them, and the
 * last one is the one a redelivery sends again.
 */
export class Migration0002SandboxPseSmtp extends Migration {
  override name = '0002-sandbox-pse-smtp';

  override up(): void {
    this.addSql(`
      create table sandbox.pse_links (
        link_id text primary key,
        deposit_id text not null,
        provider_transfer_id text not null,
        amount_cents bigint not null check (amount_cents > 0),
        company_name text not null,
        payer_name text not null,
        payer_email text not null,
        description text,
        expires_at timestamptz not null,
        callback_url text not null,
        status text not null default 'PENDING' check (status in ('PENDING', 'PAID', 'FAILED', 'REVERSED')),
        payer_bank text,
        paid_at timestamptz,
        outcome_at timestamptz,
        reversed_at timestamptz,
        created_at timestamptz not null default now(),
        constraint pse_links_deposit_id_uq unique (deposit_id),
        constraint pse_links_provider_transfer_id_uq unique (provider_transfer_id)
      )`);

    this.addSql(`alter table sandbox.callbacks add column seq integer not null default 1`);
    this.addSql(`alter table sandbox.callbacks drop constraint callbacks_transaction_id_uq`);
    this.addSql(`alter table sandbox.callbacks add constraint callbacks_transaction_seq_uq unique (transaction_id, seq)`);

    // Every message the SMTP sink accepted. `recipients` are the envelope's RCPT TO addresses
    // (To, Cc and Bcc alike); `recipients_lower` serves the case-insensitive `?to=` lookup.
    this.addSql(`
      create table sandbox.emails (
        id bigserial primary key,
        message_id text not null,
        recipients text[] not null,
        recipients_lower text[] not null,
        from_address text,
        subject text,
        text_body text,
        html_body text,
        received_at timestamptz not null default clock_timestamp()
      )`);
    this.addSql(`create index emails_recipients_idx on sandbox.emails using gin (recipients_lower)`);
    this.addSql(`create index emails_received_idx on sandbox.emails (received_at desc, id desc)`);
  }
}
