import { AppError } from '@wallet/platform';
import { RECEIPT_NUMBER, depositView, receiptHash, transactionView, type ReceiptSummary } from '../domain/receipt-view.js';
import type { ReceiptDeps } from './deps.js';

/** The QR's `h`: the first 16 hex digits (64 bits) of the receipt's content SHA-256. */
export const HASH_PREFIX = /^[0-9a-f]{16}$/;

export interface ReceiptVerification {
  receiptNumber: string;
  /** The full content SHA-256 printed on the receipt. */
  sha256: string;
  /** What the receipt showed when it was issued. */
  issued: ReceiptSummary;
  /** When a receipt with this content was first issued. */
  firstIssuedAt: Date;
  /** The certificates this content was signed with (one, unless the key was rotated between downloads). */
  signers: Array<{ name: string; sha256: string }>;
  /**
   * The operation now: its status label and tone, and whether a receipt made now would have the same
   * content (false once the operation moved on, e.g. a pending transfer that completed). Absent while
   * the read model is being rebuilt.
   */
  now?: { statusLabel: string; tone: ReceiptSummary['tone']; sameContent: boolean };
}

/**
 * The public verification of a receipt (the page its QR opens): found only by its number AND the
 * first 16 hex digits of its content hash, which only a holder of the receipt knows (50 + 64 bits:
 * neither can be guessed, so the page is no directory of receipts). Any other pair, well-formed or
 * not, answers the same RECEIPT_NOT_FOUND: the answer never tells whether a number exists.
 */
export class VerifyReceipt {
  constructor(private readonly deps: Pick<ReceiptDeps, 'issued' | 'records'>) {}

  async execute(receiptNumber: string, hashPrefix: string): Promise<ReceiptVerification> {
    const number = receiptNumber.trim().toUpperCase();
    const h = hashPrefix.trim().toLowerCase();
    if (!RECEIPT_NUMBER.test(number) || !HASH_PREFIX.test(h)) throw new AppError('RECEIPT_NOT_FOUND');
    const found = await this.deps.issued.find(number, h);
    const first = found[0];
    if (!first) throw new AppError('RECEIPT_NOT_FOUND');
    // 64 bits of one number's hashes never collide in practice; the first content is the one verified
    const same = found.filter((r) => r.sha256 === first.sha256);
    const company = first.summary.company;
    const view =
      first.kind === 'TRANSACTION'
        ? await this.deps.records.transaction(first.companyId, first.subjectId).then((t) => t && transactionView(t, company))
        : await this.deps.records.deposit(first.companyId, first.subjectId).then((d) => d && depositView(d, company));
    return {
      receiptNumber: number,
      sha256: first.sha256,
      issued: first.summary,
      firstIssuedAt: first.firstIssuedAt, // find() answers oldest first
      signers: same.map((r) => ({ name: r.signerName, sha256: r.signerSha256 })),
      ...(view ? { now: { statusLabel: view.statusLabel, tone: view.tone, sameContent: receiptHash(view) === first.sha256 } } : {}),
    };
  }
}
