import { Migration } from '@mikro-orm/migrations';
import { outboxInboxDdl } from '@wallet/platform';
/**
 * Transfers (the saga's record), their append-only state history, `reference` idempotency claims,
 * remembered resolve-key results, the AML list, handled rail callbacks, and the outbox/inbox.
 * No foreign keys across services: the ledger's hold and movement are referenced by id only.
 */
export class Migration0001TransferInitial extends Migration {
    name = '0001-transfer-initial';
    up() {
        this.addSql(`
      create table transfer.transfers (
        id uuid primary key,
        company_id text not null,
        api_key_id text,
        rail text not null check (rail in ('BREB', 'ACH')),
        state text not null check (state in ('RECEIVED', 'RESERVED', 'DISPATCHED', 'COMPLETED', 'FAILED', 'REJECTED')),
        amount bigint not null check (amount > 0),
        fixed_fee bigint not null check (fixed_fee >= 0),
        variable_fee bigint not null check (variable_fee >= 0),
        subtotal_fee bigint not null check (subtotal_fee = fixed_fee + variable_fee),
        iva_applicable boolean not null,
        iva_amount bigint not null check (iva_amount >= 0),
        total_charged bigint not null check (total_charged = subtotal_fee + iva_amount),
        target_name text not null,
        target_document text not null,
        counterparty_document text not null,
        reference text,
        description text,
        destination jsonb not null,
        hold_id uuid,
        provider_transfer_id text,
        error_message text,
        reject_code text,
        dispatch_attempts integer not null default 0,
        dispatch_ambiguous boolean not null default false,
        last_dispatch_error text,
        next_attempt_at timestamptz,
        created_at timestamptz not null default now(),
        dispatched_at timestamptz,
        completed_at timestamptz,
        finished_at timestamptz,
        updated_at timestamptz not null default now()
      )`);
        // The sweeper's work queue: only live transfers, by due time.
        this.addSql(`create index transfers_due_idx on transfer.transfers (next_attempt_at) where state in ('RECEIVED', 'RESERVED', 'DISPATCHED')`);
        // Counterparty limits: a company's outflows to one document in the current day / month.
        this.addSql(`create index transfers_counterparty_idx on transfer.transfers (company_id, counterparty_document, created_at)`);
        this.addSql(`
      create table transfer.state_history (
        seq bigserial primary key,
        transfer_id uuid not null,
        state text not null,
        reason text,
        at timestamptz not null default now()
      )`);
        this.addSql(`create index state_history_transfer_idx on transfer.state_history (transfer_id, seq)`);
        // One row per (company, reference): the claim of the request that owns it inside the window.
        this.addSql(`
      create table transfer.send_references (
        company_id text not null,
        reference text not null,
        request_hash text not null,
        transfer_id uuid not null,
        created_at timestamptz not null default now(),
        answered_at timestamptz,
        primary key (company_id, reference)
      )`);
        this.addSql(`
      create table transfer.resolved_keys (
        company_id text not null,
        anchor_handle text not null,
        key_type text not null,
        key_value text not null,
        recipient jsonb not null,
        resolved_at timestamptz not null default now(),
        primary key (company_id, anchor_handle)
      )`);
        this.addSql(`create index resolved_keys_age_idx on transfer.resolved_keys (resolved_at)`);
        this.addSql(`
      create table transfer.aml_entries (
        id uuid primary key,
        document_number text not null,
        normalized_document text not null,
        name text,
        reason text not null,
        created_at timestamptz not null default now(),
        removed_at timestamptz
      )`);
        this.addSql(`create unique index aml_entries_live_uq on transfer.aml_entries (normalized_document) where removed_at is null`);
        this.addSql(`
      create table transfer.rail_callbacks (
        event_id text primary key,
        transfer_id uuid not null,
        rail text not null,
        status text not null,
        received_at timestamptz not null default now()
      )`);
        for (const sql of outboxInboxDdl('transfer'))
            this.addSql(sql);
    }
    down() {
        for (const t of ['inbox', 'outbox', 'rail_callbacks', 'aml_entries', 'resolved_keys', 'send_references', 'state_history', 'transfers']) {
            this.addSql(`drop table if exists transfer.${t}`);
        }
    }
}
//# sourceMappingURL=0001-transfer-initial.js.map