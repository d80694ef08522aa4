import { randomBytes, randomUUID } from 'node:crypto';
import { createAsyncClient, devMeshTls, type MeshIdentity } from '@wallet/platform';
import { legPageSql, refundPageSql } from '../../src/persistence/settlement.store.js';
import { eventually, indexOnlyPlan } from '@wallet/platform/testing';
import { depositV1, type settlementsV1 } from '@wallet/proto';
import { failure, payer, startHarness, type Harness } from './harness.js';

/**
 * The reconciliation's read path for rail pse (docs/reconciliation.md, `OurRecords`): one record
 * per leg, the payment (ASSIGNED or FAILED, IN) and the reversal (REVERSED, OUT), each on its own
 * Bogotá day, in key order (the deposit id `collate "C"`, then the payment before the reversal),
 * in keyset batches; FindSettlements returns any day's legs and PENDING links. Only the
 * `reconciliation` identity may call them, through the real gRPC server with mutual TLS.
 */

const D = '2025-03-14';
type Client = ReturnType<typeof createAsyncClient<depositV1.DepositServiceServer>>;
type Leg = settlementsV1.Settlement;
const key = (l: Pick<Leg, 'ourId' | 'direction'>) => `${l.ourId}/${l.direction === 'IN' ? 0 : 1}`;

