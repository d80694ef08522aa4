import { randomUUID } from 'node:crypto';
import { AppError, asyncService, createLogger, devMeshTls, startGrpcServer, type AccessPolicy, type AsyncService, type CallContext } from '@wallet/platform';
import { ledgerV1, transferV1 } from '@wallet/proto';

type Impl = AsyncService<transferV1.TransferServiceServer>;
type BatchRpcs = Pick<Impl, 'createBatch' | 'executeBatch' | 'cancelBatch' | 'getBatch' | 'listBatches' | 'listBatchItems' | 'streamBatchItems'>;

export interface TransferBatchesStandIn {
  address: string;
  /** Every CreateBatch request received, in order. */
  created: transferV1.CreateBatchRequest[];
  stop(): Promise<void>;
}

interface Stored { companyId: string; batch: transferV1.Batch; items: transferV1.BatchItem[]; requestHash: string; key?: string }

const railOf = (s: transferV1.SendRequest | undefined) => (s?.bankAccount ? ledgerV1.Rail.ACH : s ? ledgerV1.Rail.BREB : ledgerV1.Rail.UNSPECIFIED);
const destinationOf = (s: transferV1.SendRequest | undefined) => (s?.bankAccount ? `${s.bankAccount.bankName} ****${s.bankAccount.accountNumber.slice(-4)}`
  : s?.brebKey ? `${s.brebKey.type} ${s.brebKey.value}` : s?.targetAnchorHandle ?? '');

/**
 * TEST STAND-IN for the transfer service's batch RPCs (issue 22), while the real ones are being
 * written: a real gRPC server over the mesh's mutual TLS (identity `transfer`, the gateway only)
 * that keeps batches in memory per company and answers as transfer.proto documents them — no
 * validation beyond the gateway's (an item is invalid only when the gateway said so), no money.
 * Only the seven batch RPCs are served. Never used outside tests.
 */
