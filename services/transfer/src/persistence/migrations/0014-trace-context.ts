import { Migration } from '@mikro-orm/migrations';

/**
 * The trace context of each saga (docs/operations.md "Tracing"): the W3C `traceparent` of the call
 * that recorded a transfer or a bulk payout. The steps that come later in other traces (the rail's
 * callback, the sweeper's resumptions, status lookups) link their spans to it. Nullable, no
 * default: adding it rewrites nothing; rows recorded before it, or with tracing off, have none.
 */
export class Migration0014TraceContext extends Migration {
  override name = '0014-trace-context';

  override up(): void {
    this.addSql('alter table transfer.transfers add column if not exists traceparent text');
    this.addSql('alter table transfer.batches add column if not exists traceparent text');
  }

  override down(): void {
    this.addSql('alter table transfer.transfers drop column if exists traceparent');
    this.addSql('alter table transfer.batches drop column if exists traceparent');
  }
}
