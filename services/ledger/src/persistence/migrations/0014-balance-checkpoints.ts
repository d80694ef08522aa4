import { Migration } from '@mikro-orm/migrations';

/**
 * Balance checkpoints (docs/balance-checkpoints.md): a wallet's balance at the end of an hour, each
 * time its postings cross a multiple of 64, so that a balance at an instant (GetBalanceAt, every
 * statement's opening and closing balance) reads the last checkpoint before it plus the postings
 * since, never every posting from the beginning.
 *
 * - `balance_checkpoints`: the sums of the wallet's two accounts and the count of postings touching
 *   them, over every posting created before `through` (an hour's end). Written only by the
 *   checkpointer, never by the posting path.
 * - `balance_checkpoint_progress`: one row. `through`: every wallet's checkpoints are complete for
 *   postings created before it. `target` and the cursor: the pass in progress (resumable).
 *
 * New tables only: nothing existing is locked or rewritten. The first pass after deploy backfills
 * the history in batches of wallets, beside the posting path.
 */
export class Migration0014BalanceCheckpoints extends Migration {
  override name = '0014-balance-checkpoints';

  override up(): void {
    this.addSql(`
      create table if not exists ledger.balance_checkpoints (
        company_id text not null,
        rail text not null check (rail in ('BREB', 'ACH')),
        through timestamptz not null,
        available_cents bigint not null,
        pending_out_cents bigint not null check (pending_out_cents >= 0),
        postings bigint not null check (postings > 0),
        created_at timestamptz not null default now(),
        primary key (company_id, rail, through)
      )`);
    this.addSql(`
      create table if not exists ledger.balance_checkpoint_progress (
        singleton boolean primary key default true check (singleton),
        through timestamptz,
        target timestamptz,
        after_company text,
        after_rail text,
        updated_at timestamptz not null default now(),
        check (target is not null or (after_company is null and after_rail is null))
      )`);
    this.addSql(`insert into ledger.balance_checkpoint_progress (singleton) values (true) on conflict do nothing`);
  }

  override down(): void {
    this.addSql('drop table if exists ledger.balance_checkpoint_progress');
    this.addSql('drop table if exists ledger.balance_checkpoints');
  }
}
