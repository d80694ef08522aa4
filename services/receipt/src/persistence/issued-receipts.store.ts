import type { Database } from '@wallet/platform';
import type { IssuedReceipt, IssuedReceipts } from '../app/ports.js';
import type { ReceiptSummary } from '../domain/receipt-view.js';

interface Row {
  receipt_number: string;
  sha256: string;
  signer_sha256: string;
  signer_name: string;
  kind: 'TRANSACTION' | 'DEPOSIT';
  subject_id: string;
  company_id: string;
  summary: ReceiptSummary;
  first_issued_at: Date | string;
}

/** receipt.issued_receipts (migration 0005): every receipt issued, by number, content hash and signer. */
export class SqlIssuedReceipts implements IssuedReceipts {
  constructor(private readonly db: Database) {}

  async record(r: IssuedReceipt): Promise<void> {
    await this.db.prepared(
      `insert into receipt.issued_receipts (receipt_number, sha256, signer_sha256, signer_name, kind, subject_id, company_id, summary)
       values ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
       on conflict (receipt_number, sha256, signer_sha256) do nothing`,
      [r.receiptNumber, r.sha256, r.signerSha256, r.signerName, r.kind, r.subjectId, r.companyId, JSON.stringify(r.summary)],
    );
  }

  async find(receiptNumber: string, hashPrefix: string): Promise<Array<IssuedReceipt & { firstIssuedAt: Date }>> {
    // the primary key's first column narrows to one number's few rows; the prefix is compared on them
    const rows = await this.db.prepared<Row>(
      `select * from receipt.issued_receipts where receipt_number = $1 and left(sha256, 16) = $2 order by first_issued_at, signer_sha256`,
      [receiptNumber, hashPrefix],
    );
    return rows.map((r) => ({
      receiptNumber: r.receipt_number,
      sha256: r.sha256,
      signerSha256: r.signer_sha256,
      signerName: r.signer_name,
      kind: r.kind,
      subjectId: r.subject_id,
      companyId: r.company_id,
      summary: r.summary,
      firstIssuedAt: r.first_issued_at instanceof Date ? r.first_issued_at : new Date(r.first_issued_at),
    }));
  }
}
