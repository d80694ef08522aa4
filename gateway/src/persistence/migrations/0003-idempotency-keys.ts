import { Migration } from '@mikro-orm/migrations';

/**
 * `Idempotency-Key` records: one row per company and key. IN_FLIGHT while the first request runs
 * (`claim_id` names it, `locked_until` bounds how long a crashed replica can hold it), then DONE
 * with the answer to replay until `expires_at`. `response_body` is the answer's JSON sealed with
 * AES-256-GCM (gateway/src/auth/secret-box.ts): a replayed answer may carry a secret shown once
 * (a webhook endpoint's signing secret), so it is never stored in clear.
 */
export class Migration0003IdempotencyKeys extends Migration {
  override name = '0003-idempotency-keys';

  override up(): void {
    this.addSql(`
      create table if not exists gateway.idempotency_keys (
        company_id uuid not null,
        key text not null check (length(key) between 1 and 255),
        method text not null,
        path text not null,
        request_hash text not null,
        state text not null check (state in ('IN_FLIGHT', 'DONE')),
        claim_id uuid not null,
        status_code integer,
        response_body text,
        response_headers jsonb,
        created_at timestamptz not null default now(),
        locked_until timestamptz not null,
        expires_at timestamptz not null,
        primary key (company_id, key),
        check (state = 'IN_FLIGHT' or status_code is not null)
      )`);
    this.addSql(`create index if not exists idempotency_keys_expires_idx on gateway.idempotency_keys (expires_at)`);
  }

  override down(): void {
    this.addSql('drop table if exists gateway.idempotency_keys');
  }
}
