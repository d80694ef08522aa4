import { randomUUID } from 'node:crypto';
import { createAsyncClient, type GrpcClientOptions, type MeshTls } from '@wallet/platform';
import { collectKeyV1, depositV1, transferV1, type settlementsV1 } from '@wallet/proto';
import type { OurRecords } from '../app/ports.js';
import { OurRecordError, type OurRecord, type OurStatus } from '../domain/matching.js';
import type { ReportRail } from '../domain/report.js';

/**
 * `OurRecords` over the owning services' gRPC (wallet.settlements.v1): transfer for breb and ach,
 * pse-deposit for pse, collect-key for breb-inbound. Each `ListSettlements` is a server stream of
 * key-ordered batches (read as the engine consumes them: grpc-js flow control holds the server back),
 * each `FindSettlements` a unary call of at most 500 ids. Calls go as the mesh identity
 * `reconciliation` over mutual TLS, each server checked by its own identity; no company principal:
 * these are service-level reads across companies.
 */
export interface GrpcOurRecordsOptions {
  /** This process's mesh credentials (identity `reconciliation`). */
  mesh: MeshTls;
  /** host:port (or a grpc-js target) of each owning service; a rail whose service is not given is refused. */
  transferAddress?: string;
  pseDepositAddress?: string;
  collectKeyAddress?: string;
  /** Records per streamed batch asked of the services (0: their default, 1,000). */
  batchSize?: number;
  /** Deadline of one FindSettlements (default 30 s) and of a whole day's stream (default 30 min). */
  findDeadlineMs?: number;
  streamDeadlineMs?: number;
}

type SettlementsClient = {
  listSettlements(
    req: settlementsV1.ListSettlementsRequest,
    ctx: { requestId: string },
    o?: { deadlineMs?: number },
  ): AsyncIterable<settlementsV1.SettlementBatch>;
  findSettlements(
    req: settlementsV1.FindSettlementsRequest,
    ctx: { requestId: string },
    o?: { deadlineMs?: number },
  ): Promise<settlementsV1.FindSettlementsResponse>;
  close(): void;
};

const STATUSES: readonly OurStatus[] = ['COMPLETED', 'FAILED', 'ASSIGNED', 'UNASSIGNED', 'REVERSED', 'REFUNDED', 'RETURNED', 'PENDING'];

/** A record as the engine takes it; a status the contract does not have is the service's error. */
export function ourRecordOf(rail: ReportRail, s: settlementsV1.Settlement): OurRecord {
  if (!(STATUSES as readonly string[]).includes(s.status)) throw new OurRecordError(`${rail}: status ${s.status} of ${s.ourId} is not one of ours`);
  return {
    ourId: s.ourId,
    providerId: s.providerId ?? null,
    status: s.status as OurStatus,
    amountCents: s.amountCents,
    settledAt: s.settledAt ?? null,
    ...(s.companyId ? { companyId: s.companyId } : {}),
    ...(s.direction ? { direction: s.direction } : {}),
    ...(s.openExceptionId ? { openExceptionId: s.openExceptionId } : {}),
    ...(s.stepOwed ? { stepOwed: true } : {}),
    ...(s.traceparent ? { traceparent: s.traceparent } : {}),
  };
}

export class GrpcOurRecords implements OurRecords {
  private readonly byRail: Partial<Record<ReportRail, SettlementsClient>> = {};
  private readonly clients: SettlementsClient[] = [];

  constructor(private readonly o: GrpcOurRecordsOptions) {
    const opts = (server: 'transfer' | 'pse-deposit' | 'collect-key'): GrpcClientOptions => ({
      deadlineMs: o.findDeadlineMs ?? 30_000,
      mesh: { tls: o.mesh, server },
    });
    if (o.transferAddress) {
      const transfer = createAsyncClient<transferV1.TransferServiceServer>(transferV1.TransferServiceClient, o.transferAddress, opts('transfer'));
      this.byRail.breb = transfer;
      this.byRail.ach = transfer;
      this.clients.push(transfer);
    }
    if (o.pseDepositAddress) {
      this.byRail.pse = createAsyncClient<depositV1.DepositServiceServer>(depositV1.DepositServiceClient, o.pseDepositAddress, opts('pse-deposit'));
      this.clients.push(this.byRail.pse);
    }
    if (o.collectKeyAddress) {
      this.byRail['breb-inbound'] = createAsyncClient<collectKeyV1.CollectKeyServiceServer>(
        collectKeyV1.CollectKeyServiceClient,
        o.collectKeyAddress,
        opts('collect-key'),
      );
      this.clients.push(this.byRail['breb-inbound']);
    }
  }

  private client(rail: ReportRail): SettlementsClient {
    const c = this.byRail[rail];
    if (!c) throw new Error(`GrpcOurRecords: no address configured for the service of rail ${rail}`);
    return c;
  }

  async *settled(rail: ReportRail, date: string): AsyncIterable<readonly OurRecord[]> {
    const stream = this.client(rail).listSettlements(
      { rail, date, batchSize: this.o.batchSize ?? 0 },
      { requestId: randomUUID() },
      this.o.streamDeadlineMs ? { deadlineMs: this.o.streamDeadlineMs } : {},
    );
    for await (const batch of stream) {
      if (batch.records.length > 0) yield batch.records.map((s) => ourRecordOf(rail, s));
    }
  }

  async find(rail: ReportRail, ids: readonly string[]): Promise<OurRecord[]> {
    if (ids.length === 0) return [];
    const r = await this.client(rail).findSettlements({ rail, ids: [...ids] }, { requestId: randomUUID() });
    return r.records.map((s) => ourRecordOf(rail, s));
  }

  close(): void {
    for (const c of this.clients) c.close();
  }
}
