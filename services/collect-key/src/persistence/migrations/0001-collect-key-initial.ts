import { Migration } from '@mikro-orm/migrations';
import { outboxInboxDdl } from '@wallet/platform';

/**
 * Collect keys, their static QRs, the inbound Bre-B payments received for them (the deposits this
 * service creates and publishes on DEPOSITS) with the provider events handled, and the outbox/inbox.
 */
export class Migration0001CollectKeyInitial extends Migration {
  override name = '0001-collect-key-initial';

  override up(): void {
    this.addSql(`
      create table collect_key.keys (
        id text primary key check (id ~ '^bkey_[a-z0-9]{24}$'),
        company_id text not null,
        external_id text not null check (external_id ~ '^[A-Za-z0-9._:-]{1,64}$'),
        name text not null,
        key_type text not null default 'ALPHANUM' check (key_type = 'ALPHANUM'),
        key_value text not null check (key_value ~ '^@[a-z0-9]{3,40}$'),
        state text not null check (state in ('ACTIVE', 'SUSPENDED', 'DELETED')),
        created_at timestamptz not null default clock_timestamp(),
        deleted_at timestamptz,
        updated_at timestamptz not null default now(),
        check ((state = 'DELETED') = (deleted_at is not null))
      )`);
    // One live key per customer of a company, and one live holder per key value across companies.
    this.addSql(`create unique index keys_live_external_uq on collect_key.keys (company_id, external_id) where state <> 'DELETED'`);
    this.addSql(`create unique index keys_live_value_uq on collect_key.keys (key_value) where state <> 'DELETED'`);
    this.addSql(`create index keys_company_idx on collect_key.keys (company_id, created_at desc, id desc)`);
    this.addSql(`create index keys_company_ext_idx on collect_key.keys (company_id, external_id, created_at desc)`);
    this.addSql(`create index keys_value_idx on collect_key.keys (key_value, created_at desc)`);

    this.addSql(`
      create table collect_key.qrs (
        id text primary key check (id ~ '^qr_[a-z0-9]{24}$'),
        company_id text not null,
        key_id text not null references collect_key.keys (id),
        type text not null default 'STATIC' check (type = 'STATIC'),
        reference text not null unique,
        payload text not null,
        is_paid boolean not null default false,
        revoked_at timestamptz,
        created_at timestamptz not null default clock_timestamp()
      )`);
    this.addSql(`create unique index qrs_live_key_uq on collect_key.qrs (key_id) where revoked_at is null`);

    // One row per inbound payment (the deposit), written as an intent before the ledger call
    // (pending_step CREDIT/HOLD) and completed with its event after it.
    this.addSql(`
      create table collect_key.payments (
        deposit_id text primary key check (deposit_id ~ '^dep_[a-z0-9]{24}$'),
        provider_transfer_id text not null unique,
        company_id text not null,
        key_id text not null references collect_key.keys (id),
        key_external_id text not null,
        key_name text not null,
        key_value text not null,
        key_state text not null,
        status text not null check (status in ('ASSIGNED', 'UNASSIGNED')),
        amount bigint not null check (amount > 0),
        fixed_fee bigint not null default 0 check (fixed_fee >= 0),
        variable_fee bigint not null default 0 check (variable_fee >= 0),
        subtotal_fee bigint not null default 0 check (subtotal_fee = fixed_fee + variable_fee),
        iva_applicable boolean not null default false,
        iva_amount bigint not null default 0 check (iva_amount >= 0),
        total_charged bigint not null default 0 check (total_charged = subtotal_fee + iva_amount),
        net_amount bigint not null check (net_amount = amount - total_charged),
        payer_name text,
        payer_document text,
        payer_bank text,
        received_at timestamptz not null,
        movement_id uuid not null unique,
        pending_step text check (pending_step in ('CREDIT', 'HOLD')),
        step_at timestamptz,
        created_at timestamptz not null default clock_timestamp(),
        updated_at timestamptz not null default now(),
        check (status = 'ASSIGNED' or total_charged = 0)
      )`);
    this.addSql(`create index payments_key_idx on collect_key.payments (key_id, created_at desc)`);
    this.addSql(`create index payments_pending_idx on collect_key.payments (step_at) where pending_step is not null`);
    this.addSql(`
      create table collect_key.provider_events (
        event_id text primary key,
        provider_transfer_id text not null,
        received_at timestamptz not null default now()
      )`);
    for (const sql of outboxInboxDdl('collect_key')) this.addSql(sql);
  }

  override down(): void {
    this.addSql(
      'drop table if exists collect_key.provider_events, collect_key.payments, collect_key.qrs, collect_key.keys, collect_key.outbox, collect_key.inbox',
    );
  }
}
