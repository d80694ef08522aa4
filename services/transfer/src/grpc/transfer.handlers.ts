import { AppError, type AccessPolicy, bogotaDateOf, moneyExceptionToProto, type AsyncService } from '@wallet/platform';
import type { settlementsV1, transferV1 } from '@wallet/proto';
import type { SettlementRecord, TransferSettlements } from '../app/settlements.js';
import type { TransferUseCases } from '../app/use-cases.js';
import { policyDecisionToProto } from '../app/policy-view.js';
import { amlToProto, approvalToProto, batchItemToProto, batchToProto, companyOf, railName, sendFromProto, signerOf, transferToProto } from './mappers.js';
import type { BatchUseCases, CounterpartyUseCases, PolicyUseCases } from '../app/use-cases.js';
import { signerOf as validSigner } from '../app/approvals.js';
import { EMPTY_VERSION, policyStateToProto, policyVersionToProto } from './policy-mappers.js';
import { counterpartyToProto } from '../app/counterparty-view.js';

/**
 * The TransferService RPCs: decode, call one use case, encode. The company, its profile (tax
 * regime, NIT, limits) and a signer come only from the verified caller context (ctx.companyId,
 * ctx.principal), which the gateway signed. Errors are AppErrors mapped to gRPC once.
 */
export function transferHandlers(
  uc: TransferUseCases,
  settlements: TransferSettlements,
  batchUseCases?: BatchUseCases,
  counterpartyUseCases?: CounterpartyUseCases,
  policyUseCases?: PolicyUseCases,
): AsyncService<transferV1.TransferServiceServer> {
  const counterparties = (): CounterpartyUseCases => {
    if (!counterpartyUseCases) throw new AppError('SERVICE_UNAVAILABLE', 'Las contrapartes no están disponibles en este proceso.');
    return counterpartyUseCases;
  };
  const policies = (): PolicyUseCases => {
    if (!policyUseCases) throw new AppError('SERVICE_UNAVAILABLE', 'Las políticas de aprobación no están disponibles en este proceso.');
    return policyUseCases;
  };
  const batches = (): BatchUseCases => {
    if (!batchUseCases) throw new AppError('SERVICE_UNAVAILABLE', 'Los lotes de transferencias no están disponibles en este proceso.');
    return batchUseCases;
  };
  return {
    async *listSettlements(req) {
      for await (const batch of settlements.list(req.rail, req.date, req.batchSize)) yield { records: batch.map(settlementToProto) };
    },

    async findSettlements(req) {
      return { records: (await settlements.find(req.rail, req.ids)).map(settlementToProto) };
    },

    async createBatch(req, ctx) {
      const r = await batches().create.execute(ctx, companyOf(ctx), {
        reference: req.reference,
        description: req.description,
        mode: req.mode,
        source: req.source,
        requestHash: req.requestHash,
        idempotencyKey: req.idempotencyKey,
        items: req.items.map((it) => ({
          seq: it.seq,
          line: it.line,
          send: it.send ? sendFromProto(it.send, ctx) : undefined,
          invalidCode: it.invalidCode,
          invalidMessage: it.invalidMessage,
        })),
      });
      return {
        batch: batchToProto(r.batch),
        replayed: r.replayed,
        idempotencyKeyReplayed: r.keyReplayed,
        results: r.results.map((x) => ({
          seq: x.seq,
          line: x.line ?? 0,
          valid: x.valid,
          ...(x.errorCode ? { errorCode: x.errorCode } : {}),
          ...(x.message ? { message: x.message } : {}),
          ...(x.policy ? { policyDecision: policyDecisionToProto(x.policy) } : {}),
        })),
        ...(r.policy ? { totalPolicyDecision: policyDecisionToProto(r.policy.total), policyDecision: policyDecisionToProto(r.policy.combined) } : {}),
      };
    },
    async executeBatch(req, ctx) {
      return batchToProto(await batches().execute.execute(ctx, companyOf(ctx), req.batchId));
    },
    async cancelBatch(req, ctx) {
      return batchToProto(await batches().cancel.execute(ctx, req.batchId));
    },
    async getBatch(req, ctx) {
      return batchToProto(await batches().queries.get(ctx.companyId, req.batchId));
    },
    async listBatches(req, ctx) {
      const r = await batches().queries.list(ctx.companyId, { state: req.state, limit: req.limit, cursor: req.cursor });
      return { items: r.items.map(batchToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },
    async listBatchItems(req, ctx) {
      const r = await batches().queries.items(ctx.companyId, { batchId: req.batchId, status: req.status, limit: req.limit, cursor: req.cursor });
      return { items: r.items.map(batchItemToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },
    async *streamBatchItems(req, ctx) {
      for await (const page of batches().queries.stream(ctx.companyId, req.batchId)) yield { items: page.map(batchItemToProto) };
    },

    async createCounterparty(req, ctx) {
      return counterpartyToProto(await counterparties().create.execute(ctx.companyId, counterpartyInput(req)));
    },
    async getCounterparty(req, ctx) {
      return counterpartyToProto(await counterparties().queries.get(ctx.companyId, req.id));
    },
    async listCounterparties(req, ctx) {
      const r = await counterparties().queries.list(ctx.companyId, { tag: req.tag, status: req.status, rail: req.rail, limit: req.limit, cursor: req.cursor });
      return { items: r.items.map(counterpartyToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },
    async updateCounterparty(req, ctx) {
      return counterpartyToProto(await counterparties().update.execute(ctx.companyId, req.id, { ...counterpartyInput(req), replaceTags: req.replaceTags }));
    },
    async deleteCounterparty(req, ctx) {
      return counterpartyToProto(await counterparties().remove.execute(ctx.companyId, req.id));
    },
    async verifyCounterparty(req, ctx) {
      return counterpartyToProto(await counterparties().verify.execute(ctx.companyId, req.id));
    },

    async getApprovalPolicy(_req, ctx) {
      return policyStateToProto(await policies().queries.state(ctx.companyId, companyOf(ctx).multiSigThreshold));
    },
    async listApprovalPolicyVersions(req, ctx) {
      const r = await policies().queries.list(ctx.companyId, { limit: req.limit, beforeVersion: req.beforeVersion });
      return { items: r.items.map(policyVersionToProto), ...(r.nextBeforeVersion ? { nextBeforeVersion: r.nextBeforeVersion } : {}) };
    },
    async proposeApprovalPolicy(req, ctx) {
      const signer = validSigner(signerOf(ctx));
      const input = { documentJson: req.documentJson, note: req.note, precheck: req.precheck };
      const p = await policies().propose.execute(ctx.companyId, companyOf(ctx).multiSigThreshold, signer, input);
      // A precheck writes nothing: the answer is the document as it would be proposed (version 0).
      return p ? policyVersionToProto(p) : { ...EMPTY_VERSION, documentJson: req.documentJson, proposedBy: signer.email };
    },
    async signApprovalPolicy(req, ctx) {
      return policyVersionToProto(await policies().sign.execute(ctx.companyId, validSigner(signerOf(ctx)), { id: req.id, precheck: req.precheck }));
    },
    async cancelApprovalPolicy(req, ctx) {
      return policyVersionToProto(await policies().cancel.execute(ctx.companyId, validSigner(signerOf(ctx)), { id: req.id, precheck: req.precheck }));
    },

    async resolveKey(req, ctx) {
      const r = await uc.resolveKey.execute(ctx.companyId, { keyValue: req.keyValue, keyType: req.keyType });
      if (!r.found) return { found: false, anchorHandle: '', keyType: '', keyValue: '', errorCode: r.errorCode, message: r.message };
      return { found: true, anchorHandle: r.anchorHandle, keyType: r.keyType, keyValue: r.keyValue, recipient: { ...r.recipient }, errorCode: '', message: '' };
    },

    async quote(req, ctx) {
      const q = await uc.quote.execute(ctx.companyId, {
        rail: railName(req.rail),
        amount: req.amount,
        keyValue: req.keyValue,
        keyType: req.keyType,
        ivaApplicable: companyOf(ctx).ivaApplicable,
        multiSigThreshold: companyOf(ctx).multiSigThreshold,
        counterpartyId: req.counterpartyId,
      });
      return {
        amount: q.amount,
        currentBalance: q.currentBalance,
        fee: { ...q.fee },
        totalCost: q.totalCost,
        canAfford: q.canAfford,
        ...(q.message !== null ? { message: q.message } : {}),
        policyDecision: policyDecisionToProto(q.policy),
      };
    },

    async send(req, ctx) {
      const r = await uc.send.execute(ctx, sendFromProto(req, ctx));
      return { transfer: transferToProto(r.transfer), replayed: r.replayed, idempotencyKeyReplayed: r.keyReplayed === true };
    },

    async handleRailCallback(req) {
      return uc.handleRailCallback.execute({ rail: railName(req.rail), rawBody: Buffer.from(req.rawBody), signature: req.signature });
    },

    async addAmlEntry(req) {
      return amlToProto(
        await uc.addAmlEntry.execute({
          documentNumber: req.documentNumber,
          name: req.name,
          reason: req.reason,
          ...(req.bankAccount ? { bankAccount: { bankCode: req.bankAccount.bankCode, accountNumber: req.bankAccount.accountNumber } } : {}),
        }),
      );
    },

    async removeAmlEntry(req) {
      return amlToProto(await uc.removeAmlEntry.execute({ id: req.id }));
    },

    async listExceptions(req) {
      const r = await uc.listExceptions.execute(req);
      return { items: r.items.map(moneyExceptionToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },

    async resolveException(req) {
      return moneyExceptionToProto(await uc.resolveException.execute({ id: req.id, action: req.action, note: req.note, resolvedBy: req.resolvedBy }));
    },

    async listApprovals(req, ctx) {
      const r = await uc.listApprovals.execute(ctx.companyId, { status: req.status, limit: req.limit, cursor: req.cursor });
      return { items: r.items.map(approvalToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },

    async signApproval(req, ctx) {
      return approvalToProto(await uc.signApproval.execute(ctx.companyId, { approvalId: req.approvalId, signer: signerOf(ctx), precheck: req.precheck }));
    },

    async signBatchApproval(req, ctx) {
      return batchToProto(await batches().sign.execute(ctx.companyId, { batchId: req.batchId, signer: signerOf(ctx), precheck: req.precheck }));
    },

    async rejectBatchApproval(req, ctx) {
      return batchToProto(await batches().reject.execute(ctx.companyId, { batchId: req.batchId, signer: signerOf(ctx), reason: req.reason }));
    },

    async rejectApproval(req, ctx) {
      return approvalToProto(await uc.rejectApproval.execute(ctx.companyId, { approvalId: req.approvalId, signer: signerOf(ctx), reason: req.reason }));
    },
  };
}

/** A create's or an update's fields as the domain reads them (proto3: an absent optional is undefined). */
function counterpartyInput(req: transferV1.CreateCounterpartyRequest | transferV1.UpdateCounterpartyRequest) {
  return {
    name: req.name,
    brebKey: req.brebKey,
    bankAccount: req.bankAccount,
    documentTypeId: req.documentTypeId,
    documentNumber: req.documentNumber,
    holderName: req.holderName,
    tags: req.tags,
    ...('requestHash' in req ? { requestHash: req.requestHash, idempotencyKey: req.idempotencyKey } : {}),
  };
}

function settlementToProto(r: SettlementRecord): settlementsV1.Settlement {
  return {
    ourId: r.ourId,
    status: r.status,
    direction: 'OUT',
    amountCents: r.amountCents,
    companyId: r.companyId,
    ...(r.providerId !== null ? { providerId: r.providerId } : {}),
    ...(r.settledAt !== null
      ? {
          settledAt: r.settledAt.toISOString(),
          valueDate: bogotaDateOf(r.settledAt),
        }
      : {}),
    ...(r.openExceptionId ? { openExceptionId: r.openExceptionId } : {}),
    ...(r.traceparent ? { traceparent: r.traceparent } : {}),
  };
}

/**
 * Who may call each RPC: the gateway for every method that serves an API client, a dashboard user,
 * an operator or a provider callback it authenticated; the reconciliation (a service-level read
 * across companies: a bare mesh identity, so no company principal, and the gateway is refused) for
 * the settlements.
 */
export const transferAccess: AccessPolicy<AsyncService<transferV1.TransferServiceServer>> = {
  listSettlements: ['reconciliation'],
  findSettlements: ['reconciliation'],
  resolveKey: ['gateway'],
  quote: ['gateway'],
  send: ['gateway'],
  handleRailCallback: ['gateway:callback'],
  addAmlEntry: ['gateway:admin'],
  removeAmlEntry: ['gateway:admin'],
  listExceptions: ['gateway:admin'],
  resolveException: ['gateway:admin'],
  listApprovals: ['gateway'],
  signApproval: ['gateway'],
  rejectApproval: ['gateway'],
  // bulk payouts (docs/batches.md): API clients through the gateway
  createBatch: ['gateway'],
  executeBatch: ['gateway'],
  cancelBatch: ['gateway'],
  getBatch: ['gateway'],
  listBatches: ['gateway'],
  listBatchItems: ['gateway'],
  streamBatchItems: ['gateway'],
  // a multi-signature company's batch: one approval, signed in the dashboard
  signBatchApproval: ['gateway'],
  rejectBatchApproval: ['gateway'],
  // counterparties (payees): API clients and dashboard users through the gateway
  createCounterparty: ['gateway'],
  getCounterparty: ['gateway'],
  listCounterparties: ['gateway'],
  updateCounterparty: ['gateway'],
  deleteCounterparty: ['gateway'],
  verifyCounterparty: ['gateway'],
  // approval policies: read by API clients and dashboard users, changed by dashboard ADMINs (docs/policies.md)
  getApprovalPolicy: ['gateway'],
  listApprovalPolicyVersions: ['gateway'],
  proposeApprovalPolicy: ['gateway'],
  signApprovalPolicy: ['gateway'],
  cancelApprovalPolicy: ['gateway'],
};
