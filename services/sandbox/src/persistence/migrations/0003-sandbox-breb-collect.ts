import { Migration } from '@mikro-orm/migrations';

/**
 * Bre-B keys registered by participants (collect keys) and the inbound payments the network
 * routed to them. A registration is soft-deleted (`deleted_at`): at most one live registration
 * per key value, while the deleted ones stay so that payments still reach the last holder.
 */
export class Migration0003SandboxBrebCollect extends Migration {
  override name = '0003-sandbox-breb-collect';

  override up(): void {
    this.addSql(`
      create table sandbox.breb_registrations (
        id bigserial primary key,
        key_value text not null check (key_value = lower(key_value) and key_value <> ''),
        key_type text not null check (key_type in ('PHONE', 'EMAIL', 'ALPHANUM', 'NRIC')),
        holder_name text not null,
        holder_document text,
        participant_callback_url text not null,
        anchor_handle text not null,
        registered_at timestamptz not null default clock_timestamp(),
        deleted_at timestamptz,
        constraint breb_registrations_anchor_uq unique (anchor_handle)
      )`);
    this.addSql(`create unique index breb_registrations_live_uq on sandbox.breb_registrations (key_value) where deleted_at is null`);
    this.addSql(`create index breb_registrations_latest_idx on sandbox.breb_registrations (key_value, registered_at desc, id desc)`);

    // Inbound payments (network → participant); their callbacks are rows of sandbox.callbacks
    // whose transaction_id is the provider_transfer_id.
    this.addSql(`
      create table sandbox.breb_incoming (
        provider_transfer_id text primary key,
        registration_id bigint not null references sandbox.breb_registrations (id),
        key_value text not null,
        amount_cents bigint not null check (amount_cents > 0),
        payer_name text not null,
        payer_document text not null,
        payer_bank text not null,
        received_at timestamptz not null default clock_timestamp()
      )`);
  }
}
