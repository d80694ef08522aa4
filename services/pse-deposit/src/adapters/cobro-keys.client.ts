import { randomUUID } from 'node:crypto';
import { createAsyncClient, type CallContext, type MeshTls } from '@wallet/platform';
import { collectKeyV1 } from '@wallet/proto';
import type { CobroKeysPort } from '../app/cobros.js';

type CollectKeyClient = ReturnType<typeof createAsyncClient<collectKeyV1.CollectKeyServiceServer>>;

/** collect-key's cobro keys over gRPC (IssueCobroKey / CloseCobroKey). The company goes in the call metadata. */
export class GrpcCobroKeys implements CobroKeysPort {
  private readonly client: CollectKeyClient;
  constructor(address: string, tls: MeshTls, deadlineMs = 10_000) {
    // The directory registration behind a new key is a call of its own: a longer deadline than the ledger's.
    this.client = createAsyncClient<collectKeyV1.CollectKeyServiceServer>(collectKeyV1.CollectKeyServiceClient, address, {
      deadlineMs,
      mesh: { tls, server: 'collect-key' },
    });
  }

  private ctx(companyId: string): CallContext {
    return { requestId: randomUUID(), companyId, actor: 'service:pse-deposit' };
  }

  async issue(
    companyId: string,
    r: { cobroId: string; transactionId: string; amountCents: bigint | null; expiresAt: Date; merchantName: string; ivaApplicable: boolean },
  ): Promise<{ keyId: string; keyValue: string; qrPayload: string }> {
    const out = await this.client.issueCobroKey(
      {
        cobroId: r.cobroId,
        transactionId: r.transactionId,
        ...(r.amountCents !== null ? { amountCents: r.amountCents } : {}),
        expiresAt: r.expiresAt,
        merchantName: r.merchantName,
        ivaApplicable: r.ivaApplicable,
      },
      this.ctx(companyId),
    );
    if (!out.key) throw new Error('IssueCobroKey answered no key');
    return { keyId: out.key.id, keyValue: out.key.keyValue, qrPayload: out.qrPayload };
  }

  /** A cobro's automatic return of a Bre-B payment (collect-key's CreateDepositReturn, idempotent by the return id). */
  async createReturn(
    companyId: string,
    r: { returnId: string; depositId: string; amountCents: bigint; reason: string; description: string; requestedBy: string },
  ): Promise<{ status: string }> {
    const out = await this.client.createDepositReturn(r, this.ctx(companyId));
    return { status: out.status };
  }

  async close(companyId: string, cobroId: string): Promise<void> {
    await this.client.closeCobroKey({ cobroId }, this.ctx(companyId));
  }

  shutdown(): void {
    this.client.close();
  }
}
