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
import type { FeeBreakdown, LedgerPort, PaymentRecord } from '../app/ports.js';
import { paymentLedgerKey } from '../domain/incoming-payment.js';

type LedgerClient = ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>>;

export { paymentLedgerKey };

/** The ledger over gRPC, in the application's terms. The company goes in the call metadata. */
export class GrpcLedger implements LedgerPort {
  private readonly client: LedgerClient;
  constructor(address: string, tls: MeshTls, deadlineMs = 5_000) {
    this.client = createAsyncClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, { deadlineMs, mesh: { tls, server: 'ledger' } });
    this.returns = grpcReturnLedger(this.client, (co) => this.ctx(co), {
      keyPrefix: 'collectkey:return',
      description: (r) => `Devolución Bre-B del depósito ${r.depositId}`,
    });
  }

  private ctx(companyId: string): CallContext {
    return { requestId: randomUUID(), companyId, actor: 'service:collect-key' };
  }

  async computeBrebInflowFees(companyId: string, amount: bigint, ivaApplicable: boolean): Promise<FeeBreakdown> {
    const f = await this.client.computeFees({ operation: ledgerV1.FeeOperation.BREB_INFLOW, amount, ivaApplicable }, this.ctx(companyId));
    return {
      fixedFee: f.fixedFee,
      variableFee: f.variableFee,
      subtotalFee: f.subtotalFee,
      ivaApplicable: f.ivaApplicable,
      ivaAmount: f.ivaAmount,
      totalCharged: f.totalCharged,
    };
  }

  async recordInflow(p: PaymentRecord, step: 'credit' | 'hold' | 'assign'): Promise<void> {
    const assign = step !== 'hold';
    const details: ledgerV1.MovementDetails = {
      ...(p.payerName ? { payerName: p.payerName } : {}),
      ...(p.payerDocument ? { payerDocument: p.payerDocument } : {}),
      ...(p.payerBank ? { payerBank: p.payerBank } : {}),
      description: `Recaudo Bre-B ${p.key.value} (${p.key.externalId})`,
    };
    await this.client.recordInflow(
      {
        idempotencyKey: step === 'assign' ? `${paymentLedgerKey(p.providerTransferId)}:assign` : paymentLedgerKey(p.providerTransferId),
        source: ledgerV1.InflowSource.BREB,
        grossCents: p.amount,
        fee: { ...p.fee },
        assign,
        fromUnassigned: step === 'assign',
        // The network's payment this books (the owner's booking wins, docs/reconciliation.md "One case per external movement"): a correction of it accepted before (a break on
        // the day's report while we answered 503) is undone by the ledger. Not the assignment of a held
        // payment: that books no new movement of the network.
        ...(step !== 'assign' ? { externalMovement: externalMovementRef('breb-inbound', { providerId: p.providerTransferId }) } : {}),
        ...(assign ? { movement: { id: p.movementId, status: ledgerV1.MovementStatus.COMPLETED, reference: p.depositId, details } } : {}),
      },
      this.ctx(p.companyId),
    );
  }

  async returnHeld(p: PaymentRecord): Promise<void> {
    await this.client.returnUnassignedInflow(
      {
        idempotencyKey: `${paymentLedgerKey(p.providerTransferId)}:returned`,
        originalIdempotencyKey: paymentLedgerKey(p.providerTransferId),
        grossCents: p.amount,
      },
      this.ctx(p.companyId),
    );
  }

  // Returns of credited payments (docs/returns.md): the ledger's return holds on the BREB wallet.
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

  async hasBrebWallet(companyId: string): Promise<boolean> {
    const r = await this.client.getBalances({ ivaApplicable: false }, this.ctx(companyId));
    return r.wallets.some((w) => w.rail === ledgerV1.Rail.BREB);
  }

  close(): void {
    this.client.close();
  }
}
