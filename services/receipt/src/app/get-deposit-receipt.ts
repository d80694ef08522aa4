import { AppError } from '@wallet/platform';
import { depositView, type CompanyRef } from '../domain/receipt-view.js';
import type { ReceiptDeps } from './deps.js';
import { renderReceipt, type RenderedReceipt } from './render-receipt.js';

/** A deposit's receipt: the company's record (absent or another company's → DEPOSIT_NOT_FOUND), its view, hash and PDF. */
export class GetDepositReceipt {
  constructor(private readonly deps: ReceiptDeps) {}

  async execute(companyId: string | undefined, id: string, company: CompanyRef): Promise<RenderedReceipt> {
    const d = companyId && id ? await this.deps.records.deposit(companyId, id.trim()) : undefined;
    if (!d) throw new AppError('DEPOSIT_NOT_FOUND');
    return renderReceipt(this.deps, depositView(d, company), { companyId: d.companyId, subjectId: d.id });
  }
}
