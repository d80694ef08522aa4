import { Migration } from '@mikro-orm/migrations';

/**
 * A transaction's kind in the read model: null for a send (`transfer.*`), `RETURN` for a return of a
 * deposit to its payer (`deposit.returned` / `deposit.return_failed`, docs/returns.md), whose receipt says
 * so. A nullable column: nothing rewritten.
 */
export class Migration0004TransactionKind extends Migration {
  override name = '0004-transaction-kind';

  override up(): void {
    this.addSql('alter table receipt.transactions add column if not exists kind text');
  }

  override down(): void {
    this.addSql('alter table receipt.transactions drop column if exists kind');
  }
}
