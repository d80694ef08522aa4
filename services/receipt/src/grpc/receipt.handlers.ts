import { callerProfile, type AccessPolicy, type AsyncService, type CallContext } from '@wallet/platform';
import type { receiptV1 } from '@wallet/proto';
import type { RenderedReceipt } from '../app/render-receipt.js';
import type { ReceiptUseCases } from '../app/use-cases.js';

const out = (r: RenderedReceipt): receiptV1.ReceiptPdf => ({ pdf: r.pdf, filename: r.filename, receiptNumber: r.receiptNumber, sha256: r.sha256 });
/** The company's name and NIT printed on the receipt: from the signed caller context only, never from the request. */
const company = (ctx: CallContext) => {
  const p = callerProfile(ctx);
  return { name: p.name, nit: p.nit };
};

/** The ReceiptService RPCs. The company and its name and NIT come from the signed caller context (ctx.companyId, ctx.principal). */
export function receiptHandlers(uc: ReceiptUseCases): AsyncService<receiptV1.ReceiptServiceServer> {
  return {
    async getTransactionReceipt(req, ctx) {
      return out(await uc.transactionReceipt.execute(ctx.companyId, req.id, company(ctx)));
    },
    async getDepositReceipt(req, ctx) {
      return out(await uc.depositReceipt.execute(ctx.companyId, req.id, company(ctx)));
    },
  };
}

/** Who may call each RPC: the gateway only (every method serves an API client, a dashboard user, an operator or a provider callback it authenticated). */
export const receiptAccess: AccessPolicy<AsyncService<receiptV1.ReceiptServiceServer>> = {
  getTransactionReceipt: ['gateway'],
  getDepositReceipt: ['gateway'],
};
