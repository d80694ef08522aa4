import { Migration } from '@mikro-orm/migrations';

/**
 * A key remembers the directory registration it went live with (its `anchorHandle`, one per
 * registration: a value registered again after a delete gets a new one), and the network names the
 * registration it routed each payment to. A payment is attributed to the key of that registration,
 * never to whoever holds the value when the notification arrives (docs/decisions.md "Inbound Bre-B payments", Attribution). Keys that went live
 * before this migration have none (null): the fallback in HandleIncomingPayment covers them.
 */
export class Migration0006KeyRegistrationAnchor extends Migration {
  override name = '0006-key-registration-anchor';

  override up(): void {
    this.addSql(`alter table collect_key.keys add column anchor_handle text`);
    this.addSql(`create unique index keys_anchor_handle_uq on collect_key.keys (anchor_handle) where anchor_handle is not null`);
    this.addSql(`alter table collect_key.payments add column anchor_handle text`);
  }

  override down(): void {
    this.addSql(`alter table collect_key.payments drop column if exists anchor_handle`);
    this.addSql(`drop index if exists collect_key.keys_anchor_handle_uq`);
    this.addSql(`alter table collect_key.keys drop column if exists anchor_handle`);
  }
}
