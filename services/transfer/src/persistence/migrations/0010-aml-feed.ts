import { Migration } from '@mikro-orm/migrations';
import { changeFeedDdl } from '@wallet/platform';

/**
 * The AML list's change feed (docs/benchmarks.md, the API-key cache): a change to `aml_entries`, whoever writes it, notifies
 * `transfer_aml` at commit; each transfer replica then reloads its in-memory copy of the live
 * entries (see `SqlTransferStore.amlHit`), so a send no longer reads the table for its AML check.
 */
const FEED = changeFeedDdl({ table: 'transfer.aml_entries', channel: 'transfer_aml', fn: 'transfer.notify_aml_change', trigger: 'aml_entries_change' });

export class Migration0010AmlFeed extends Migration {
  override name = '0010-aml-feed';

  override up(): void {
    for (const sql of FEED.up) this.addSql(sql);
  }

  override down(): void {
    for (const sql of FEED.down) this.addSql(sql);
  }
}
