import { randomUUID } from 'node:crypto';
import { createAsyncClient, type MeshTls } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { ClearingLedger } from '../app/deps.js';
import type { ReportRail } from '../domain/report.js';

/** The ledger's PostClearingAdjustment and ReverseCorrection over gRPC, as the mesh identity `reconciliation` (a service-level posting: no company). */
export class GrpcClearingLedger implements ClearingLedger {
  private readonly client: ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>>;

  constructor(address: string, tls: MeshTls, deadlineMs = 10_000) {
    this.client = createAsyncClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, { deadlineMs, mesh: { tls, server: 'ledger' } });
  }

  async postClearingAdjustment(a: {
    idempotencyKey: string;
    clearing: ReportRail;
    deltaCents: bigint;
    reason: string;
    movement: string;
    caseId: string;
  }): Promise<void> {
    await this.client.postClearingAdjustment(
      { idempotencyKey: a.idempotencyKey, clearing: a.clearing, deltaCents: a.deltaCents, reason: a.reason, movement: a.movement, caseId: a.caseId },
      { requestId: randomUUID(), actor: 'service:reconciliation' },
    );
  }

  async reverseCorrection(a: { idempotencyKey: string; correctionKey: string; reason: string }): Promise<void> {
    await this.client.reverseCorrection(
      { idempotencyKey: a.idempotencyKey, correctionKey: a.correctionKey, reason: a.reason },
      { requestId: randomUUID(), actor: 'service:reconciliation' },
    );
  }

  close(): void {
    this.client.close();
  }
}
