import { Migration } from '@mikro-orm/migrations';

/**
 * The trace context of each deposit (docs/operations.md "Tracing"): the W3C `traceparent` of the
 * call that recorded it. The provider's confirmation and the sweeper's steps, each in a trace of
 * its own, link their spans to it. Nullable, no default: adding it rewrites nothing.
 */
export class Migration0007TraceContext extends Migration {
  override name = '0007-trace-context';

  override up(): void {
    this.addSql('alter table pse_deposit.deposits add column if not exists traceparent text');
  }

  override down(): void {
    this.addSql('alter table pse_deposit.deposits drop column if exists traceparent');
  }
}