export async function startTransferBatchesStandIn(): Promise<TransferBatchesStandIn> {
  const batches = new Map<string, Stored>();
  const created: transferV1.CreateBatchRequest[] = [];
  const find = (id: string, ctx: CallContext) => {
    const s = batches.get(id);
    // Another company's batch reads as unknown.
    if (!s || s.companyId !== ctx.companyId) throw new AppError('BATCH_NOT_FOUND');
    return s;
  };
  const recount = (s: Stored) => {
    const by = new Map<string, { count: number; amount: bigint }>();
    for (const i of s.items) {
      const e = by.get(i.status) ?? { count: 0, amount: 0n };
      by.set(i.status, { count: e.count + 1, amount: e.amount + i.amount });
    }
    s.batch.byStatus = [...by].map(([status, e]) => ({ status, ...e }));
    s.batch.finishedCount = s.items.filter((i) => ['COMPLETED', 'FAILED', 'EXPIRED', 'REJECTED', 'INVALID', 'NOT_EXECUTED'].includes(i.status)).length;
  };
  const impl: BatchRpcs = {
    async createBatch(req, ctx) {
      created.push(req);
      for (const s of batches.values()) {
        if (s.companyId !== ctx.companyId) continue;
        const byKey = req.idempotencyKey !== undefined && s.key === req.idempotencyKey;
        const byRef = req.reference !== undefined && s.batch.reference === req.reference;
        if (!byKey && !byRef) continue;
        if (s.requestHash !== req.requestHash) throw new AppError(byKey ? 'IDEMPOTENCY_KEY_REUSED' : 'REFERENCE_CONFLICT');
        return { batch: s.batch, results: s.items.map(resultOf), replayed: true, idempotencyKeyReplayed: byKey };
      }
      const items: transferV1.BatchItem[] = req.items.map((it) => ({
        seq: it.seq, line: it.line, status: it.invalidCode ? 'INVALID' : 'VALID', rail: railOf(it.send),
        amount: it.send?.amount ?? 0n, totalFee: 0n, ivaAmount: 0n,
        targetName: it.send?.targetName ?? it.send?.bankAccount?.holderFirstName ?? '', targetDocument: it.send?.targetDocument ?? '',
        reference: it.send?.reference, description: it.send?.description, destination: destinationOf(it.send),
        errorCode: it.invalidCode, message: it.invalidMessage,
      }));
      const valid = items.filter((i) => i.status === 'VALID');
      const totals = [ledgerV1.Rail.BREB, ledgerV1.Rail.ACH].map((rail) => {
        const of = valid.filter((i) => i.rail === rail);
        const amount = of.reduce((a, i) => a + i.amount, 0n);
        return { rail, count: of.length, amount, totalFee: 0n, ivaAmount: 0n, total: amount };
      }).filter((t) => t.count > 0);
      const now = new Date();
      const batch: transferV1.Batch = {
        id: randomUUID(), state: req.mode === 'ALL' && valid.length < items.length ? 'REJECTED' : 'VALIDATED',
        reference: req.reference, description: req.description, mode: req.mode, source: req.source,
        itemCount: items.length, validCount: valid.length, invalidCount: items.length - valid.length,
        totals, byStatus: [], finishedCount: 0, createdAt: now, expiresAt: new Date(now.getTime() + 86_400_000), threshold: 0,
      };
      const s: Stored = { companyId: ctx.companyId!, batch, items, requestHash: req.requestHash, ...(req.idempotencyKey ? { key: req.idempotencyKey } : {}) };
      recount(s);
      batches.set(batch.id, s);
      return { batch, results: items.map(resultOf), replayed: false, idempotencyKeyReplayed: false };
    },
    async executeBatch(req, ctx) {
      const s = find(req.batchId, ctx);
      if (['REJECTED', 'EXPIRED', 'CANCELLED'].includes(s.batch.state)) throw new AppError('INVALID_STATE_TRANSITION');
      if (s.batch.state === 'VALIDATED') {
        s.batch.state = 'EXECUTING';
        s.batch.executedAt = new Date();
        for (const i of s.items) if (i.status === 'VALID') Object.assign(i, { status: 'PENDING', transferId: randomUUID() });
        recount(s);
      }
      return s.batch;
    },
    async cancelBatch(req, ctx) {
      const s = find(req.batchId, ctx);
      if (s.batch.state !== 'VALIDATED') throw new AppError('INVALID_STATE_TRANSITION');
      s.batch.state = 'CANCELLED';
      s.batch.cancelledAt = new Date();
      for (const i of s.items) if (i.status === 'VALID') i.status = 'NOT_EXECUTED';
      recount(s);
      return s.batch;
    },
    async getBatch(req, ctx) {
      return find(req.batchId, ctx).batch;
    },
    async listBatches(req, ctx) {
      const all = [...batches.values()].filter((s) => s.companyId === ctx.companyId && (!req.state || s.batch.state === req.state)).map((s) => s.batch).reverse();
      const from = Number(req.cursor ?? 0);
      const limit = req.limit || 50;
      return { items: all.slice(from, from + limit), ...(from + limit < all.length ? { nextCursor: String(from + limit) } : {}) };
    },
    async listBatchItems(req, ctx) {
      const all = find(req.batchId, ctx).items.filter((i) => !req.status || i.status === req.status);
      const from = Number(req.cursor ?? 0);
      const limit = req.limit || 100;
      return { items: all.slice(from, from + limit), ...(from + limit < all.length ? { nextCursor: String(from + limit) } : {}) };
    },
    async *streamBatchItems(req, ctx) {
      const s = find(req.batchId, ctx);
      for (let i = 0; i < s.items.length; i += 1000) yield { items: s.items.slice(i, i + 1000) };
    },
  };
  const gateway = ['gateway'] as const;
  const policy: AccessPolicy<BatchRpcs> = {
    createBatch: gateway, executeBatch: gateway, cancelBatch: gateway, getBatch: gateway, listBatches: gateway, listBatchItems: gateway, streamBatchItems: gateway,
  };
  const tls = devMeshTls('transfer');
  const server = await startGrpcServer('127.0.0.1', 0, [{
    definition: transferV1.TransferServiceService,
    implementation: asyncService(impl as Impl, createLogger('transfer-batches-stand-in', 'silent'), policy as AccessPolicy<Impl>, tls),
  }], tls);
  return { address: `127.0.0.1:${server.port}`, created, stop: () => server.stop(1000) };
}

function resultOf(i: transferV1.BatchItem): transferV1.BatchItemResult {
  return { seq: i.seq, line: i.line, valid: i.status !== 'INVALID', errorCode: i.errorCode, message: i.message };
}
