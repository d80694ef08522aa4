import { Migration } from '@mikro-orm/migrations';

/**
 * Counterparties (payees, docs/counterparties.md): one row per payee of a company, soft-deleted
 * (`deleted_at`), with its verification (status, the current attempt's `verification_id` and, for
 * ACH, its `prenote_id`, when it was asked and decided, why it failed). The ACH account number is
 * never in clear: sealed with TRANSFER_DATA_KEY beside a masked copy, and the destination is kept as
 * its keyed fingerprint (as transfers keep theirs). `next_check_at`: when the counterparty sweeper
 * looks at a PENDING verification (a prenote to submit again or to ask the rail about, a directory
 * that was down). Idempotency: (company, idempotency_key) unique, with the request hash's keyed
 * fingerprint. `counterparty_history`: every verification transition, append only.
 */
export class Migration0015Counterparties extends Migration {
  override name = '0015-counterparties';

  override up(): void {
    this.addSql(`
      create table if not exists transfer.counterparties (
        id text primary key,
        company_id text not null,
        name text not null,
        rail text not null check (rail in ('BREB', 'ACH')),
        destination jsonb not null,
        account_number_sealed text,
        account_number_masked text,
        destination_fingerprint text not null,
        document_type_id integer not null,
        document_number text not null,
        holder_name text not null,
        tags text[] not null default '{}',
        status text not null check (status in ('UNVERIFIED', 'PENDING', 'VERIFIED', 'FAILED')),
        verification_id text not null,
        prenote_id text unique,
        prenote_submitted_at timestamptz,
        verification_requested_at timestamptz,
        verification_decided_at timestamptz,
        reason_code text,
        reason text,
        next_check_at timestamptz,
        idempotency_key text,
        request_fingerprint text,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        deleted_at timestamptz,
        version integer not null default 1,
        check (rail <> 'ACH' or (account_number_sealed is not null and account_number_masked is not null))
      )`);
    this.addSql(
      `create unique index if not exists counterparties_idempotency_idx on transfer.counterparties (company_id, idempotency_key) where idempotency_key is not null`,
    );
    this.addSql(
      `create index if not exists counterparties_company_idx on transfer.counterparties (company_id, created_at desc, id desc) where deleted_at is null`,
    );
    this.addSql(`create index if not exists counterparties_due_idx on transfer.counterparties (next_check_at) where status = 'PENDING' and deleted_at is null`);
    this.addSql(`create index if not exists counterparties_tags_idx on transfer.counterparties using gin (tags)`);
    this.addSql(`
      create table if not exists transfer.counterparty_history (
        seq bigserial primary key,
        counterparty_id text not null,
        event text not null,
        actor text not null,
        from_status text,
        to_status text not null,
        verification_id text not null,
        reason_code text,
        at timestamptz not null default now()
      )`);
    this.addSql(`create index if not exists counterparty_history_idx on transfer.counterparty_history (counterparty_id, seq)`);
  }

  override down(): void {
    this.addSql('drop table if exists transfer.counterparty_history');
    this.addSql('drop table if exists transfer.counterparties');
  }
}
