import { receiptHash, receiptSummary, type ReceiptView } from '../domain/receipt-view.js';
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

/**
 * The receipt of a view, both use cases': hash the view, render the PDF with its QR, sign it (PAdES,
 * at the generation time), record the issue, name the file. Every receipt the service returns is
 * signed and recorded (so its QR's verification page finds it); a receipt that could not be
 * recorded is not returned.
 */
export async function renderReceipt(deps: ReceiptDeps, view: ReceiptView, owner: { companyId: string; subjectId: string }): Promise<RenderedReceipt> {
  const sha256 = receiptHash(view);
  const at = deps.now();
  const rendered = await renderReceiptPdf({ view, sha256, verifyUrl: verifyUrl(deps.verifyBaseUrl, view.receiptNumber, sha256), generatedAt: at });
  const pdf = await deps.signer.sign(rendered, { at, reason: `${view.title} ${view.receiptNumber}` });
  await deps.issued.record({
    receiptNumber: view.receiptNumber,
    sha256,
    signerSha256: deps.signer.certificate.sha256,
    signerName: deps.signer.certificate.name,
    kind: view.kind,
    subjectId: owner.subjectId,
    companyId: owner.companyId,
    summary: receiptSummary(view),
  });
  return { pdf, filename: `comprobante-${view.receiptNumber}.pdf`, receiptNumber: view.receiptNumber, sha256, view };
}
