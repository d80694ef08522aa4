import { Migration } from '@mikro-orm/migrations';
import { changeFeedDdl } from '@wallet/platform';

/**
 * The fee schedules' change feed (docs/benchmarks.md "Cost per send"): a change to `fee_configs`, whoever writes it, notifies
 * `ledger_fees` at commit; each ledger replica then reloads its in-memory copy (see
 * `SqlLedgerStore.feeSchedules`), so a quote or a send no longer reads the table every time.
 */
const FEED = changeFeedDdl({ table: 'ledger.fee_configs', channel: 'ledger_fees', fn: 'ledger.notify_fee_change', trigger: 'fee_configs_change' });

export class Migration0007FeeConfigFeed extends Migration {
  override name = '0007-fee-config-feed';

  override up(): void {
    for (const sql of FEED.up) this.addSql(sql);
  }

  override down(): void {
    for (const sql of FEED.down) this.addSql(sql);
  }
}
