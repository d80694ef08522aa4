import { Migration } from '@mikro-orm/migrations';
import { outboxInboxDdl } from '@wallet/platform';

/**
 * Endpoints (per company; signing secrets sealed with AES-256-GCM, the previous one kept during a
 * rotation overlap), events (each public event once, its body frozen so every attempt sends the
 * same bytes) and deliveries (one per endpoint and event: the worker's queue and the delivery log).
 * The inbox de-duplicates source event ids.
 */
export class Migration0001WebhookInitial extends Migration {
  override name = '0001-webhook-initial';

  override up(): void {
    this.addSql(`
      create table webhook.endpoints (
        id text primary key,
        company_id text not null,
        url text not null,
        description text,
        events text[] not null,
        enabled boolean not null default true,
        secret_sealed text not null,
        previous_secret_sealed text,
        previous_secret_expires_at timestamptz,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        deleted_at timestamptz
      )`);
    this.addSql(`create index endpoints_company_idx on webhook.endpoints (company_id, created_at) where deleted_at is null`);
    this.addSql(`
      create table webhook.events (
        id text primary key,
        company_id text not null,
        type text not null,
        resource_key text,
        resource_id text,
        body text not null,
        created_at timestamptz not null
      )`);
    this.addSql(`
      create table webhook.deliveries (
        id text primary key,
        seq bigserial not null unique,
        company_id text not null,
        endpoint_id text not null references webhook.endpoints (id),
        event_id text not null references webhook.events (id),
        event_type text not null,
        resource_key text,
        status text not null default 'PENDING',
        attempts integer not null default 0,
        next_attempt_at timestamptz not null default now(),
        give_up_at timestamptz not null,
        last_attempt_at timestamptz,
        last_response_status integer,
        last_latency_ms integer,
        last_error text,
        delivered_at timestamptz,
        replay_of text,
        created_at timestamptz not null default now(),
        constraint deliveries_status_chk check (status in ('PENDING', 'SUCCEEDED', 'FAILED'))
      )`);
    // One automatic delivery per endpoint and event (replays are extra rows with replay_of set).
    this.addSql(`create unique index deliveries_endpoint_event_uq on webhook.deliveries (endpoint_id, event_id) where replay_of is null`);
    this.addSql(`create index deliveries_due_idx on webhook.deliveries (next_attempt_at) where status = 'PENDING'`);
    this.addSql(`create index deliveries_order_idx on webhook.deliveries (endpoint_id, resource_key, seq) where status = 'PENDING'`);
    this.addSql(`create index deliveries_company_idx on webhook.deliveries (company_id, seq desc)`);
    for (const sql of outboxInboxDdl('webhook')) this.addSql(sql);
  }

  override down(): void {
    this.addSql('drop table if exists webhook.deliveries, webhook.events, webhook.endpoints, webhook.outbox, webhook.inbox');
  }
}
