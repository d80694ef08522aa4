import { Migration } from '@mikro-orm/migrations';
import { outboxInboxDdl } from '@wallet/platform';

/**
 * Wallets, the double-entry journal (postings + entries), holds, movements, fee configuration,
 * and the outbox/inbox. No foreign keys: rows are written together by one statement, and the
 * invariant checks (CheckInvariants) verify the links.
 */
export class Migration0001LedgerInitial extends Migration {
  override name = '0001-ledger-initial';

  override up(): void {
    // Company wallets: the only balance rows (system accounts are derived from entries, see README).
    this.addSql(`
      create table ledger.wallets (
        company_id text not null,
        rail text not null check (rail in ('BREB', 'ACH')),
        available_cents bigint not null default 0,
        pending_out_cents bigint not null default 0 check (pending_out_cents >= 0),
        version bigint not null default 0,
        created_at timestamptz not null default now(),
        primary key (company_id, rail)
      ) with (fillfactor = 70)`);

    // One row per posting; the unique idempotency key plus the request hash make every command replayable.
    this.addSql(`
      create table ledger.postings (
        id uuid primary key,
        idempotency_key text not null,
        request_hash text not null,
        kind text not null check (kind in ('credit', 'fee_charge', 'reserve', 'commit', 'release', 'inflow')),
        company_id text not null,
        rail text not null check (rail in ('BREB', 'ACH')),
        movement_id uuid,
        hold_id uuid,
        created_at timestamptz not null default now(),
        constraint postings_idempotency_key_uq unique (idempotency_key)
      )`);

    // The journal lines; append-only. Amounts are signed and never zero.
    this.addSql(`
      create table ledger.entries (
        posting_id uuid not null,
        seq smallint not null,
        account text not null,
        amount bigint not null check (amount <> 0),
        primary key (posting_id, seq)
      )`);

    this.addSql(`
      create table ledger.holds (
        id uuid primary key,
        company_id text not null,
        rail text not null check (rail in ('BREB', 'ACH')),
        amount bigint not null check (amount > 0),
        fee bigint not null check (fee >= 0),
        iva bigint not null check (iva >= 0),
        total bigint not null,
        fee_operation text not null,
        movement_id uuid not null,
        status text not null default 'OPEN' check (status in ('OPEN', 'COMMITTED', 'RELEASED')),
        created_at timestamptz not null default now(),
        closed_at timestamptz,
        constraint holds_total_ck check (total = amount + fee + iva)
      )`);

    // What users list: the business view of each operation (LEDGER.md "Movements").
    this.addSql(`
      create table ledger.movements (
        id uuid primary key,
        company_id text not null,
        type text not null check (type in ('TRANSFER_OUT', 'TRANSFER_IN', 'FEE_CHARGE', 'BALANCE_ADD')),
        rail text not null check (rail in ('BREB', 'ACH', 'PSE')),
        wallet_rail text not null check (wallet_rail in ('BREB', 'ACH')),
        status text not null check (status in ('PENDING', 'AWAITING_APPROVAL', 'EXECUTING', 'COMPLETED', 'FAILED', 'EXPIRED', 'REVERSED')),
        amount bigint not null,
        total_fee bigint not null default 0,
        iva_amount bigint not null default 0,
        net_amount bigint not null,
        reference text,
        api_key_id text,
        details jsonb not null default '{}'::jsonb,
        created_at timestamptz not null default now(),
        completed_at timestamptz,
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`create index movements_company_created_idx on ledger.movements (company_id, created_at desc, id desc)`);

    // Per operation: the default (company_id null) and per-company overrides; one row each.
    this.addSql(`
      create table ledger.fee_configs (
        operation text not null check (operation in ('BREB_OUTFLOW', 'ACH_OUTFLOW', 'PSE_INFLOW', 'BREB_INFLOW')),
        company_id text,
        fixed_fee_cents bigint not null check (fixed_fee_cents >= 0),
        variable_bps integer not null check (variable_bps between 0 and 10000),
        updated_at timestamptz not null default now(),
        constraint fee_configs_operation_company_uq unique nulls not distinct (operation, company_id)
      )`);

    for (const sql of outboxInboxDdl('ledger')) this.addSql(sql);
  }

  override down(): void {
    for (const t of ['inbox', 'outbox', 'fee_configs', 'movements', 'holds', 'entries', 'postings', 'wallets']) {
      this.addSql(`drop table if exists ledger.${t}`);
    }
  }
}
