import { callerProfile, type AccessPolicy, type AsyncService, type CallContext } from '@wallet/platform';
import type { receiptV1 } from '@wallet/proto';
import type { RenderedReceipt } from '../app/render-receipt.js';
import type { ReceiptVerification } from '../app/verify-receipt.js';
import type { ReceiptUseCases } from '../app/use-cases.js';

const out = (r: RenderedReceipt): receiptV1.ReceiptPdf => ({ pdf: r.pdf, filename: r.filename, receiptNumber: r.receiptNumber, sha256: r.sha256 });
const verification = (v: ReceiptVerification): receiptV1.ReceiptVerification => ({
  receiptNumber: v.receiptNumber,
  sha256: v.sha256,
  issued: {
    title: v.issued.title,
    companyName: v.issued.company.name,
    companyNit: v.issued.company.nit,
    statusLabel: v.issued.statusLabel,
    tone: v.issued.tone,
    issuedFor: v.issued.issuedFor,
    headline: v.issued.headline,
    grandTotal: v.issued.grandTotal,
  },
  firstIssuedAt: v.firstIssuedAt,
  signers: v.signers,
  ...(v.now ? { now: v.now } : {}),
});
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
    async verifyReceipt(req) {
      return verification(await uc.verify.execute(req.receiptNumber, req.hashPrefix));
    },
  };
}

/**
 * Who may call each RPC: the gateway only (every method serves an API client, a dashboard user, an
 * operator it authenticated). VerifyReceipt serves the public verification page, an unauthenticated
 * request the gateway forwards as it forwards provider callbacks (`gateway:callback`: no company, no
 * operator): the receipt number and hash the request carries are its only key.
 */
export const receiptAccess: AccessPolicy<AsyncService<receiptV1.ReceiptServiceServer>> = {
  getTransactionReceipt: ['gateway'],
  getDepositReceipt: ['gateway'],
  verifyReceipt: ['gateway:callback'],
};
