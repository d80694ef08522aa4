import { Migration } from '@mikro-orm/migrations';
import { parkedReturnExceptionsSql } from '@wallet/platform';

/**
 * A parked refund opens a money exception (docs/returns.md "How it is built"): a refund whose hold the ledger
 * refused to close is parked with a RETURN_CLOSE_REFUSED exception in the same transaction, listed in
 * GET /admin/exceptions. Refunds parked before that had an error log only: each gets its exception now (once).
 */
export class Migration0016ParkedReturnExceptions extends Migration {
  override name = '0016-parked-return-exceptions';

  override up(): void {
    this.addSql(parkedReturnExceptionsSql('pse_deposit', 'deposit_returns', 'PSE'));
  }

  override down(): void {
    // The exceptions stay (never deleted): an operator may have resolved them.
  }
}
