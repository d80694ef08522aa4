import { Migration } from '@mikro-orm/migrations';

/** The `reversal` posting kind (ReverseInflow: a provider reversal of a PSE inflow). */
export class Migration0003InflowReversal extends Migration {
  override name = '0003-inflow-reversal';

  override up(): void {
    this.addSql('alter table ledger.postings drop constraint if exists postings_kind_check');
    this.addSql(`alter table ledger.postings add constraint postings_kind_check
      check (kind in ('credit', 'fee_charge', 'reserve', 'commit', 'release', 'inflow', 'reversal'))`);
  }

  override down(): void {
    this.addSql('alter table ledger.postings drop constraint if exists postings_kind_check');
    this.addSql(`alter table ledger.postings add constraint postings_kind_check
      check (kind in ('credit', 'fee_charge', 'reserve', 'commit', 'release', 'inflow'))`);
  }
}
