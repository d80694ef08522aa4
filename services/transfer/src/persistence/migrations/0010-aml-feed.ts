import { Migration } from '@mikro-orm/migrations';

/**
 * The AML list's change feed (issue 23): a change to `aml_entries`, whoever writes it, notifies
 * `transfer_aml` at commit; each transfer replica then reloads its in-memory copy of the live
 * entries (see `SqlTransferStore.amlHit`), so a send no longer reads the table for its AML check.
 */
export class Migration0010AmlFeed extends Migration {
  override name = '0010-aml-feed';

  override up(): void {
    this.addSql(`create or replace function transfer.notify_aml_change() returns trigger language plpgsql as $fn$
      begin
        perform pg_notify('transfer_aml', '');
        return null;
      end $fn$`);
    this.addSql(`create trigger aml_entries_change after insert or update or delete or truncate on transfer.aml_entries
      for each statement execute function transfer.notify_aml_change()`);
  }

  override down(): void {
    this.addSql('drop trigger if exists aml_entries_change on transfer.aml_entries');
    this.addSql('drop function if exists transfer.notify_aml_change()');
  }
}
