import { Migration } from '@mikro-orm/migrations';
import { outboxInboxDdl } from '@wallet/platform';

/**
 * Deposits (PSE now; Bre-B collect-key deposits later, hence `source` and the nullable
 * `breb_key_*` columns), their append-only state history, the provider callbacks handled (dedupe)
 * and the outbox/inbox. The ledger movement is referenced by id only.
 */
export class Migration0001PseDepositInitial extends Migration {
  override name = '0001-pse-deposit-initial';

  override up(): void {
    this.addSql(`
      create table pse_deposit.deposits (
        id text primary key check (id ~ '^dep_[a-z0-9]{24}$'),
        company_id text not null,
        source text not null check (source in ('PSE', 'BREB')),
        status text not null check (status in ('PENDING_CONFIRM', 'ASSIGNED', 'FAILED', 'EXPIRED', 'UNASSIGNED', 'REVERSED')),
        amount bigint not null check (amount > 0),
        fixed_fee bigint not null default 0 check (fixed_fee >= 0),
        variable_fee bigint not null default 0 check (variable_fee >= 0),
        subtotal_fee bigint not null default 0 check (subtotal_fee = fixed_fee + variable_fee),
        iva_applicable boolean not null default false,
        iva_amount bigint not null default 0 check (iva_amount >= 0),
        total_charged bigint not null default 0 check (total_charged = subtotal_fee + iva_amount),
        net_amount bigint not null check (net_amount = amount - total_charged),
        currency text not null default 'COP',
        payer_document_type smallint,
        payer_document_number text,
        payer_first_name text,
        payer_last_name text,
        payer_name text,
        payer_email text,
        payer_phone text,
        payer_bank text,
        internal_ref text,
        api_key_id text,
        paygateway_url text,
        provider_link_id text,
        expires_at timestamptz,
        provider_transfer_id text,
        provider_confirmed_at timestamptz,
        movement_id uuid not null unique,
        pending_step text check (pending_step in ('CREDIT', 'REVERSE')),
        step_at timestamptz,
        error_message text,
        breb_key_id text,
        breb_key_external_id text,
        breb_key_name text,
        breb_key_value text,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    // The listing: a company's deposits newest first, optionally by status / source / key.
    this.addSql(`create index deposits_company_idx on pse_deposit.deposits (company_id, created_at desc, id desc)`);
    this.addSql(`create index deposits_company_status_idx on pse_deposit.deposits (company_id, status, created_at desc, id desc)`);
    this.addSql(`create index deposits_breb_key_idx on pse_deposit.deposits (company_id, breb_key_id) where breb_key_id is not null`);
    this.addSql(`create index deposits_breb_ext_idx on pse_deposit.deposits (company_id, breb_key_external_id) where breb_key_external_id is not null`);
    // The sweeper's queues: pending links by expiry, unfinished money steps by time.
    this.addSql(`create index deposits_expiry_idx on pse_deposit.deposits (expires_at) where status = 'PENDING_CONFIRM' and pending_step is null`);
    this.addSql(`create index deposits_step_idx on pse_deposit.deposits (step_at) where pending_step is not null`);

    this.addSql(`
      create table pse_deposit.state_history (
        seq bigserial primary key,
        deposit_id text not null,
        status text not null,
        pending_step text,
        reason text,
        at timestamptz not null default now()
      )`);
    this.addSql(`create index state_history_deposit_idx on pse_deposit.state_history (deposit_id, seq)`);

    this.addSql(`
      create table pse_deposit.provider_callbacks (
        event_id text primary key,
        deposit_id text not null,
        status text not null,
        received_at timestamptz not null default now()
      )`);
    for (const sql of outboxInboxDdl('pse_deposit')) this.addSql(sql);
  }

  override down(): void {
    this.addSql('drop table if exists pse_deposit.provider_callbacks, pse_deposit.state_history, pse_deposit.deposits, pse_deposit.outbox, pse_deposit.inbox');
  }
}
