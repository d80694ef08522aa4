import { randomUUID } from 'node:crypto';
import { AppError, asyncService, createLogger, devMeshTls, startGrpcServer, type AccessPolicy, type AsyncService, type CallContext } from '@wallet/platform';
import { ledgerV1, transferV1 } from '@wallet/proto';

type Impl = AsyncService<transferV1.TransferServiceServer>;
type BatchRpcs = Pick<
  Impl,
  | 'createBatch'
  | 'executeBatch'
  | 'cancelBatch'
  | 'getBatch'
  | 'listBatches'
  | 'listBatchItems'
  | 'streamBatchItems'
  | 'signBatchApproval'
  | 'rejectBatchApproval'
>;

export interface TransferBatchesStandIn {
  address: string;
  /** Every CreateBatch request received, in order. */
  created: transferV1.CreateBatchRequest[];
  /** Every SignBatchApproval / RejectBatchApproval received, with the dashboard user of its caller context. */
  decisions: Array<{
    rpc: 'sign' | 'reject';
    request: transferV1.SignBatchApprovalRequest | transferV1.RejectBatchApprovalRequest;
    userId: string | undefined;
    role: string | undefined;
  }>;
  /** Lets a test move a batch's approval deadline (e.g. into the past). */
  batch(id: string): transferV1.Batch | undefined;
  stop(): Promise<void>;
}

interface Stored {
  companyId: string;
  batch: transferV1.Batch;
  items: transferV1.BatchItem[];
  requestHash: string;
  key?: string;
}

const railOf = (s: transferV1.SendRequest | undefined) => (s?.bankAccount ? ledgerV1.Rail.ACH : s ? ledgerV1.Rail.BREB : ledgerV1.Rail.UNSPECIFIED);
const destinationOf = (s: transferV1.SendRequest | undefined) =>
  s?.bankAccount
    ? `${s.bankAccount.bankName} ****${s.bankAccount.accountNumber.slice(-4)}`
    : s?.brebKey
      ? `${s.brebKey.type} ${s.brebKey.value}`
      : (s?.targetAnchorHandle ?? '');

/**
 * TEST STAND-IN for the transfer service's batch RPCs (docs/batches.md), while the real ones are being
 * written: a real gRPC server over the mesh's mutual TLS (identity `transfer`, the gateway only)
 * that keeps batches in memory per company and answers as transfer.proto documents them — no
 * validation beyond the gateway's (an item is invalid only when the gateway said so), no money.
 * Multi-signature (the company's threshold in the caller's signed profile ≥ 2): execute holds
 * nothing but leaves the batch AWAITING_APPROVAL with one approval, which the dashboard user of the
 * caller context signs or rejects (the checks and codes of transfer.proto, no TOTP: the gateway's).
 * Only the batch RPCs are served. Never used outside tests.
 */
