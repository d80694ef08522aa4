import { Migration } from '@mikro-orm/migrations';

/**
 * The fee schedules' change feed (issue 23): a change to `fee_configs`, whoever writes it, notifies
 * `ledger_fees` at commit; each ledger replica then reloads its in-memory copy (see
 * `SqlLedgerStore.feeSchedules`), so a quote or a send no longer reads the table every time.
 */
export class Migration0007FeeConfigFeed extends Migration {
  override name = '0007-fee-config-feed';

  override up(): void {
    this.addSql(`create or replace function ledger.notify_fee_change() returns trigger language plpgsql as $fn$
      begin
        perform pg_notify('ledger_fees', '');
        return null;
      end $fn$`);
    this.addSql(`create trigger fee_configs_change after insert or update or delete or truncate on ledger.fee_configs
      for each statement execute function ledger.notify_fee_change()`);
  }

  override down(): void {
    this.addSql('drop trigger if exists fee_configs_change on ledger.fee_configs');
    this.addSql('drop function if exists ledger.notify_fee_change()');
  }
}
