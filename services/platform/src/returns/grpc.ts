import { ledgerV1, type depositV1 } from '@wallet/proto';
import type { CallContext } from '../grpc/context.js';
import type { AsyncClient } from '../grpc/client.js';
import type { ReturnLedger, ReturnRecord } from './ports.js';
import { returnToProto, type CreateDepositReturn, type ListDepositReturns } from './return-saga.js';

/** The part of the ledger's client a return uses (ReserveReturn, CommitReturn, ReleaseReturn). */
type ReturnLedgerClient = Pick<AsyncClient<ledgerV1.LedgerServiceServer>, 'reserveReturn' | 'commitReturn' | 'releaseReturn'>;

/**
 * The ledger's return holds over its gRPC client, for an owner of inbound payments: its keys
 * `<keyPrefix>:<return id>:reserve|commit|release`, the movement described by `description` with the
 * payer as its target, and the owner's call context for the return's company.
 */
export function grpcReturnLedger(
  client: ReturnLedgerClient,
  ctx: (companyId: string) => CallContext,
  o: { keyPrefix: string; description: (r: ReturnRecord) => string },
): ReturnLedger {
  const key = (r: ReturnRecord, step: string) => `${o.keyPrefix}:${r.id}:${step}`;
  return {
    async reserveReturn(r) {
      const details: ledgerV1.MovementDetails = {
        ...(r.payerName ? { targetName: r.payerName } : {}),
        ...(r.payerDocument ? { targetDocument: r.payerDocument } : {}),
        ...(r.payerBank ? { bankName: r.payerBank } : {}),
        description: o.description(r),
      };
      const out = await client.reserveReturn(
        {
          idempotencyKey: key(r, 'reserve'),
          inflowIdempotencyKey: r.inflowKey,
          amount: r.amount,
          movement: { id: r.movementId, status: ledgerV1.MovementStatus.PENDING, reference: r.id, details },
        },
        ctx(r.companyId),
      );
      return out.hold!.id;
    },
    async commitReturn(r) {
      await client.commitReturn({ idempotencyKey: key(r, 'commit'), holdId: r.holdId! }, ctx(r.companyId));
    },
    async releaseReturn(r, errorMessage) {
      await client.releaseReturn({ idempotencyKey: key(r, 'release'), holdId: r.holdId!, errorMessage }, ctx(r.companyId));
    },
  };
}

/** The two gRPC methods of an owner's service that serve a deposit's returns (CreateDepositReturn, ListDepositReturns). */
export function depositReturnHandlers(uc: { create: CreateDepositReturn; list: ListDepositReturns }, rail: 'BREB' | 'PSE') {
  return {
    async createDepositReturn(req: depositV1.CreateDepositReturnRequest, ctx: CallContext): Promise<depositV1.DepositReturn> {
      const r = await uc.create.execute(ctx.companyId, {
        returnId: req.returnId,
        depositId: req.depositId,
        amountCents: req.amountCents,
        reason: req.reason,
        description: req.description,
        requestedBy: req.requestedBy || ctx.actor || '',
      });
      return returnToProto(r, rail);
    },
    async listDepositReturns(req: depositV1.ListDepositReturnsRequest, ctx: CallContext): Promise<depositV1.ListDepositReturnsResponse> {
      return { items: (await uc.list.execute(ctx.companyId, req.depositId)).map((r) => returnToProto(r, rail)) };
    },
  };
}
