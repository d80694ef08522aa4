import { Migration } from '@mikro-orm/migrations';

/**
 * Each delivery's source event position: its stream and sequence number there (publication order). A resource's
 * deliveries go out in it, each once its stream's consumer has recorded every earlier event (docs/webhooks.md
 * "Order"): with two replicas pulling one consumer, an event was recorded, and sent, before an earlier one a
 * replica still held. Nullable columns: metadata only; the rows before them keep the insertion order.
 */
export class Migration0003DeliverySourcePosition extends Migration {
  override name = '0003-delivery-source-position';

  override up(): void {
    this.addSql(`alter table webhook.deliveries add column source_stream text, add column source_seq bigint`);
  }
}
