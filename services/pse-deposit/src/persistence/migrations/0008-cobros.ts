import { Migration } from '@mikro-orm/migrations';

/**
 * Cobros (issue 40, docs/cobros.md): the expected payments, the payments matched to them (one row per
 * deposit: a payment is matched once, whatever redelivers it), and the payments that aimed at a cobro
 * or came for a company with open cobros but matched none. New tables only: nothing is rewritten.
 * The matcher's lookups each have their index: by transaction id (a dynamic QR's), by reference
 * (unique per company), and the open cobros of a company by expected payer; the sweeper's by expiry
 * and by a key still to be closed; the listing's by (company, created_at, id).
 */
export class Migration0008Cobros extends Migration {
  override name = '0008-cobros';

  override up(): void {
    this.addSql(`create table if not exists pse_deposit.cobros (
      id text primary key,
      company_id text not null,
      reference text not null,
      state text not null,
      amount_type text not null,
      amount bigint,
      min_amount bigint,
      max_amount bigint,
      paid_amount bigint not null default 0,
      description text,
      expected_payer_document text,
      expected_payer_document_key text,
      expected_payer_name text,
      metadata jsonb not null default '{}'::jsonb,
      overpayment_policy text not null,
      methods text[] not null,
      transaction_id text not null,
      breb_key_id text,
      breb_key_value text,
      qr_payload text,
      request_hash text not null,
      iva_applicable boolean not null default false,
      merchant_name text not null default '',
      issue_attempts int not null default 0,
      expires_at timestamptz not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      paid_at timestamptz,
      closed_at timestamptz,
      key_closed_at timestamptz,
      traceparent text
    )`);
    // One live cobro per reference (an ABANDONED one frees it).
    this.addSql(`create unique index if not exists cobros_company_reference_uq on pse_deposit.cobros (company_id, reference) where state <> 'ABANDONED'`);
    this.addSql(`create unique index if not exists cobros_transaction_id_uq on pse_deposit.cobros (transaction_id)`);
    this.addSql(`create index if not exists cobros_listing_idx on pse_deposit.cobros (company_id, created_at desc, id desc)`);
    this.addSql(
      `create index if not exists cobros_open_payer_idx on pse_deposit.cobros (company_id, expected_payer_document_key, expires_at) where state in ('OPEN', 'PARTIALLY_PAID') and expected_payer_document_key is not null`,
    );
    this.addSql(`create index if not exists cobros_open_expiry_idx on pse_deposit.cobros (expires_at) where state in ('OPEN', 'PARTIALLY_PAID', 'CREATING')`);
    this.addSql(
      `create index if not exists cobros_key_close_idx on pse_deposit.cobros (expires_at) where key_closed_at is null and breb_key_id is not null and state in ('PAID', 'EXPIRED', 'CANCELLED')`,
    );
    this.addSql(`create table if not exists pse_deposit.cobro_payments (
      deposit_id text primary key,
      cobro_id text not null,
      company_id text not null,
      source text not null,
      amount bigint not null,
      net_amount bigint not null,
      matched_by text not null,
      disposition text not null,
      payer_name text,
      payer_document text,
      received_at timestamptz not null,
      matched_at timestamptz not null
    )`);
    this.addSql(`create index if not exists cobro_payments_cobro_idx on pse_deposit.cobro_payments (cobro_id, matched_at)`);
    this.addSql(`create table if not exists pse_deposit.cobro_unmatched (
      deposit_id text primary key,
      company_id text not null,
      cobro_id text,
      reason text not null,
      source text not null,
      amount bigint not null,
      received_at timestamptz not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create index if not exists cobro_unmatched_company_idx on pse_deposit.cobro_unmatched (company_id, created_at desc)`);
    this.addSql(`create table if not exists pse_deposit.cobro_history (
      id bigserial primary key,
      cobro_id text not null,
      event text not null,
      from_state text,
      to_state text not null,
      actor text not null,
      deposit_id text,
      at timestamptz not null default now()
    )`);
    this.addSql(`create index if not exists cobro_history_cobro_idx on pse_deposit.cobro_history (cobro_id, id)`);
  }

  override down(): void {
    this.addSql('drop table if exists pse_deposit.cobro_history');
    this.addSql('drop table if exists pse_deposit.cobro_unmatched');
    this.addSql('drop table if exists pse_deposit.cobro_payments');
    this.addSql('drop table if exists pse_deposit.cobros');
  }
}
