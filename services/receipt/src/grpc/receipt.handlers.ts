import type { AccessPolicy, AsyncService } from '@wallet/platform';
import type { receiptV1 } from '@wallet/proto';
import type { Receipts, RenderedReceipt } from '../app/receipts.js';

const out = (r: RenderedReceipt): receiptV1.ReceiptPdf => ({ pdf: r.pdf, filename: r.filename, receiptNumber: r.receiptNumber, sha256: r.sha256 });
const company = (req: receiptV1.GetReceiptRequest) => ({ name: req.companyName ?? '', nit: req.companyNit ?? '' });

/** The ReceiptService RPCs. The company is the call's `x-company-id`; its name and NIT come in the request (from the gateway). */
export function receiptHandlers(receipts: Receipts): AsyncService<receiptV1.ReceiptServiceServer> {
  return {
    async getTransactionReceipt(req, ctx) {
      return out(await receipts.transaction(ctx.companyId, req.id, company(req)));
    },
    async getDepositReceipt(req, ctx) {
      return out(await receipts.deposit(ctx.companyId, req.id, company(req)));
    },
  };
}

/** Who may call each RPC: the gateway only (every method serves an API client, a dashboard user, an operator or a provider callback it authenticated). */
export const receiptAccess: AccessPolicy<AsyncService<receiptV1.ReceiptServiceServer>> = {
  getTransactionReceipt: ['gateway'],
  getDepositReceipt: ['gateway'],
};