describe('pse-deposit ListSettlements / FindSettlements (reconciliation read path)', () => {
  let h: Harness;
  const clients: Client[] = [];
  const as = (id: MeshIdentity): Client => {
    const c = createAsyncClient<depositV1.DepositServiceServer>(depositV1.DepositServiceClient, h.deposit.address, {
      deadlineMs: 15_000,
      mesh: { tls: devMeshTls(id), server: 'pse-deposit' },
    });
    clients.push(c);
    return c;
  };
  let recon: Client;
  const ctx = () => ({ requestId: randomUUID() });
  const company = `co_settle_${process.pid}`;
  const newId = () => `dep_${[...randomBytes(24)].map((b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('')}`;

  /** A PSE deposit row as the saga leaves it (the read path only reads these columns). */
  async function row(o: { status: string; amount?: bigint; paid?: string; failed?: string; reversed?: string }): Promise<string> {
    const id = newId();
    await h.deposit.db.query(
      `insert into pse_deposit.deposits (id, company_id, source, status, amount, net_amount, movement_id, provider_transfer_id,
         provider_confirmed_at, failed_at, reversed_at)
       values (?, ?, 'PSE', ?, ?, ?, ?::uuid, ?, ?::timestamptz, ?::timestamptz, ?::timestamptz)`,
      [
        id,
        company,
        o.status,
        String(o.amount ?? 10_000n),
        String(o.amount ?? 10_000n),
        randomUUID(),
        o.status === 'PENDING_CONFIRM' ? null : `pse_${id.slice(4, 12)}`,
        o.paid ?? null,
        o.failed ?? null,
        o.reversed ?? null,
      ],
    );
    return id;
  }

  /** A return (refund) of a deposit as pse-deposit's refund saga leaves it in deposit_returns (migration 0011). */
  async function refund(depositId: string, o: { status: string; amount: bigint; returned?: string; traceparent?: string }): Promise<string> {
    const id = newId().replace(/^dep_/, 'ret_');
    await h.deposit.db.query(
      `insert into pse_deposit.deposit_returns (id, deposit_id, company_id, provider_transfer_id, inflow_key, amount, reason, status, movement_id, requested_by, returned_at, traceparent)
       values (?, ?, ?, (select provider_transfer_id from pse_deposit.deposits where id = ?), ?, ?, 'CUSTOMER_REQUEST', ?, ?::uuid, 'key_test', ?::timestamptz, ?)`,
      [id, depositId, company, depositId, `deposit:${depositId}:paid`, String(o.amount), o.status, randomUUID(), o.returned ?? null, o.traceparent ?? null],
    );
    return id;
  }

  async function list(date: string, batchSize = 0): Promise<Leg[][]> {
    const batches: Leg[][] = [];
    for await (const b of recon.listSettlements({ rail: 'pse', date, batchSize }, ctx())) batches.push(b.records);
    return batches;
  }

  const ids: Record<string, string> = {};
  const dayLegs: string[] = [];

  beforeAll(async () => {
    h = await startHarness();
    recon = as('reconciliation');
    // Bogotá day edges: 00:00:00.000 and 23:59:59.999 (UTC-5) are in, a millisecond either side is not.
    ids.paidFirst = await row({ status: 'ASSIGNED', amount: 150_000n, paid: `${D}T05:00:00.000Z` });
    ids.failedLast = await row({ status: 'FAILED', amount: 250_000n, failed: '2025-03-15T04:59:59.999Z' });
    ids.paidBefore = await row({ status: 'ASSIGNED', paid: `${D}T04:59:59.999Z` });
    ids.paidAfter = await row({ status: 'ASSIGNED', paid: '2025-03-15T05:00:00.000Z' });
    // Paid and reversed on D: two legs, payment before reversal.
    ids.both = await row({ status: 'REVERSED', amount: 70_000n, paid: `${D}T14:00:00.000Z`, reversed: `${D}T20:00:00.000Z` });
    // Paid the day before, reversed on D: only the reversal leg is D's.
    ids.reversedOnly = await row({ status: 'REVERSED', amount: 80_000n, paid: '2025-03-13T14:00:00.000Z', reversed: `${D}T15:00:00.000Z` });
    // Paid on D, reversal in flight on our side (REVERSING: the provider's reversal applied the next day).
    ids.reversing = await row({ status: 'REVERSING', paid: `${D}T16:00:00.000Z`, reversed: '2025-03-15T16:00:00.000Z' });
    // Only booked legs are settled: a credit owed (CREDITING: parked when the ledger refuses it) is not a settled payment.
    ids.crediting = await row({ status: 'CREDITING', paid: `${D}T17:00:00.000Z` });
    ids.pending = await row({ status: 'PENDING_CONFIRM' });
    ids.expired = await row({ status: 'EXPIRED' });
    dayLegs.push(`${ids.paidFirst}/0`, `${ids.failedLast}/0`, `${ids.both}/0`, `${ids.both}/1`, `${ids.reversedOnly}/1`, `${ids.reversing}/0`);
    for (let i = 0; i < 9; i++) {
      const hour = String(6 + i).padStart(2, '0');
      const id = await row({
        status: i % 3 === 0 ? 'REVERSED' : 'ASSIGNED',
        paid: `${D}T${hour}:00:00.000Z`,
        ...(i % 3 === 0 ? { reversed: `${D}T${hour}:30:00.000Z` } : {}),
      });
      dayLegs.push(`${id}/0`, ...(i % 3 === 0 ? [`${id}/1`] : []));
    }
    dayLegs.sort(); // code-unit order: the id, then 0 (payment) before 1 (reversal): the engine's key order
    // A BREB deposit listed here (the inbound projection) is never a pse record.
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await h?.stop();
  });

  it("streams only the day's legs, in key order (payment before reversal), across several batches", async () => {
    const batches = await list(D, 4);
    expect(dayLegs).toHaveLength(18);
    expect(batches.map((b) => b.length)).toEqual([4, 4, 4, 4, 2]);
    expect(batches.flat().map(key)).toEqual(dayLegs);
    expect((await list(D)).map((b) => b.length)).toEqual([18]);
    // Batches that split a deposit's two legs still keep the order.
    expect((await list(D, 3)).flat().map(key)).toEqual(dayLegs);
  });

  it("each leg's page is a range scan of its index from the last id: no sequential scan, no sort", async () => {
    for (const [leg, index] of [
      ['payment', 'deposits_payment_leg_idx'],
      ['reversal', 'deposits_reversal_leg_idx'],
    ] as const) {
      for (const [sql, params] of [
        [legPageSql(leg, false), [D, 1000]],
        [legPageSql(leg, true), [D, ids.both, 1000]],
      ] as const) {
        const plan = await indexOnlyPlan(h.deposit.db, sql, [...params]);
        expect(plan).toContain(`Index Scan using ${index}`);
        expect(plan).not.toMatch(/Sort|Seq Scan/);
      }
    }
  });

  it("each leg carries what the engine's OurRecord needs", async () => {
    const got = new Map((await list(D)).flat().map((l) => [key(l), l]));
    expect(got.get(`${ids.paidFirst}/0`)).toEqual({
      ourId: ids.paidFirst,
      providerId: `pse_${ids.paidFirst!.slice(4, 12)}`,
      status: 'ASSIGNED',
      direction: 'IN',
      amountCents: 150_000n,
      settledAt: `${D}T05:00:00.000Z`,
      valueDate: D,
      companyId: company,
    });
    expect(got.get(`${ids.failedLast}/0`)).toMatchObject({ status: 'FAILED', direction: 'IN', settledAt: '2025-03-15T04:59:59.999Z', valueDate: D });
    expect(got.get(`${ids.both}/0`)).toMatchObject({ status: 'ASSIGNED', direction: 'IN', amountCents: 70_000n, settledAt: `${D}T14:00:00.000Z` });
    expect(got.get(`${ids.both}/1`)).toMatchObject({
      status: 'REVERSED',
      direction: 'OUT',
      amountCents: 70_000n,
      settledAt: `${D}T20:00:00.000Z`,
      valueDate: D,
    });
  });

  it('other days', async () => {
    const before = (await list('2025-03-13')).flat().map(key).sort();
    expect(before).toEqual([`${ids.paidBefore}/0`, `${ids.reversedOnly}/0`].sort());
    const after = (await list('2025-03-15')).flat().map(key).sort();
    // The reversal still owed on our side (REVERSING) is not settled either.
    expect(after).toEqual([`${ids.paidAfter}/0`]);
    expect(await list('2025-03-16')).toEqual([]);
  });

  it('issue 35: a leg the ledger has not booked (CREDITING, REVERSING) is never settled; FindSettlements answers it PENDING with step_owed', async () => {
    const found = (await recon.findSettlements({ rail: 'pse', ids: [ids.crediting!, ids.reversing!] }, ctx())).records;
    expect(found.filter((l) => l.ourId === ids.crediting)).toEqual([expect.objectContaining({ status: 'PENDING', direction: 'IN', stepOwed: true })]);
    expect(found.find((l) => l.ourId === ids.crediting)!.settledAt).toBeUndefined();
    expect(found.filter((l) => l.ourId === ids.reversing).map((l) => [l.status, l.direction, l.stepOwed ?? false])).toEqual([
      ['ASSIGNED', 'IN', false],
      ['PENDING', 'OUT', true],
    ]);
    const day = (await list(D)).flat().map(key);
    expect(day).not.toContain(`${ids.crediting}/0`);
  });

  it('through the real flow: a payment then a reversal, a failure and a pending link; FindSettlements finds them whatever the day', async () => {
    const co = await h.newCompany();
    const gw = h.client;
    const paid = await gw.createPseDeposit(payer(), h.ctx(co));
    const failed = await gw.createPseDeposit(payer({ amountCents: 55_000n }), h.ctx(co));
    const pending = await gw.createPseDeposit(payer({ amountCents: 66_000n }), h.ctx(co));
    const status = (id: string) => gw.getDeposit({ id }, h.ctx(co)).then((d) => d.status);
    await h.sandboxPost(`/sandbox/pse/${paid.id}/pay`, { outcome: 'APPROVED', payerBank: 'Nequi' });
    await eventually(async () => (await status(paid.id)) === 'ASSIGNED', 10_000);
    await h.sandboxPost(`/sandbox/pse/${paid.id}/reverse`);
    await h.sandboxPost(`/sandbox/pse/${failed.id}/pay`, { outcome: 'REJECTED', payerBank: 'Davivienda' });
    await eventually(async () => (await status(paid.id)) === 'REVERSED' && (await status(failed.id)) === 'FAILED', 10_000);

    const found = (await recon.findSettlements({ rail: 'pse', ids: [failed.id, pending.id, paid.id, ids.expired!, 'not-ours', ids.paidBefore!] }, ctx()))
      .records;
    expect(found.map(key)).toEqual([...[`${paid.id}/0`, `${paid.id}/1`, `${failed.id}/0`, `${pending.id}/0`, `${ids.paidBefore}/0`]].sort());
    const by = new Map(found.map((l) => [key(l), l]));
    const [times] = await h.deposit.db.query<{ paid: Date; failed: Date; reversed: Date }>(
      `select (select provider_confirmed_at from pse_deposit.deposits where id = ?) as paid, (select failed_at from pse_deposit.deposits where id = ?) as failed,
              (select reversed_at from pse_deposit.deposits where id = ?) as reversed`,
      [paid.id, failed.id, paid.id],
    );
    expect(times!.failed).not.toBeNull();
    expect(times!.reversed).not.toBeNull();
    expect(by.get(`${paid.id}/0`)).toMatchObject({
      status: 'ASSIGNED',
      direction: 'IN',
      amountCents: 100_000n,
      settledAt: new Date(times!.paid).toISOString(),
    });
    expect(by.get(`${paid.id}/1`)).toMatchObject({
      status: 'REVERSED',
      direction: 'OUT',
      amountCents: 100_000n,
      settledAt: new Date(times!.reversed).toISOString(),
    });
    expect(by.get(`${failed.id}/0`)).toMatchObject({
      status: 'FAILED',
      direction: 'IN',
      amountCents: 55_000n,
      settledAt: new Date(times!.failed).toISOString(),
    });
    expect(by.get(`${pending.id}/0`)).toEqual({ ourId: pending.id, status: 'PENDING', direction: 'IN', amountCents: 66_000n, companyId: co });
    expect(by.get(`${ids.paidBefore}/0`)).toMatchObject({ valueDate: '2025-03-13' });
    // Today's (Bogotá) stream has the real ones.
    const today = new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 10);
    const todays = (await list(today)).flat().map(key);
    expect(todays).toEqual(expect.arrayContaining([`${paid.id}/0`, `${paid.id}/1`, `${failed.id}/0`]));
    expect(todays).not.toContain(`${pending.id}/0`);
  });

  it('refunds: one REFUNDED (OUT) record per RETURNED return on its day, our_id the return id, merged in key order; find answers them by return id (SENDING / RELEASING PENDING with step_owed, RESERVING / FAILED none)', async () => {
    const R = '2025-03-20';
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const dep = await row({ status: 'ASSIGNED', amount: 100_000n, paid: `${R}T14:00:00.000Z` });
    const other = await row({ status: 'ASSIGNED', amount: 50_000n, paid: '2025-03-19T14:00:00.000Z' });
    const r1 = await refund(dep, { status: 'RETURNED', amount: 30_000n, returned: `${R}T05:00:00.000Z`, traceparent: tp });
    const r2 = await refund(dep, { status: 'RETURNED', amount: 20_000n, returned: '2025-03-21T04:59:59.999Z' });
    const r3 = await refund(other, { status: 'RETURNED', amount: 50_000n, returned: `${R}T18:00:00.000Z` });
    const nextDay = await refund(dep, { status: 'RETURNED', amount: 1_000n, returned: '2025-03-21T05:00:00.000Z' });
    const sending = await refund(dep, { status: 'SENDING', amount: 2_000n });
    const releasing = await refund(dep, { status: 'RELEASING', amount: 3_000n });
    const reserving = await refund(dep, { status: 'RESERVING', amount: 4_000n });
    const failed = await refund(dep, { status: 'FAILED', amount: 5_000n });

    const expectedKeys = [`${dep}/0`, `${r1}/1`, `${r2}/1`, `${r3}/1`].sort();
    for (const size of [0, 1, 2, 3]) expect((await list(R, size)).flat().map(key)).toEqual(expectedKeys);
    const day = new Map((await list(R)).flat().map((l) => [l.ourId, l]));
    expect(day.get(r1)).toEqual({
      ourId: r1,
      providerId: `pse_${dep.slice(4, 12)}`,
      status: 'REFUNDED',
      direction: 'OUT',
      amountCents: 30_000n,
      settledAt: `${R}T05:00:00.000Z`,
      valueDate: R,
      companyId: company,
      traceparent: tp,
    });
    expect(day.get(r2)).toMatchObject({ status: 'REFUNDED', amountCents: 20_000n, settledAt: '2025-03-21T04:59:59.999Z', valueDate: R });
    expect(day.get(r3)).toMatchObject({ providerId: `pse_${other.slice(4, 12)}`, amountCents: 50_000n });
    expect((await list('2025-03-21')).flat().map(key)).toEqual([`${nextDay}/1`]);

    // Each page of the day's refunds is a range scan of deposit_returns_settled_idx from the last return id.
    for (const [sql, params] of [
      [refundPageSql(false), [R, 1000]],
      [refundPageSql(true), [R, r1, 1000]],
    ] as const) {
      const plan = await indexOnlyPlan(h.deposit.db, sql, [...params]);
      expect(plan).toContain('Index Scan using deposit_returns_settled_idx');
      expect(plan).not.toMatch(/Sort|Seq Scan on deposit_returns/);
    }

    const found = (await recon.findSettlements({ rail: 'pse', ids: [r1, sending, releasing, reserving, failed, dep] }, ctx())).records;
    expect(found.map((l) => [l.ourId, l.status, l.direction, l.stepOwed ?? false, l.settledAt ?? null])).toEqual(
      [
        [dep, 'ASSIGNED', 'IN', false, `${R}T14:00:00.000Z`],
        [r1, 'REFUNDED', 'OUT', false, `${R}T05:00:00.000Z`],
        [sending, 'PENDING', 'OUT', true, null],
        [releasing, 'PENDING', 'OUT', true, null],
      ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
  });

  it('refuses bad requests: another rail, a bad date, more than 500 ids', async () => {
    const drain = async (rail: string, date: string) => {
      for await (const _ of recon.listSettlements({ rail, date, batchSize: 0 }, ctx())) {
        /* none */
      }
    };
    await expect(drain('breb', D)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(drain('pse', '14-03-2025')).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect((await failure(recon.findSettlements({ rail: 'pse', ids: Array.from({ length: 501 }, newId) }, ctx()))).code).toBe('INVALID_REQUEST');
  });

  it('only the reconciliation identity may call them: the gateway, ops and other services are refused', async () => {
    for (const id of ['gateway', 'ops', 'transfer', 'collect-key'] as const) {
      const c = as(id);
      const principal = { kind: 'admin' as const, operator: 'op@example.com' };
      expect((await failure(c.findSettlements({ rail: 'pse', ids: [ids.paidFirst!] }, { ...ctx(), ...(id === 'gateway' ? { principal } : {}) }))).code).toBe(
        'CALLER_NOT_ALLOWED',
      );
      const stream = async () => {
        for await (const _ of c.listSettlements({ rail: 'pse', date: D, batchSize: 0 }, ctx())) {
          /* none */
        }
      };
      await expect(stream()).rejects.toMatchObject({ code: 'CALLER_NOT_ALLOWED' });
    }
  });
});
