import { Migration } from '@mikro-orm/migrations';

/**
 * Bulk payouts (docs/batches.md). `batches` holds a batch and its saga state (domain/batch.ts);
 * `batch_items` its items as validated (an ACH account number sealed like a transfer's, never in the
 * jsonb). Executed items point at their transfer, which carries `batch_id`. The reference and the
 * Idempotency-Key are unique per company for good, each with a keyed fingerprint of the request.
 */
export class Migration0007Batches extends Migration {
  override name = '0007-batches';

  override up(): void {
    this.addSql(`create table transfer.batches (
      id uuid primary key,
      company_id text not null,
      api_key_id text,
      reference text check (length(reference) between 1 and 100),
      request_fingerprint text not null,
      idempotency_key text check (length(idempotency_key) between 1 and 255),
      state text not null check (state in ('VALIDATED', 'REJECTED', 'FUNDING', 'AWAITING_APPROVAL', 'EXECUTING',
        'COMPLETED', 'PARTIALLY_FAILED', 'FAILED', 'EXPIRED', 'CANCELLED')),
      mode text not null check (mode in ('ALL', 'VALID_ONLY')),
      source text not null check (source in ('JSON', 'CSV')),
      description text,
      item_count integer not null check (item_count between 1 and 10000),
      valid_count integer not null,
      invalid_count integer not null,
      iva_applicable boolean not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      expires_at timestamptz not null,
      executed_at timestamptz,
      completed_at timestamptz,
      cancelled_at timestamptz,
      error_message text,
      next_attempt_at timestamptz
    )`);
    this.addSql('create unique index batches_reference_uq on transfer.batches (company_id, reference) where reference is not null');
    this.addSql('create unique index batches_idempotency_key_uq on transfer.batches (company_id, idempotency_key) where idempotency_key is not null');
    this.addSql('create index batches_company_created on transfer.batches (company_id, created_at desc, id desc)');
    this.addSql('create index batches_due on transfer.batches (next_attempt_at) where next_attempt_at is not null');
    this.addSql(`create table transfer.batch_items (
      batch_id uuid not null references transfer.batches (id),
      seq integer not null,
      line integer,
      status text not null check (status in ('VALID', 'INVALID', 'REJECTED', 'EXECUTED', 'NOT_EXECUTED')),
      rail text check (rail in ('BREB', 'ACH')),
      amount bigint not null default 0,
      fixed_fee bigint not null default 0,
      variable_fee bigint not null default 0,
      subtotal_fee bigint not null default 0,
      iva_amount bigint not null default 0,
      total_charged bigint not null default 0,
      target_name text not null default '',
      target_document text not null default '',
      counterparty_document text,
      reference text,
      description text,
      destination jsonb,
      account_number_sealed text,
      account_number_masked text,
      error_code text,
      error_message text,
      transfer_id uuid,
      primary key (batch_id, seq)
    )`);
    this.addSql('create index batch_items_transfer on transfer.batch_items (transfer_id) where transfer_id is not null');
    this.addSql('alter table transfer.transfers add column batch_id uuid');
    this.addSql('create index transfers_batch on transfer.transfers (batch_id, state) where batch_id is not null');
  }

  override down(): void {
    this.addSql('drop index if exists transfer.transfers_batch');
    this.addSql('alter table transfer.transfers drop column if exists batch_id');
    this.addSql('drop table if exists transfer.batch_items');
    this.addSql('drop table if exists transfer.batches');
  }
}
