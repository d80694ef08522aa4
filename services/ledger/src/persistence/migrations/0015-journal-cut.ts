import { Migration } from '@mikro-orm/migrations';

/**
 * The verified cut (docs/ledger-check.md): where the journal's invariants last held, so that the
 * incremental check reads only what was sealed since.
 *
 * - `journal_cut`: one row (none before the first recording check). `seq`: the journal position
 *   (docs/journal.md) through which the journal was checked, `hash` the chain's hash there (the head
 *   the check vouches for); `checkpoints_through`: the balance checkpointer's progress in the same
 *   snapshot (every checkpoint up to it was checked); `entries`: the entries of the postings sealed
 *   up to `seq`.
 * - `journal_cut_wallets`: each wallet's sums over the postings sealed up to the cut (its two accounts,
 *   and the postings touching them), the base the incremental check adds the new postings to.
 *
 * Written only by a check that found nothing wrong, in the check's own snapshot; new tables only.
 */
export class Migration0015JournalCut extends Migration {
  override name = '0015-journal-cut';

  override up(): void {
    this.addSql(`
      create table if not exists ledger.journal_cut (
        singleton boolean primary key default true check (singleton),
        seq bigint not null check (seq >= 0),
        hash bytea check (hash is null or length(hash) = 32),
        checkpoints_through timestamptz,
        entries bigint not null check (entries >= 0),
        mode text not null check (mode in ('full', 'incremental')),
        duration_ms integer not null check (duration_ms >= 0),
        verified_at timestamptz not null default now()
      )`);
    this.addSql(`
      create table if not exists ledger.journal_cut_wallets (
        company_id text not null,
        rail text not null check (rail in ('BREB', 'ACH')),
        available_cents bigint not null,
        pending_out_cents bigint not null,
        postings bigint not null check (postings >= 0),
        seq bigint not null,
        primary key (company_id, rail)
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists ledger.journal_cut_wallets');
    this.addSql('drop table if exists ledger.journal_cut');
  }
}
