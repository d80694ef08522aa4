import { Migration } from '@mikro-orm/migrations';
import { inboxHandledAtIndexDdl } from '@wallet/platform';

/** The inbox prune deletes rows past the retention oldest first: an index on handled_at keeps it from scanning the table. */
export class Migration0002InboxHandledAt extends Migration {
  override name = '0002-inbox-handled-at';

  override up(): void {
    this.addSql(inboxHandledAtIndexDdl('webhook'));
  }
}
