/**
 * Outbox and inbox tables, created by each service's own migration in its own schema
 * (ARCHITECTURE rule 4). Kept here so every service has the same shape.
 */
export function outboxInboxDdl(schema: string): string[] {
  const s = `"${schema}"`;
  return [
    `create table if not exists ${s}.outbox (
      seq bigserial primary key,
      id uuid not null unique,
      subject text not null,
      payload jsonb not null,
      headers jsonb not null default '{}'::jsonb,
      created_at timestamptz not null default now(),
      published_at timestamptz,
      attempts int not null default 0,
      last_error text
    )`,
    `create index if not exists outbox_unpublished_idx on ${s}.outbox (seq) where published_at is null`,
    `create table if not exists ${s}.inbox (
      consumer text not null,
      event_id text not null,
      subject text not null,
      handled_at timestamptz not null default now(),
      primary key (consumer, event_id)
    )`,
  ];
}

/**
 * The index the inbox prune walks (oldest rows first). Services whose inbox is consumed add it in a
 * migration of their own (`create index if not exists`, so it is safe on any database).
 */
export function inboxHandledAtIndexDdl(schema: string): string {
  return `create index if not exists inbox_handled_at_idx on "${schema}".inbox (handled_at)`;
}
