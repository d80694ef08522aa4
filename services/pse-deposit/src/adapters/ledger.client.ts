import { randomUUID } from 'node:crypto';
import {
  createAsyncClient,
  externalMovementRef,
  grpcReturnLedger,
  type CallContext,
  type MeshTls,
  type ReturnLedger,
  type ReturnRecord,
} from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import { DOCUMENT_TYPES, ledgerKeys, type DepositRecord, type FeeBreakdown } from '../domain/deposit.js';
import type { LedgerPort } from '../app/ports.js';

type LedgerClient = ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>>;

export { ledgerKeys };

/** The ledger over gRPC, in the application's terms. The company goes in the call metadata. */
export class GrpcLedger implements LedgerPort {
  private readonly client: LedgerClient;
  constructor(address: string, tls: MeshTls, deadlineMs = 5_000) {
    this.client = createAsyncClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, { deadlineMs, mesh: { tls, server: 'ledger' } });
    this.returns = grpcReturnLedger(this.client, (co) => this.ctx(co), {
      keyPrefix: 'deposit-return',
      description: (r) => `Devolución PSE del depósito ${r.depositId}`,
    });
  }

  private ctx(companyId: string): CallContext {
    return { requestId: randomUUID(), companyId, actor: 'service:pse-deposit' };
  }

  async computeFees(companyId: string, amount: bigint, ivaApplicable: boolean): Promise<FeeBreakdown> {
    const f = await this.client.computeFees({ operation: ledgerV1.FeeOperation.PSE_INFLOW, amount, ivaApplicable }, this.ctx(companyId));
    return {
      fixedFee: f.fixedFee,
      variableFee: f.variableFee,
      subtotalFee: f.subtotalFee,
      ivaApplicable: f.ivaApplicable,
      ivaAmount: f.ivaAmount,
      totalCharged: f.totalCharged,
    };
  }

  async recordPseInflow(d: DepositRecord): Promise<void> {
    const type = d.payerDocumentType === null ? undefined : DOCUMENT_TYPES[d.payerDocumentType];
    const details: ledgerV1.MovementDetails = {
      ...(d.payerName ? { payerName: d.payerName } : {}),
      ...(d.payerDocumentNumber ? { payerDocument: type ? `${type} ${d.payerDocumentNumber}` : d.payerDocumentNumber } : {}),
      ...(d.payerBank ? { payerBank: d.payerBank } : {}),
      description: `Recaudo PSE ${d.id}`,
    };
    await this.client.recordInflow(
      {
        idempotencyKey: ledgerKeys.paid(d.id),
        source: ledgerV1.InflowSource.PSE,
        grossCents: d.amount,
        fee: { ...d.fee },
        assign: true,
        // The provider's payment this books (the owner's booking wins, docs/reconciliation.md "One case per external movement"): a live correction of it is undone by the ledger.
        externalMovement: externalMovementRef('pse', { ourId: d.id }, 'payment'),
        movement: {
          id: d.movementId!,
          status: ledgerV1.MovementStatus.COMPLETED,
          ...(d.internalRef ? { reference: d.internalRef } : {}),
          details,
        },
      },
      this.ctx(d.companyId),
    );
  }

  async reversePseInflow(d: DepositRecord, reason: string): Promise<void> {
    await this.client.reverseInflow(
      {
        idempotencyKey: ledgerKeys.reversed(d.id),
        originalIdempotencyKey: ledgerKeys.paid(d.id),
        errorMessage: reason,
        externalMovement: externalMovementRef('pse', { ourId: d.id }, 'reversal'),
      },
      this.ctx(d.companyId),
    );
  }

  close(): void {
    this.client.close();
  }

  // Refunds of paid PSE deposits (docs/returns.md): the ledger's return holds on the ACH wallet.
  private readonly returns: ReturnLedger;
  reserveReturn(r: ReturnRecord): Promise<string> {
    return this.returns.reserveReturn(r);
  }
  commitReturn(r: ReturnRecord): Promise<void> {
    return this.returns.commitReturn(r);
  }
  releaseReturn(r: ReturnRecord, errorMessage: string): Promise<void> {
    return this.returns.releaseReturn(r, errorMessage);
  }
}
