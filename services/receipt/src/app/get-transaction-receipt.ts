import { AppError } from '@wallet/platform';
import { transactionView, type CompanyRef } from '../domain/receipt-view.js';
import type { ReceiptDeps } from './deps.js';
import { renderReceipt, type RenderedReceipt } from './render-receipt.js';

/** A transaction's receipt: the company's record (absent or another company's → TRANSACTION_NOT_FOUND), its view, hash and PDF. */
export class GetTransactionReceipt {
  constructor(private readonly deps: ReceiptDeps) {}

  async execute(companyId: string | undefined, id: string, company: CompanyRef): Promise<RenderedReceipt> {
    const t = companyId && id ? await this.deps.records.transaction(companyId, id.trim()) : undefined;
    if (!t) throw new AppError('TRANSACTION_NOT_FOUND');
    return renderReceipt(this.deps, transactionView(t, company), { companyId: t.companyId, subjectId: t.id });
  }
}
