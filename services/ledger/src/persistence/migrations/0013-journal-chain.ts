import { Migration } from '@mikro-orm/migrations';

/**
 * The tamper-evident journal (docs/journal.md): every posting sealed into one ledger-wide hash chain.
 *
 * - `journal_queue`: a posting's id, written by the posting's own statement (one more CTE row, so
 *   a committed posting is always either queued or sealed; nothing else is on the posting path);
 * - `journal`: the chain, one row per sealed posting, appended by the sealer (one at a time, under
 *   an advisory lock) which deletes the queue rows in the same transaction: sealed exactly once;
 * - `journal_heads`: the chain's head recorded at the close of each Bogotá day, published in that
 *   day's statements and in the `ledger.journal_head_recorded` event.
 *
 * Postings written before this migration are queued here, oldest first, and sealed by the sealer
 * like any other (the chain starts at the genesis of a journal that existed before it).
 */
export class Migration0013JournalChain extends Migration {
  override name = '0013-journal-chain';

  override up(): void {
    // `n` only orders the sealer's work (oldest queued first); the chain's order is the order sealed.
    this.addSql(`create table if not exists ledger.journal_queue (n bigserial primary key, posting_id uuid not null)`);
    this.addSql(`
      create table if not exists ledger.journal (
        seq bigint primary key check (seq > 0),
        posting_id uuid not null,
        content_hash bytea not null check (length(content_hash) = 32),
        hash bytea not null check (length(hash) = 32),
        sealed_at timestamptz not null default now(),
        constraint journal_posting_uq unique (posting_id)
      )`);
    this.addSql(`
      create table if not exists ledger.journal_heads (
        day date primary key,
        seq bigint not null check (seq >= 0),
        hash bytea not null check (length(hash) = 32),
        recorded_at timestamptz not null default now()
      )`);
    this.addSql(`insert into ledger.journal_queue (posting_id) select id from ledger.postings order by created_at, id`);
  }

  override down(): void {
    this.addSql('drop table if exists ledger.journal_heads');
    this.addSql('drop table if exists ledger.journal');
    this.addSql('drop table if exists ledger.journal_queue');
  }
}
