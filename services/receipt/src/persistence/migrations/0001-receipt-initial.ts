import { Migration } from '@mikro-orm/migrations';
import { outboxInboxDdl } from '@wallet/platform';

/**
 * The read model (built only from `transfer.*` and `deposit.*` events; no cross-service reads):
 * one row per transfer and per deposit, every column nullable except the keys, plus the status's
 * event time and the newest event applied (out-of-order merge). The inbox de-duplicates event ids.
 */
export class Migration0001ReceiptInitial extends Migration {
  override name = '0001-receipt-initial';

  override up(): void {
    this.addSql(`
      create table receipt.transactions (
        id text primary key,
        company_id text not null,
        status text,
        status_at timestamptz,
        rail text,
        amount bigint,
        total_fee bigint,
        iva_amount bigint,
        net_amount bigint,
        target_name text,
        target_document text,
        reference text,
        description text,
        bank_name text,
        bank_account_type text,
        bank_account_masked text,
        provider_transfer_id text,
        error_message text,
        api_key_id text,
        created_at timestamptz,
        completed_at timestamptz,
        last_event_at timestamptz not null,
        last_event_id text not null,
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`
      create table receipt.deposits (
        id text primary key,
        company_id text not null,
        status text,
        status_at timestamptz,
        source text,
        amount bigint,
        fee_amount bigint,
        iva_amount bigint,
        net_amount bigint,
        currency text,
        breb_key_id text,
        breb_key_external_id text,
        breb_key_name text,
        breb_key_value text,
        payer_name text,
        payer_document text,
        payer_bank text,
        payer_email text,
        provider_transfer_id text,
        provider_confirmed_at timestamptz,
        internal_ref text,
        expires_at timestamptz,
        created_at timestamptz,
        last_event_at timestamptz not null,
        last_event_id text not null,
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`create index transactions_company_idx on receipt.transactions (company_id, id)`);
    this.addSql(`create index deposits_company_idx on receipt.deposits (company_id, id)`);
    for (const sql of outboxInboxDdl('receipt')) this.addSql(sql);
  }

  override down(): void {
    this.addSql('drop table if exists receipt.transactions, receipt.deposits, receipt.outbox, receipt.inbox');
  }
}
