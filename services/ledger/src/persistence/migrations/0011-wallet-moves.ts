import { Migration } from '@mikro-orm/migrations';

/**
 * Moves between a company's own wallets (docs/wallet-moves.md): the `move` posting kind, and on each
 * of its two movements (TRANSFER_OUT on the debited wallet, TRANSFER_IN on the credited one) the
 * move's id, which is its posting's id. A nullable column: adding it rewrites nothing. The index
 * answers GetMove (a company's move by id) and is empty but for moves.
 */
export class Migration0011WalletMoves extends Migration {
  override name = '0011-wallet-moves';

  override up(): void {
    this.addSql('alter table ledger.postings drop constraint if exists postings_kind_check');
    this.addSql(`alter table ledger.postings add constraint postings_kind_check
      check (kind in ('credit', 'fee_charge', 'reserve', 'commit', 'release', 'inflow', 'reversal', 'void', 'correction', 'recon_adjustment', 'move'))`);
    this.addSql('alter table ledger.movements add column if not exists move_id uuid');
    this.addSql('create index if not exists movements_move_idx on ledger.movements (company_id, move_id) where move_id is not null');
  }

  override down(): void {
    this.addSql('drop index if exists ledger.movements_move_idx');
    this.addSql('alter table ledger.movements drop column if exists move_id');
    this.addSql('alter table ledger.postings drop constraint if exists postings_kind_check');
    this.addSql(`alter table ledger.postings add constraint postings_kind_check
      check (kind in ('credit', 'fee_charge', 'reserve', 'commit', 'release', 'inflow', 'reversal', 'void', 'correction', 'recon_adjustment'))`);
  }
}
