import { Migration } from '@mikro-orm/migrations';

/**
 * A send's `Idempotency-Key` (docs/decisions.md, unknown outcomes): the transfer is inserted with the client's key, unique per
 * company, so a retry after an unknown outcome (a gateway time-out or crash, a 5xx after the send was
 * accepted) finds the transfer instead of making a second one. `idempotency_fingerprint` is a keyed
 * fingerprint (TransferDataProtection) of the request hash: the same key with another request is
 * refused, never answered with this transfer. Rows from before have neither (null: not indexed).
 */
export class Migration0005IdempotencyKeys extends Migration {
  override name = '0005-idempotency-keys';

  override up(): void {
    this.addSql(`alter table transfer.transfers
      add column idempotency_key text check (length(idempotency_key) between 1 and 255),
      add column idempotency_fingerprint text,
      add constraint transfers_idempotency_pair_check check ((idempotency_key is null) = (idempotency_fingerprint is null))`);
    this.addSql(`create unique index transfers_idempotency_key_uq on transfer.transfers (company_id, idempotency_key)
      where idempotency_key is not null`);
  }

  override down(): void {
    this.addSql('drop index if exists transfer.transfers_idempotency_key_uq');
    this.addSql('alter table transfer.transfers drop column idempotency_key, drop column idempotency_fingerprint');
  }
}
