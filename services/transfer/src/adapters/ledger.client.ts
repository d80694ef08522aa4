import { randomUUID } from 'node:crypto';
import { AppError, createAsyncClient, instantToDate, type CallContext, type MeshTls } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { Rail } from '../domain/rails.js';
import type { FeeBreakdown } from '../domain/transfer.js';
import type { CommitExpectation, LedgerPort, ReserveCommand, WalletView } from '../app/ports.js';

type LedgerClient = ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>>;

const protoRail = (r: Rail): ledgerV1.Rail => (r === 'BREB' ? ledgerV1.Rail.BREB : ledgerV1.Rail.ACH);
const railOf = (r: ledgerV1.Rail): Rail | null => (r === ledgerV1.Rail.BREB ? 'BREB' : r === ledgerV1.Rail.ACH ? 'ACH' : null);
const feeOperation = (r: Rail) => (r === 'BREB' ? ledgerV1.FeeOperation.BREB_OUTFLOW : ledgerV1.FeeOperation.ACH_OUTFLOW);

/** Idempotency keys derived from the transfer (ARCHITECTURE rule 2): retries never double-post. */
export const ledgerKeys = {
  reserve: (id: string) => `transfer:${id}:reserve`,
  commit: (id: string) => `transfer:${id}:commit`,
  release: (id: string) => `transfer:${id}:release`,
};

/** A Reserve as the ledger takes it, always built the same way from the command (a retry replays it). */
function reserveRequest(cmd: ReserveCommand): ledgerV1.ReserveRequest {
  const d = cmd.details;
  const details: ledgerV1.MovementDetails = {
    targetName: d.targetName,
    targetDocument: d.targetDocument,
    ...(d.bankName ? { bankName: d.bankName } : {}),
    ...(d.bankAccountType ? { bankAccountType: d.bankAccountType } : {}),
    ...(d.bankAccountNumber ? { bankAccountNumber: d.bankAccountNumber } : {}),
    ...(d.description ? { description: d.description } : {}),
    ...(cmd.batchId ? { batchId: cmd.batchId } : {}),
  };
  return {
    idempotencyKey: ledgerKeys.reserve(cmd.transferId),
    rail: protoRail(cmd.rail),
    amount: cmd.amount,
    ...(cmd.fee ? { fee: { ...cmd.fee } } : { computeFee: { ivaApplicable: cmd.ivaApplicable } }),
    movement: {
      id: cmd.transferId,
      status: cmd.awaitingApproval ? ledgerV1.MovementStatus.AWAITING_APPROVAL : ledgerV1.MovementStatus.PENDING,
      ...(cmd.reference ? { reference: cmd.reference } : {}),
      ...(cmd.apiKeyId ? { apiKeyId: cmd.apiKeyId } : {}),
      details,
    },
  };
}

/**
 * The fee a hold reserved, as the transfer shows it: subtotal and IVA from the hold, the fixed part
 * from the hold (or, on a hold from before the ledger kept it, from the fee that was sent). A hold
 * whose split cannot be known is an internal error: the send is then left for the sweeper, which
 * releases the hold.
 */
export function holdFee(hold: ledgerV1.Hold, ivaApplicable: boolean, sent: FeeBreakdown | null): FeeBreakdown {
  const fixedFee = hold.fixedFee ?? sent?.fixedFee;
  if (fixedFee === undefined || fixedFee > hold.fee) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'hold without its fee split' });
  return {
    fixedFee,
    variableFee: hold.fee - fixedFee,
    subtotalFee: hold.fee,
    ivaApplicable,
    ivaAmount: hold.iva,
    totalCharged: hold.fee + hold.iva,
  };
}

