import { Migration } from '@mikro-orm/migrations';

/**
 * The `void` posting kind (VoidReserve: a fence on a Reserve's key; no entries, no money) and the
 * `correction` kind (an operator's correcting entry for a money exception).
 */
export class Migration0004VoidPostings extends Migration {
  override name = '0004-void-postings';

  override up(): void {
    this.addSql('alter table ledger.postings drop constraint if exists postings_kind_check');
    this.addSql(`alter table ledger.postings add constraint postings_kind_check
      check (kind in ('credit', 'fee_charge', 'reserve', 'commit', 'release', 'inflow', 'reversal', 'void', 'correction'))`);
  }

  override down(): void {
    this.addSql('alter table ledger.postings drop constraint if exists postings_kind_check');
    this.addSql(`alter table ledger.postings add constraint postings_kind_check
      check (kind in ('credit', 'fee_charge', 'reserve', 'commit', 'release', 'inflow', 'reversal'))`);
  }
}
