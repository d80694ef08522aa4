import { bogotaDateOf, callerProfile, moneyExceptionToProto, depositReturnHandlers, type AccessPolicy, type AsyncService } from '@wallet/platform';
import type { collectKeyV1, settlementsV1 } from '@wallet/proto';
import type { InboundSettlement, InboundSettlements } from '../app/settlements.js';
import type { CollectKeyUseCases } from '../app/use-cases.js';
import { keyToProto, paymentToDeposit, qrToProto } from '../app/proto-views.js';

/**
 * The CollectKeyService RPCs: decode, call one use case, encode. The company and its tax regime come
 * from the signed caller context (ctx.companyId, ctx.principal's profile); a provider's payment
 * notification carries neither: its company and tax regime are those stored with the key.
 */
export function collectKeyHandlers(uc: CollectKeyUseCases, settlements: InboundSettlements): AsyncService<collectKeyV1.CollectKeyServiceServer> {
  return {
    async *listSettlements(req) {
      for await (const batch of settlements.list(req.rail, req.date, req.batchSize)) yield { records: batch.map(settlementToProto) };
    },

    async findSettlements(req) {
      return { records: (await settlements.find(req.rail, req.ids)).map(settlementToProto) };
    },

    async createKey(req, ctx) {
      const r = await uc.createKey.execute(ctx.companyId, {
        externalId: req.externalId,
        name: req.name,
        ivaApplicable: callerProfile(ctx).ivaApplicable,
        ...(req.keyType !== undefined ? { keyType: req.keyType } : {}),
        ...(req.keyValue !== undefined ? { keyValue: req.keyValue } : {}),
      });
      return { key: keyToProto(r.key), created: r.created };
    },
    async listKeys(req, ctx) {
      const r = await uc.listKeys.execute(ctx.companyId, {
        ...(req.state !== undefined ? { state: req.state } : {}),
        ...(req.externalId !== undefined ? { externalId: req.externalId } : {}),
        limit: req.limit,
        ...(req.cursor !== undefined ? { cursor: req.cursor } : {}),
      });
      return { items: r.items.map(keyToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },
    async getKey(req, ctx) {
      return keyToProto(await uc.getKey.execute(ctx.companyId, req.id));
    },
    async deleteKey(req, ctx) {
      return keyToProto(await uc.deleteKey.execute(ctx.companyId, req.id));
    },
    async setKeyState(req, ctx) {
      return keyToProto(await uc.setKeyState.execute(ctx.companyId, req.id, req.state));
    },
    async issueQr(req, ctx) {
      const r = await uc.issueQr.execute(ctx.companyId, req.keyId);
      return { qr: qrToProto(r.qr), reused: r.reused };
    },
    async getQrPng(req, ctx) {
      return { png: await uc.getQrPng.execute(ctx.companyId, req.qrId) };
    },
    async listExceptions(req) {
      const r = await uc.listExceptions.execute(req);
      return { items: r.items.map(moneyExceptionToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },
    async resolveException(req) {
      return moneyExceptionToProto(await uc.resolveException.execute({ id: req.id, action: req.action, note: req.note, resolvedBy: req.resolvedBy }));
    },
    async assignPayment(req, ctx) {
      const p = await uc.assignPayment.execute(ctx.companyId, {
        depositId: req.depositId,
        keyId: req.keyId,
        note: req.note,
        by: ctx.companyId ? 'company' : req.assignedBy || 'admin',
      });
      return paymentToDeposit(p);
    },
    async returnPayment(req, ctx) {
      const p = await uc.returnPayment.execute(ctx.companyId, {
        depositId: req.depositId,
        note: req.note,
        by: ctx.companyId ? 'company' : req.returnedBy || 'admin',
      });
      return paymentToDeposit(p);
    },
    ...depositReturnHandlers({ create: uc.createDepositReturn, list: uc.listDepositReturns }, 'BREB'),
    async issueCobroKey(req, ctx) {
      // A service call (pse-deposit): the company in the metadata; the tax regime forwarded from the caller context pse-deposit received.
      const r = await uc.issueCobroKey.execute(ctx.companyId, {
        cobroId: req.cobroId,
        transactionId: req.transactionId,
        amountCents: req.amountCents,
        expiresAt: req.expiresAt,
        merchantName: req.merchantName,
        ivaApplicable: req.ivaApplicable,
      });
      return { key: keyToProto(r.key), qrPayload: r.qrPayload, created: r.created };
    },
    async closeCobroKey(req, ctx) {
      return keyToProto(await uc.closeCobroKey.execute(ctx.companyId, req.cobroId));
    },
    async handleIncomingPayment(req) {
      return uc.handleIncomingPayment.execute({ rawBody: Buffer.from(req.rawBody), signature: req.signature });
    },
  };
}

function settlementToProto(p: InboundSettlement): settlementsV1.Settlement {
  return {
    // breb-inbound: the deposit id on the payment leg (IN); on a return leg (OUT) the return's id, which the
    // network's report echoes as the RETURNED line's our_id (one line per return: the reconciliation keys by it).
    ourId: p.direction === 'OUT' && p.returnId ? p.returnId : p.depositId,
    providerId: p.providerTransferId,
    status: p.status,
    direction: p.direction,
    amountCents: p.amountCents,
    companyId: p.companyId,
    // Settled at the network's time (its payment; its return for the OUT leg); a PENDING one is not settled (no time, no value date).
    ...(p.status !== 'PENDING' ? { settledAt: p.settledAt.toISOString(), valueDate: bogotaDateOf(p.settledAt) } : {}),
    ...(p.openExceptionId ? { openExceptionId: p.openExceptionId } : {}),
    ...(p.stepOwed ? { stepOwed: true } : {}),
    ...(p.traceparent ? { traceparent: p.traceparent } : {}),
  };
}

/**
 * Who may call each RPC: the gateway (an API client, a dashboard user, an operator or a provider callback it
 * authenticated), the reconciliation (settlements) and pse-deposit (a cobro's key).
 */
export const collectKeyAccess: AccessPolicy<AsyncService<collectKeyV1.CollectKeyServiceServer>> = {
  // The reconciliation: a service-level read across companies (a bare mesh identity: no company principal; the gateway is refused).
  listSettlements: ['reconciliation'],
  findSettlements: ['reconciliation'],
  createKey: ['gateway'],
  listKeys: ['gateway'],
  getKey: ['gateway'],
  deleteKey: ['gateway'],
  setKeyState: ['gateway:admin'],
  issueQr: ['gateway'],
  getQrPng: ['gateway'],
  handleIncomingPayment: ['gateway:callback'],
  listExceptions: ['gateway:admin'],
  resolveException: ['gateway:admin'],
  // An API client (its own payments) or an operator (any company's).
  assignPayment: ['gateway', 'gateway:admin'],
  returnPayment: ['gateway', 'gateway:admin'],
  // Returns of credited payments (docs/returns.md): the company's own, or an operator's.
  // pse-deposit: a cobro's automatic return (overpayment policy `return`) of a Bre-B payment, for the company in the metadata.
  createDepositReturn: ['gateway', 'gateway:admin', 'pse-deposit'],
  listDepositReturns: ['gateway', 'gateway:admin'],
  // Cobros: pse-deposit (the cobro's owner) for the company in the metadata.
  issueCobroKey: ['pse-deposit'],
  closeCobroKey: ['pse-deposit'],
};
