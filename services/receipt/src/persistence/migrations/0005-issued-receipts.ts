import { Migration } from '@mikro-orm/migrations';

/**
 * Every receipt the service has issued (docs/receipts.md "Verifying a receipt"): one row per receipt
 * number, content SHA-256 and signing certificate, written when the receipt is rendered. The public
 * verification page finds a receipt here by its number and the first 16 hex digits of its hash (the
 * QR's `h`), and shows what the receipt said beside what the operation is now.
 *
 * Not part of the read model: a rebuild (which truncates `transactions` and `deposits`) keeps it, as
 * the receipts already handed out stay verifiable.
 */
export class Migration0005IssuedReceipts extends Migration {
  override name = '0005-issued-receipts';

  override up(): void {
    this.addSql(`
      create table if not exists receipt.issued_receipts (
        receipt_number text not null,
        sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
        signer_sha256 text not null,
        signer_name text not null,
        kind text not null check (kind in ('TRANSACTION', 'DEPOSIT')),
        subject_id text not null,
        company_id text not null,
        summary jsonb not null,
        first_issued_at timestamptz not null default now(),
        primary key (receipt_number, sha256, signer_sha256)
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists receipt.issued_receipts');
  }
}
