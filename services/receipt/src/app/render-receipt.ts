import { receiptHash, type ReceiptView } from '../domain/receipt-view.js';
import { renderReceiptPdf } from '../domain/render-pdf.js';
import type { ReceiptDeps } from './deps.js';

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

/** The receipt of a view, both use cases': hash the view, render the PDF with its QR, name the file. */
export async function renderReceipt(deps: ReceiptDeps, view: ReceiptView): Promise<RenderedReceipt> {
  const sha256 = receiptHash(view);
  const pdf = await renderReceiptPdf({ view, sha256, verifyUrl: verifyUrl(deps.verifyBaseUrl, view.receiptNumber, sha256), generatedAt: deps.now() });
  return { pdf, filename: `comprobante-${view.receiptNumber}.pdf`, receiptNumber: view.receiptNumber, sha256, view };
}