export async function startTransferBatchesStandIn(): Promise<TransferBatchesStandIn> {
  const batches = new Map<string, Stored>();
  const created: transferV1.CreateBatchRequest[] = [];
  const decisions: TransferBatchesStandIn['decisions'] = [];
  const signer = (ctx: CallContext) => (ctx.principal?.kind === 'user' ? ctx.principal : undefined);
  /** The batch's pending approval, or the error transfer.proto documents. */
  const pendingApproval = (s: Stored) => {
    const a = s.batch.approval;
    if (!a || a.status !== 'PENDING') throw new AppError('APPROVAL_NOT_PENDING');
    if (a.expiresAt!.getTime() <= Date.now()) throw new AppError('APPROVAL_EXPIRED');
    return a;
  };
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
        seq: it.seq,
        line: it.line,
        status: it.invalidCode ? 'INVALID' : 'VALID',
        rail: railOf(it.send),
        amount: it.send?.amount ?? 0n,
        totalFee: 0n,
        ivaAmount: 0n,
        targetName: it.send?.targetName ?? it.send?.bankAccount?.holderFirstName ?? '',
        targetDocument: it.send?.targetDocument ?? '',
        reference: it.send?.reference,
        description: it.send?.description,
        destination: destinationOf(it.send),
        errorCode: it.invalidCode,
        message: it.invalidMessage,
      }));
      const valid = items.filter((i) => i.status === 'VALID');
      const totals = [ledgerV1.Rail.BREB, ledgerV1.Rail.ACH]
        .map((rail) => {
          const of = valid.filter((i) => i.rail === rail);
          const amount = of.reduce((a, i) => a + i.amount, 0n);
          return { rail, count: of.length, amount, totalFee: 0n, ivaAmount: 0n, total: amount };
        })
        .filter((t) => t.count > 0);
      const now = new Date();
      const batch: transferV1.Batch = {
        id: randomUUID(),
        state: req.mode === 'ALL' && valid.length < items.length ? 'REJECTED' : 'VALIDATED',
        reference: req.reference,
        description: req.description,
        mode: req.mode,
        source: req.source,
        itemCount: items.length,
        validCount: valid.length,
        invalidCount: items.length - valid.length,
        totals,
        byStatus: [],
        finishedCount: 0,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 86_400_000),
        threshold: 0,
      };
      const s: Stored = { companyId: ctx.companyId!, batch, items, requestHash: req.requestHash, ...(req.idempotencyKey ? { key: req.idempotencyKey } : {}) };
      recount(s);
      batches.set(batch.id, s);
      return { batch, results: items.map(resultOf), replayed: false, idempotencyKeyReplayed: false };
    },
    async executeBatch(req, ctx) {
      const s = find(req.batchId, ctx);
      if (['REJECTED', 'EXPIRED', 'CANCELLED'].includes(s.batch.state)) throw new AppError('INVALID_STATE_TRANSITION');
      const threshold = ctx.principal?.kind === 'apikey' ? ctx.principal.profile.multiSigThreshold : 0;
      if (s.batch.state === 'VALIDATED' && threshold >= 2) {
        const now = new Date();
        s.batch.state = 'AWAITING_APPROVAL';
        s.batch.executedAt = now;
        s.batch.threshold = threshold;
        s.batch.approvalId = `appr_${randomUUID().replaceAll('-', '')}`;
        s.batch.approval = {
          approvalId: s.batch.approvalId,
          threshold,
          status: 'PENDING',
          signatures: [],
          createdAt: now,
          expiresAt: new Date(now.getTime() + 86_400_000),
        };
        for (const i of s.items) if (i.status === 'VALID') Object.assign(i, { status: 'AWAITING_APPROVAL', transferId: randomUUID() });
        recount(s);
      } else if (s.batch.state === 'VALIDATED') {
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
      const all = [...batches.values()]
        .filter((s) => s.companyId === ctx.companyId && (!req.state || s.batch.state === req.state))
        .map((s) => s.batch)
        .reverse();
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
    async signBatchApproval(req, ctx) {
      decisions.push({ rpc: 'sign', request: req, userId: signer(ctx)?.userId, role: signer(ctx)?.role });
      const s = find(req.batchId, ctx);
      const u = signer(ctx);
      if (!u || (u.role !== 'ADMIN' && u.role !== 'OPERATOR')) throw new AppError('INSUFFICIENT_ROLE');
      const a = pendingApproval(s);
      if (a.signatures.some((x) => x.userId === u.userId)) throw new AppError('ALREADY_SIGNED');
      if (req.precheck) return s.batch;
      a.signatures.push({ userId: u.userId, email: u.email, role: u.role, signedAt: new Date() });
      if (a.signatures.length >= a.threshold) {
        Object.assign(a, { status: 'APPROVED', decidedAt: new Date() });
        s.batch.state = 'EXECUTING';
        for (const i of s.items) if (i.status === 'AWAITING_APPROVAL') i.status = 'PENDING';
        recount(s);
      }
      return s.batch;
    },
    async rejectBatchApproval(req, ctx) {
      decisions.push({ rpc: 'reject', request: req, userId: signer(ctx)?.userId, role: signer(ctx)?.role });
      const s = find(req.batchId, ctx);
      const u = signer(ctx);
      if (!u || (u.role !== 'ADMIN' && u.role !== 'OPERATOR')) throw new AppError('INSUFFICIENT_ROLE');
      const a = pendingApproval(s);
      Object.assign(a, { status: 'REJECTED', decidedAt: new Date(), rejectReason: req.reason, rejectedBy: u.email });
      s.batch.state = 'FAILED';
      s.batch.completedAt = new Date();
      s.batch.errorMessage = req.reason ? `Rechazado: ${req.reason}` : 'Rechazado';
      for (const i of s.items)
        if (i.status === 'AWAITING_APPROVAL') Object.assign(i, { status: 'FAILED', errorCode: 'APPROVAL_REJECTED', message: req.reason });
      recount(s);
      return s.batch;
    },
    async *streamBatchItems(req, ctx) {
      const s = find(req.batchId, ctx);
      for (let i = 0; i < s.items.length; i += 1000) yield { items: s.items.slice(i, i + 1000) };
    },
  };
  const gateway = ['gateway'] as const;
  const policy: AccessPolicy<BatchRpcs> = {
    createBatch: gateway,
    executeBatch: gateway,
    cancelBatch: gateway,
    getBatch: gateway,
    listBatches: gateway,
    listBatchItems: gateway,
    streamBatchItems: gateway,
    signBatchApproval: gateway,
    rejectBatchApproval: gateway,
  };
  const tls = devMeshTls('transfer');
  const server = await startGrpcServer(
    '127.0.0.1',
    0,
    [
      {
        definition: transferV1.TransferServiceService,
        implementation: asyncService(impl as Impl, createLogger('transfer-batches-stand-in', 'silent'), policy as AccessPolicy<Impl>, tls),
      },
    ],
    tls,
  );
  return { address: `127.0.0.1:${server.port}`, created, decisions, batch: (id) => batches.get(id)?.batch, stop: () => server.stop(1000) };
}

function resultOf(i: transferV1.BatchItem): transferV1.BatchItemResult {
  return { seq: i.seq, line: i.line, valid: i.status !== 'INVALID', errorCode: i.errorCode, message: i.message };
}
