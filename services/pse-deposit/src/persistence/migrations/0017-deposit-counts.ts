import { Migration } from '@mikro-orm/migrations';

/**
 * Deposit counts (docs/deposit-counts.md): how many deposits each company has per rail and stored
 * state, so that a page-style listing's total (GET /deposits) reads a few rows instead of counting every
 * deposit the company ever had (27.7 ms p50 for a company with 200,000, growing with it).
 *
 * - `deposit_count_deltas`: append-only. A statement-level trigger on `deposits` (transition tables)
 *   adds one row per (company, rail, state) a statement changed, in the writer's own transaction, so a
 *   snapshot that sees a deposit's change sees its delta. Never updated: no hot row for a busy company.
 * - `deposit_counts`: the deltas folded (`DepositCounter`), each fold deleting the deltas it adds in
 *   one transaction; a total is `sum(counts) + sum(deltas)`, read in one statement.
 * - `deposit_count_progress`: the backfill of the deposits written before this migration (companies in
 *   order, resumable), and when it finished. Until then totals are counted from the deposits.
 *
 * New tables and a trigger: nothing existing is rewritten or scanned (CREATE TRIGGER takes a brief
 * lock on `deposits`, no scan). The history is counted outside the migrations, a batch at a time.
 */
export class Migration0017DepositCounts extends Migration {
  override name = '0017-deposit-counts';

  override up(): void {
    this.addSql(`
      create table if not exists pse_deposit.deposit_counts (
        company_id text not null,
        source text not null,
        status text not null,
        n bigint not null,
        primary key (company_id, source, status)
      )`);
    this.addSql(`
      create table if not exists pse_deposit.deposit_count_deltas (
        id bigserial primary key,
        company_id text not null,
        source text not null,
        status text not null,
        n bigint not null
      )`);
    this.addSql(`create index if not exists deposit_count_deltas_company_idx on pse_deposit.deposit_count_deltas (company_id)`);
    this.addSql(`
      create table if not exists pse_deposit.deposit_count_progress (
        singleton boolean primary key default true check (singleton),
        after_company text,
        done_at timestamptz,
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`insert into pse_deposit.deposit_count_progress (singleton) values (true) on conflict do nothing`);
    this.addSql(`
      create or replace function pse_deposit.deposit_counts_inserted() returns trigger language plpgsql as $$
      begin
        insert into pse_deposit.deposit_count_deltas (company_id, source, status, n)
        select company_id, source, status, count(*) from new_rows group by company_id, source, status;
        return null;
      end $$`);
    this.addSql(`
      create or replace function pse_deposit.deposit_counts_updated() returns trigger language plpgsql as $$
      begin
        insert into pse_deposit.deposit_count_deltas (company_id, source, status, n)
        select company_id, source, status, sum(n) from (
          select company_id, source, status, 1 as n from new_rows
          union all
          select company_id, source, status, -1 from old_rows) c
        group by company_id, source, status having sum(n) <> 0;
        return null;
      end $$`);
    this.addSql(`
      create or replace function pse_deposit.deposit_counts_deleted() returns trigger language plpgsql as $$
      begin
        insert into pse_deposit.deposit_count_deltas (company_id, source, status, n)
        select company_id, source, status, -count(*) from old_rows group by company_id, source, status;
        return null;
      end $$`);
    this.addSql(`create or replace trigger deposits_counted_insert after insert on pse_deposit.deposits
      referencing new table as new_rows for each statement execute function pse_deposit.deposit_counts_inserted()`);
    this.addSql(`create or replace trigger deposits_counted_update after update on pse_deposit.deposits
      referencing old table as old_rows new table as new_rows for each statement execute function pse_deposit.deposit_counts_updated()`);
    this.addSql(`create or replace trigger deposits_counted_delete after delete on pse_deposit.deposits
      referencing old table as old_rows for each statement execute function pse_deposit.deposit_counts_deleted()`);
  }

  override down(): void {
    this.addSql('drop trigger if exists deposits_counted_delete on pse_deposit.deposits');
    this.addSql('drop trigger if exists deposits_counted_update on pse_deposit.deposits');
    this.addSql('drop trigger if exists deposits_counted_insert on pse_deposit.deposits');
    this.addSql('drop function if exists pse_deposit.deposit_counts_deleted()');
    this.addSql('drop function if exists pse_deposit.deposit_counts_updated()');
    this.addSql('drop function if exists pse_deposit.deposit_counts_inserted()');
    this.addSql('drop table if exists pse_deposit.deposit_count_progress');
    this.addSql('drop table if exists pse_deposit.deposit_count_deltas');
    this.addSql('drop table if exists pse_deposit.deposit_counts');
  }
}
