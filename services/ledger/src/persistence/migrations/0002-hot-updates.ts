import { Migration } from '@mikro-orm/migrations';

/**
 * Room on each page of holds and movements, so closing a hold and moving a transfer's status
 * (commit, release, approval steps) are HOT updates: no new index entries, no index bloat.
 * Wallets already have it (0001). Applies to pages written from now on.
 */
export class Migration0002HotUpdates extends Migration {
  override name = '0002-hot-updates';

  override up(): void {
    this.addSql('alter table ledger.holds set (fillfactor = 90)');
    this.addSql('alter table ledger.movements set (fillfactor = 90)');
  }

  override down(): void {
    this.addSql('alter table ledger.holds reset (fillfactor)');
    this.addSql('alter table ledger.movements reset (fillfactor)');
  }
}
