import { randomUUID } from 'node:crypto';
import { transferV1 } from '@wallet/proto';
import {
  MovementStatus,
  Rail,
  achSend,
  brebSend,
  ctxOf,
  expectEvents,
  expectLedgerOk,
  failure,
  newCompany,
  startHarness,
  userCtxOf,
  wallet,
  type CompanySetup,
  type Harness,
} from './harness.js';

/**
 * Multi-signature bulk payouts (docs/batches.md): ONE approval for the whole batch, through the real gRPC
 * service, the ledger's ReserveBatch and SetMovementStatuses, and the sandbox rails. Execute reserves
 * every item's funds and leaves them AWAITING_APPROVAL; the signature that reaches the threshold
 * dispatches them all; a rejection or the deadline releases them all.
 */
const signer = (role = 'OPERATOR', userId = randomUUID()) => ({ userId, email: `${userId.slice(0, 8)}@empresa.co`, role });

function batchApi(h: Harness) {
  const item = (seq: number, send: transferV1.SendRequest): transferV1.BatchItemInput =>
    transferV1.BatchItemInput.fromPartial({ seq, line: 0, send: { ...send, requestHash: '' } });
  const get = (co: CompanySetup, id: string) => h.client.getBatch({ batchId: id }, ctxOf(co.id));
  return {
    get,
    sign: (co: CompanySetup, batchId: string, s = signer()) => h.client.signBatchApproval({ batchId, precheck: false }, userCtxOf(co.id, s)),
    reject: (co: CompanySetup, batchId: string, s = signer(), reason?: string) =>
      h.client.rejectBatchApproval({ batchId, ...(reason ? { reason } : {}) }, userCtxOf(co.id, s)),
    items: async (co: CompanySetup, id: string) => (await h.client.listBatchItems({ batchId: id, limit: 1000 }, ctxOf(co.id))).items,
    /** A validated, executed batch of a multi-signature company: 2 Bre-B items and 1 ACH item. */
    async awaiting(co: CompanySetup, amounts: [bigint, bigint, bigint] = [10_000n, 20_000n, 30_000n]) {
      const r = await h.client.createBatch(
        transferV1.CreateBatchRequest.fromPartial({
          mode: 'ALL',
          source: 'JSON',
          requestHash: randomUUID(),
          items: [
            item(1, await brebSend(h, co, '3001112233', amounts[0])),
            item(2, await brebSend(h, co, '3002223344', amounts[1])),
            item(3, achSend(co, amounts[2])),
          ],
        }),
        ctxOf(co.id),
      );
      expect(r.batch!.state).toBe('VALIDATED');
      const b = await h.client.executeBatch({ batchId: r.batch!.id }, ctxOf(co.id));
      expect(b.state).toBe('AWAITING_APPROVAL');
      return b;
    },
    async waitState(co: CompanySetup, id: string, states: string[], timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const b = await get(co, id);
        if (states.includes(b.state)) return b;
        if (Date.now() > deadline) throw new Error(`batch ${id} is still ${b.state}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    /** Cross-service: every item's transfer state agrees with its hold and its ledger movement. */
    async agrees(batchId: string) {
      const rows = await h.ledger.db.query<{ state: string; hold_status: string | null; m_status: string | null }>(
        `select t.state, h.status as hold_status, m.status as m_status from transfer.transfers t
           left join ledger.holds h on h.id = t.hold_id left join ledger.movements m on m.id = t.id where t.batch_id = ?::uuid`,
        [batchId],
      );
      for (const r of rows) {
        if (['AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED', 'RELEASING', 'EXPIRING', 'COMPLETING'].includes(r.state)) expect(r.hold_status).toBe('OPEN');
        if (r.state === 'AWAITING_APPROVAL') expect(r.m_status).toBe('AWAITING_APPROVAL');
        if (r.state === 'COMPLETED') expect([r.hold_status, r.m_status]).toEqual(['COMMITTED', 'COMPLETED']);
        if (r.state === 'FAILED') expect([r.hold_status, r.m_status]).toEqual(['RELEASED', 'FAILED']);
        if (r.state === 'EXPIRED') expect([r.hold_status, r.m_status]).toEqual(['RELEASED', 'EXPIRED']);
      }
      return rows.map((r) => r.state);
    },
  };
}

describe('multi-signature bulk payouts', () => {
  let h: Harness;
  let api: ReturnType<typeof batchApi>;
  beforeAll(async () => {
    h = await startHarness({ transferEnv: { APPROVAL_TTL_SECONDS: '3600' } });
    api = batchApi(h);
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  it('execute reserves every item and waits for ONE approval; the signature that reaches the threshold dispatches them all', async () => {
    const co = await newCompany(h, { breb: 1_000_000n, ach: 1_000_000n, multiSig: 2 });
    const b = await api.awaiting(co);
    expect(b.approval).toMatchObject({ threshold: 2, status: 'PENDING', signatures: [] });
    expect(b.threshold).toBe(2);
    expect(b.approvalId).toBe(b.approval!.approvalId);
    expect(b.byStatus).toEqual([{ status: 'AWAITING_APPROVAL', count: 3, amount: 60_000n }]);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 970_000n, pending: 30_000n });
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 970_000n, pending: 30_000n });
    expect(await api.agrees(b.id)).toEqual(['AWAITING_APPROVAL', 'AWAITING_APPROVAL', 'AWAITING_APPROVAL']);
    // the single-send approvals list does not mix batches in
    expect((await h.client.listApprovals({ limit: 0 }, ctxOf(co.id))).items).toEqual([]);
    // executing again answers it as it is
    expect((await h.client.executeBatch({ batchId: b.id }, ctxOf(co.id))).state).toBe('AWAITING_APPROVAL');

    // who may sign
    expect((await failure(api.sign(co, b.id, signer('VIEWER')))).code).toBe('INSUFFICIENT_ROLE');
    expect((await failure(h.client.signBatchApproval({ batchId: b.id, precheck: false }, ctxOf(co.id)))).code).toBe('INSUFFICIENT_ROLE');
    const other = await newCompany(h, { breb: 10_000n, multiSig: 2 });
    expect((await failure(api.sign(other, b.id))).code).toBe('BATCH_NOT_FOUND');
    expect((await failure(api.sign(co, 'not-a-batch'))).code).toBe('BATCH_NOT_FOUND');

    const first = signer('ADMIN');
    expect((await h.client.signBatchApproval({ batchId: b.id, precheck: true }, userCtxOf(co.id, first))).approval!.signatures).toEqual([]);
    const one = await api.sign(co, b.id, first);
    expect(one.state).toBe('AWAITING_APPROVAL');
    expect(one.approval!.signatures.map((s) => s.email)).toEqual([first.email]);
    expect((await failure(api.sign(co, b.id, first))).code).toBe('ALREADY_SIGNED');
    expect((await failure(h.client.signBatchApproval({ batchId: b.id, precheck: true }, userCtxOf(co.id, first)))).code).toBe('ALREADY_SIGNED');

    const second = signer('OPERATOR');
    const approved = await api.sign(co, b.id, second);
    expect(approved.approval).toMatchObject({ status: 'APPROVED' });
    expect(['EXECUTING', 'COMPLETED']).toContain(approved.state);
    const done = await api.waitState(co, b.id, ['COMPLETED', 'PARTIALLY_FAILED', 'FAILED']);
    expect(done.state).toBe('COMPLETED');
    expect(await api.agrees(b.id)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 970_000n, pending: 0n });
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 970_000n, pending: 0n });
    for (const it of await api.items(co, b.id)) {
      await expectEvents(h, it.transferId!, ['transfer.awaiting_approval', 'transfer.approved', 'transfer.dispatched', 'transfer.completed']);
    }
    expect((await failure(api.sign(co, b.id))).code).toBe('APPROVAL_NOT_PENDING');
    expect((await failure(api.reject(co, b.id))).code).toBe('APPROVAL_NOT_PENDING');
  });

  it('three signers at once on a threshold of 2: the quorum is reached once and every item is dispatched once', async () => {
    const co = await newCompany(h, { breb: 1_000_000n, ach: 1_000_000n, multiSig: 2 });
    const b = await api.awaiting(co);
    const outcomes = await Promise.allSettled([api.sign(co, b.id), api.sign(co, b.id), api.sign(co, b.id)]);
    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.code);
    expect(refused).toEqual(['APPROVAL_NOT_PENDING']);
    await api.waitState(co, b.id, ['COMPLETED']);
    const sigs = await h.ledger.db.query<{ n: number }>('select count(*)::int as n from transfer.approval_signatures where approval_id = ?', [b.approvalId]);
    expect(sigs[0]!.n).toBe(2);
    const attempts = await h.ledger.db.query<{ dispatch_attempts: number }>('select dispatch_attempts from transfer.transfers where batch_id = ?::uuid', [
      b.id,
    ]);
    expect(attempts.map((r) => r.dispatch_attempts)).toEqual([1, 1, 1]);
  });

  it('a rejection fails every item with the reason and releases every hold; the batch ends FAILED', async () => {
    const co = await newCompany(h, { breb: 1_000_000n, ach: 1_000_000n, multiSig: 3 });
    const b = await api.awaiting(co);
    await api.sign(co, b.id);
    expect((await failure(api.reject(co, b.id, signer('VIEWER')))).code).toBe('INSUFFICIENT_ROLE');
    const who = signer('ADMIN');
    const r = await api.reject(co, b.id, who, 'Nómina duplicada');
    expect(r.approval).toMatchObject({ status: 'REJECTED', rejectReason: 'Nómina duplicada', rejectedBy: who.email });
    const done = await api.waitState(co, b.id, ['FAILED', 'EXPIRED', 'COMPLETED']);
    expect(done.state).toBe('FAILED');
    expect(done.errorMessage).toMatch(/rechazado.*Nómina duplicada/);
    expect(await api.agrees(b.id)).toEqual(['FAILED', 'FAILED', 'FAILED']);
    expect((await api.items(co, b.id)).map((i) => i.status)).toEqual(['FAILED', 'FAILED', 'FAILED']);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n, pending: 0n });
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 1_000_000n, pending: 0n });
    for (const it of await api.items(co, b.id)) {
      expect((await h.ledgerClient.getMovement({ id: it.transferId! }, ctxOf(co.id))).status).toBe(MovementStatus.FAILED);
      await expectEvents(h, it.transferId!, ['transfer.awaiting_approval', 'transfer.rejected']);
    }
    expect((await failure(api.sign(co, b.id))).code).toBe('APPROVAL_NOT_PENDING');
  });

  it('issue 35 #12: the answer to a rejection shows the batch after it (FAILED, its funds released), not AWAITING_APPROVAL', async () => {
    const co = await newCompany(h, { breb: 1_000_000n, ach: 1_000_000n, multiSig: 2 });
    const b = await api.awaiting(co);
    const r = await api.reject(co, b.id, signer('ADMIN'), 'No corresponde');
    expect(r.approval).toMatchObject({ status: 'REJECTED' });
    expect(r.state).toBe('FAILED');
    expect(r.errorMessage).toMatch(/rechazado.*No corresponde/);
    expect(r.byStatus.map((s) => s.status)).toEqual(['FAILED']);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n, pending: 0n });
  });

  it('the last signature and a rejection at once: exactly one decides, and the items agree with it', async () => {
    for (let round = 0; round < 3; round++) {
      const co = await newCompany(h, { breb: 1_000_000n, ach: 1_000_000n, multiSig: 2 });
      const b = await api.awaiting(co);
      await api.sign(co, b.id);
      const [s, r] = await Promise.allSettled([api.sign(co, b.id), api.reject(co, b.id, signer(), 'carrera')]);
      expect([s.status, r.status].sort()).toEqual(['fulfilled', 'rejected']);
      const done = await api.waitState(co, b.id, ['COMPLETED', 'FAILED']);
      expect(done.state).toBe(s.status === 'fulfilled' ? 'COMPLETED' : 'FAILED');
      const states = await api.agrees(b.id);
      expect(new Set(states)).toEqual(new Set([done.state]));
    }
  });

  it('a batch that is not awaiting approval cannot be signed: APPROVAL_NOT_PENDING', async () => {
    const co = await newCompany(h, { breb: 1_000_000n, multiSig: 2 });
    const r = await h.client.createBatch(
      transferV1.CreateBatchRequest.fromPartial({
        mode: 'ALL',
        source: 'JSON',
        requestHash: randomUUID(),
        items: [transferV1.BatchItemInput.fromPartial({ seq: 1, line: 0, send: { ...(await brebSend(h, co, '3001112233', 1_000n)), requestHash: '' } })],
      }),
      ctxOf(co.id),
    );
    expect((await failure(api.sign(co, r.batch!.id))).code).toBe('APPROVAL_NOT_PENDING');
    expect((await failure(api.reject(co, r.batch!.id))).code).toBe('APPROVAL_NOT_PENDING');
  });
});

describe('multi-signature bulk payout expiry', () => {
  let h: Harness;
  let api: ReturnType<typeof batchApi>;
  beforeAll(async () => {
    h = await startHarness({ transferEnv: { APPROVAL_TTL_SECONDS: '1' } });
    api = batchApi(h);
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  it('without quorum by the deadline: every item EXPIRED with its funds released, the batch EXPIRED; a later signature is APPROVAL_EXPIRED', async () => {
    const co = await newCompany(h, { breb: 100_000n, ach: 100_000n, multiSig: 2 });
    const b = await api.awaiting(co);
    await api.sign(co, b.id);
    const done = await api.waitState(co, b.id, ['EXPIRED', 'FAILED', 'COMPLETED'], 15_000);
    expect(done.state).toBe('EXPIRED');
    expect(done.approval!.status).toBe('EXPIRED');
    expect(done.errorMessage).toMatch(/expiró/);
    expect(await api.agrees(b.id)).toEqual(['EXPIRED', 'EXPIRED', 'EXPIRED']);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 100_000n, pending: 0n });
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 100_000n, pending: 0n });
    expect((await failure(api.sign(co, b.id))).code).toBe('APPROVAL_EXPIRED');
  });
});
