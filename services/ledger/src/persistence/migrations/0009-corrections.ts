import { Migration } from '@mikro-orm/migrations';

/**
 * One correction per external movement (docs/reconciliation.md "One case per external movement"). A correcting entry (`correction`: an owner's write-off;
 * `recon_adjustment`: a reconciliation break accepted on the provider's side) now names the external
 * movement it corrects (`corrects`: "<rail>:our:<our id>", "breb-inbound:<provider id>") and the case that asked for it
 * (`case_id`); an entry that undoes one names it (`reverses_posting_id`). The journal stays
 * append-only: these are facts of the posting.
 *
 * `ledger.corrections` is the live register: one row per correcting entry, `reversed_by` set when it
 * is undone. At most one live row per movement (`corrections_one_live_uq`): a second correcting entry
 * of the same movement cannot be written, whichever path (owner's exception, reconciliation break)
 * asks for it.
 */
export class Migration0009Corrections extends Migration {
  override name = '0009-corrections';

  override up(): void {
    this.addSql('alter table ledger.postings add column if not exists corrects text');
    this.addSql('alter table ledger.postings add column if not exists case_id text');
    this.addSql('alter table ledger.postings add column if not exists reverses_posting_id uuid');
    this.addSql(`create table if not exists ledger.corrections (
      posting_id uuid primary key,
      movement text not null,
      case_id text not null,
      idempotency_key text not null,
      created_at timestamptz not null default now(),
      reversed_by uuid,
      reversed_at timestamptz
    )`);
    this.addSql('create unique index if not exists corrections_one_live_uq on ledger.corrections (movement) where reversed_by is null');
    this.addSql('create index if not exists corrections_movement_idx on ledger.corrections (movement)');
    // Correcting entries from before: their movement was not recorded (a name of their own, so none
    // collides), their case is the exception id their reason starts with or names.
    this.addSql(`update ledger.postings set corrects = 'legacy:' || idempotency_key,
        case_id = coalesce(substring(reason from 'exc_[0-9a-f]{32}'), 'legacy')
      where kind in ('correction', 'recon_adjustment') and corrects is null`);
    this.addSql(`insert into ledger.corrections (posting_id, movement, case_id, idempotency_key, created_at)
      select id, corrects, case_id, idempotency_key, created_at from ledger.postings
       where kind in ('correction', 'recon_adjustment') and reverses_posting_id is null on conflict do nothing`);
  }

  override down(): void {
    this.addSql('drop table if exists ledger.corrections');
    this.addSql('alter table ledger.postings drop column if exists reverses_posting_id');
    this.addSql('alter table ledger.postings drop column if exists case_id');
    this.addSql('alter table ledger.postings drop column if exists corrects');
  }
}
