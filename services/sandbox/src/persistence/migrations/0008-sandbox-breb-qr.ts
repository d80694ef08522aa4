import { Migration } from '@mikro-orm/migrations';

/**
 * An inbound Bre-B payment made by paying a dynamic QR keeps the QR's transaction id (tag 62/05), which
 * the network's notification carries to the participant (docs/sandbox.md "Bre-B collect keys and
 * inbound payments"). Nullable: payments by key have none.
 */
export class Migration0008SandboxBrebQr extends Migration {
  override name = '0008-sandbox-breb-qr';

  override up(): void {
    this.addSql(`alter table sandbox.breb_incoming add column if not exists transaction_id text`);
  }

  override down(): void {
    this.addSql(`alter table sandbox.breb_incoming drop column if exists transaction_id`);
  }
}
