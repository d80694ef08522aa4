import { Migration } from '@mikro-orm/migrations';
import { parkedReturnExceptionsSql } from '@wallet/platform';

/**
 * A parked return opens a money exception (docs/returns.md "How it is built"): a return of a credited payment whose
 * hold the ledger refused to close is parked with a RETURN_CLOSE_REFUSED exception in the same transaction, listed in
 * GET /admin/exceptions. Returns parked before that had an error log only: each gets its exception now (once).
 */
export class Migration0011ParkedReturnExceptions extends Migration {
  override name = '0011-parked-return-exceptions';

  override up(): void {
    this.addSql(parkedReturnExceptionsSql('collect_key', 'payment_returns', 'BREB'));
  }

  override down(): void {
    // The exceptions stay (never deleted): an operator may have resolved them.
  }
}
