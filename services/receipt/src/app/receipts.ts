import { AppError } from '@wallet/platform';
import { depositView, receiptHash, transactionView, type CompanyRef, type ReceiptView } from '../domain/receipt-view.js';
import { renderReceiptPdf } from '../domain/render-pdf.js';
import type { ReadModelStore } from '../persistence/read-model.store.js';

export interface RenderedReceipt {
  pdf: Buffer;
  filename: string;
  receiptNumber: string;
  sha256: string;
  view: ReceiptView;
}

/**
 * What the verification QR carries. With a verification page configured (RECEIPT_VERIFY_BASE_URL),
 * its URL; without one (the default: there is no public page yet), the receipt number and the full
 * SHA-256, which a reader compares with the `X-Receipt-Sha256` of the receipt fetched from the API.
 */
export function verifyUrl(base: string, receiptNumber: string, sha256: string): string {
  if (!base) return `${receiptNumber} SHA-256 ${sha256}`;
  return `${base.replace(/\/+$/, '')}/${encodeURIComponent(receiptNumber)}?h=${sha256.slice(0, 16)}`;
}

/** The two receipts: read the company's record (absent or another company's → NOT_FOUND), build the view, hash it, render. */
export class Receipts {
  constructor(private readonly store: ReadModelStore, private readonly verifyBaseUrl: string, private readonly now: () => Date = () => new Date()) {}

  async transaction(companyId: string | undefined, id: string, company: CompanyRef): Promise<RenderedReceipt> {
    const t = companyId && id ? await this.store.transaction(companyId, id.trim()) : undefined;
    if (!t) throw new AppError('TRANSACTION_NOT_FOUND');
    return this.render(transactionView(t, company));
  }

  async deposit(companyId: string | undefined, id: string, company: CompanyRef): Promise<RenderedReceipt> {
    const d = companyId && id ? await this.store.deposit(companyId, id.trim()) : undefined;
    if (!d) throw new AppError('DEPOSIT_NOT_FOUND');
    return this.render(depositView(d, company));
  }

  private async render(view: ReceiptView): Promise<RenderedReceipt> {
    const sha256 = receiptHash(view);
    const pdf = await renderReceiptPdf({ view, sha256, verifyUrl: verifyUrl(this.verifyBaseUrl, view.receiptNumber, sha256), generatedAt: this.now() });
    return { pdf, filename: `comprobante-${view.receiptNumber}.pdf`, receiptNumber: view.receiptNumber, sha256, view };
  }
}