/** The ledger over gRPC, in the application's terms. The company goes in the call metadata. */
export class GrpcLedger implements LedgerPort {
  private readonly client: LedgerClient;
  constructor(address: string, tls: MeshTls, deadlineMs = 5_000) {
    this.client = createAsyncClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, { deadlineMs, mesh: { tls, server: 'ledger' } });
  }

  private ctx(companyId: string, apiKeyId?: string | null): CallContext {
    return { requestId: randomUUID(), companyId, actor: 'service:transfer', ...(apiKeyId ? { apiKeyId } : {}) };
  }

  async computeFees(companyId: string, rail: Rail, amount: bigint, ivaApplicable: boolean): Promise<FeeBreakdown> {
    const f = await this.client.computeFees({ operation: feeOperation(rail), amount, ivaApplicable }, this.ctx(companyId));
    return {
      fixedFee: f.fixedFee,
      variableFee: f.variableFee,
      subtotalFee: f.subtotalFee,
      ivaApplicable: f.ivaApplicable,
      ivaAmount: f.ivaAmount,
      totalCharged: f.totalCharged,
    };
  }

  async balances(companyId: string, ivaApplicable: boolean): Promise<WalletView[]> {
    const res = await this.client.getBalances({ ivaApplicable }, this.ctx(companyId));
    const out: WalletView[] = [];
    for (const w of res.wallets) {
      const rail = railOf(w.rail);
      if (rail) out.push({ rail, availableCents: w.availableCents, pendingOutCents: w.pendingOutCents });
    }
    return out;
  }

  async reserve(cmd: ReserveCommand): Promise<{ holdId: string; fee: FeeBreakdown }> {
    const res = await this.client.reserve(reserveRequest(cmd), this.ctx(cmd.companyId, cmd.apiKeyId));
    if (!res.hold) throw new AppError('INTERNAL_ERROR');
    return { holdId: res.hold.id, fee: holdFee(res.hold, cmd.ivaApplicable, cmd.fee) };
  }

  async reserveBatch(companyId: string, cmds: ReserveCommand[]): Promise<{ holdIds: string[]; replayed: boolean }> {
    // One call for up to 10,000 holds: a deadline for the transaction, not for one row.
    const res = await this.client.reserveBatch({ items: cmds.map(reserveRequest) }, this.ctx(companyId), { deadlineMs: 60_000 });
    if (res.holdIds.length !== cmds.length) throw new AppError('INTERNAL_ERROR');
    return { holdIds: res.holdIds, replayed: res.replayed };
  }

  async computeFeesBatch(companyId: string, rail: Rail, amounts: bigint[], ivaApplicable: boolean): Promise<FeeBreakdown[]> {
    if (amounts.length === 0) return [];
    const res = await this.client.computeFeesBatch({ operation: feeOperation(rail), amounts, ivaApplicable }, this.ctx(companyId));
    if (res.fees.length !== amounts.length) throw new AppError('INTERNAL_ERROR');
    return res.fees.map((f) => ({
      fixedFee: f.fixedFee,
      variableFee: f.variableFee,
      subtotalFee: f.subtotalFee,
      ivaApplicable: f.ivaApplicable,
      ivaAmount: f.ivaAmount,
      totalCharged: f.totalCharged,
    }));
  }

  async commit(
    companyId: string,
    transferId: string,
    holdId: string,
    expected?: { rail: Rail; amount: bigint; fee: bigint; iva: bigint },
  ): Promise<{ completedAt: Date | null }> {
    const res = await this.client.commit(
      {
        idempotencyKey: ledgerKeys.commit(transferId),
        holdId,
        // The hold's movement is the transfer's id (reserveRequest).
        ...(expected
          ? { expected: { rail: protoRail(expected.rail), amount: expected.amount, fee: expected.fee, iva: expected.iva, movementId: transferId } }
          : {}),
      },
      this.ctx(companyId),
    );
    // The transfer keeps milliseconds; the ledger's instant (microseconds) is the journal's.
    return { completedAt: res.movement?.completedAt ? instantToDate(res.movement.completedAt) : null };
  }

  async commitMany(companyId: string, holds: CommitExpectation[]): Promise<Map<string, Date | null>> {
    const res = await this.client.commitBatch(
      {
        items: holds.map((h) => ({
          idempotencyKey: ledgerKeys.commit(h.transferId),
          holdId: h.holdId,
          expected: { rail: protoRail(h.rail), amount: h.amount, fee: h.fee, iva: h.iva, movementId: h.transferId },
        })),
      },
      this.ctx(companyId),
    );
    if (res.items.length !== holds.length) throw new AppError('INTERNAL_ERROR');
    const applied = new Map<string, Date | null>();
    res.items.forEach((item, i) => {
      if (item.applied) applied.set(holds[i]!.transferId, item.completedAt ? instantToDate(item.completedAt) : null);
    });
    return applied;
  }

  async release(companyId: string, transferId: string, holdId: string, errorMessage: string, finalStatus: 'FAILED' | 'EXPIRED' = 'FAILED'): Promise<void> {
    await this.client.release(
      {
        idempotencyKey: ledgerKeys.release(transferId),
        holdId,
        finalStatus: finalStatus === 'EXPIRED' ? ledgerV1.MovementStatus.EXPIRED : ledgerV1.MovementStatus.FAILED,
        errorMessage: errorMessage.slice(0, 1000),
      },
      this.ctx(companyId),
    );
  }

  async setMovementStatus(companyId: string, transferId: string, status: 'EXECUTING' | 'PENDING', expected: 'AWAITING_APPROVAL' | 'EXECUTING'): Promise<void> {
    await this.client.setMovementStatus(
      {
        movementId: transferId,
        status: ledgerV1.MovementStatus[status],
        expectedStatus: ledgerV1.MovementStatus[expected],
      },
      this.ctx(companyId),
    );
  }

  async setMovementStatuses(
    companyId: string,
    transferIds: string[],
    status: 'EXECUTING' | 'PENDING',
    expected: 'AWAITING_APPROVAL' | 'EXECUTING',
  ): Promise<number> {
    if (transferIds.length === 0) return 0;
    const res = await this.client.setMovementStatuses(
      {
        movementIds: transferIds,
        status: ledgerV1.MovementStatus[status],
        expectedStatus: ledgerV1.MovementStatus[expected],
      },
      this.ctx(companyId),
    );
    return res.changed;
  }

  async voidReserve(companyId: string, transferId: string, rail: 'BREB' | 'ACH', ivaApplicable: boolean) {
    const res = await this.client.voidReserve({ idempotencyKey: ledgerKeys.reserve(transferId), rail: protoRail(rail) }, this.ctx(companyId));
    if (res.voided) return { voided: true as const };
    if (!res.hold) throw new AppError('INTERNAL_ERROR');
    const holdStatus =
      res.hold.status === ledgerV1.HoldStatus.COMMITTED
        ? ('COMMITTED' as const)
        : res.hold.status === ledgerV1.HoldStatus.RELEASED
          ? ('RELEASED' as const)
          : ('OPEN' as const);
    const fee = res.hold.fixedFee !== undefined ? holdFee(res.hold, ivaApplicable, null) : undefined;
    return { voided: false as const, holdId: res.hold.id, holdStatus, ...(fee ? { fee } : {}) };
  }

  async writeOffPayout(
    companyId: string,
    key: string,
    rail: 'BREB' | 'ACH',
    amount: bigint,
    reason: string,
    target: { movement: string; caseId: string },
  ): Promise<void> {
    await this.client.postCorrection(
      {
        idempotencyKey: key,
        type: ledgerV1.CorrectionType.WRITE_OFF_PAYOUT,
        rail: protoRail(rail),
        amount,
        reason: reason.slice(0, 255),
        movement: target.movement,
        caseId: target.caseId,
      },
      this.ctx(companyId),
    );
  }

  close(): void {
    this.client.close();
  }
}
