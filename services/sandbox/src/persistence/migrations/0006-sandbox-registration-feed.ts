import { Migration } from '@mikro-orm/migrations';
import { changeFeedDdl } from '@wallet/platform';

/**
 * The directory reads participants' live key registrations from memory (a lookup per
 * send, docs/benchmarks.md "Cost per send"), kept current by a change feed: a statement trigger notifies `sandbox_registrations` at
 * commit on every change of `breb_registrations`, whoever writes.
 */
const FEED = changeFeedDdl({
  table: 'sandbox.breb_registrations',
  channel: 'sandbox_registrations',
  fn: 'sandbox.notify_registration_change',
  trigger: 'breb_registrations_change',
});

export class Migration0006SandboxRegistrationFeed extends Migration {
  override name = '0006-sandbox-registration-feed';

  override up(): void {
    for (const sql of FEED.up) this.addSql(sql);
  }

  override down(): void {
    for (const sql of FEED.down) this.addSql(sql);
  }
}
