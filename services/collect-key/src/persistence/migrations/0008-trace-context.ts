import { Migration } from '@mikro-orm/migrations';

/**
 * The trace context of each inbound payment (docs/operations.md "Tracing"): the W3C `traceparent`
 * of the network's notification that recorded it. The sweeper's steps, each in a trace of its own,
 * link their spans to it. Nullable, no default: adding it rewrites nothing.
 */
export class Migration0008TraceContext extends Migration {
  override name = '0008-trace-context';

  override up(): void {
    this.addSql('alter table collect_key.payments add column if not exists traceparent text');
  }

  override down(): void {
    this.addSql('alter table collect_key.payments drop column if exists traceparent');
  }
}
