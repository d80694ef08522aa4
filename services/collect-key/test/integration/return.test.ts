import { randomUUID } from 'node:crypto';
import { createAsyncClient, devMeshTls } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { collectKeyV1 } from '@wallet/proto';
import { failure, startHarness, type Harness } from './harness.js';

/**
 * Returning held funds (docs/decisions.md "Inbound Bre-B payments"): a held (UNASSIGNED) Bre-B payment is returned to the payer through
 * the network: the sandbox records the return and its settlement report carries a RETURNED (OUT)
 * line; the ledger takes the gross out of unassigned_funds against breb_settlement once; the
 * reconciliation's read path has the payment's two legs. The network unreachable: the sweeper
 * finishes it. Assignment and return exclude each other.
 */
describe('returning a held (UNASSIGNED) Bre-B payment to the payer', () => {
  let h: Harness;
  let recon: ReturnType<typeof createAsyncClient<collectKeyV1.CollectKeyServiceServer>>;
  beforeAll(async () => {
    h = await startHarness();
    recon = createAsyncClient<collectKeyV1.CollectKeyServiceServer>(collectKeyV1.CollectKeyServiceClient, h.service.address, {
      deadlineMs: 15_000,
      mesh: { tls: devMeshTls('reconciliation'), server: 'collect-key' },
    });
  }, 120_000);
  afterAll(async () => {
    recon?.close();
    await h?.sandboxPost('/sandbox/faults', { brebRail: 'up' }).catch(() => undefined);
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
  });

  const held = async (co: string, externalId: string, amountCents: number) => {
    const k = (await h.client.createKey({ externalId, name: 'Tienda' }, h.ctx(co))).key!;
    await h.client.deleteKey({ id: k.id }, h.ctx(co));
    const r = await h.sandboxPost('/sandbox/breb/incoming', {
      keyValue: k.keyValue,
      amountCents,
      payerName: 'Sara Gil',
      payerDocument: 'CC 5060',
      payerBank: 'Nequi',
    });
    const transfer = String(r.body.providerTransferId);
    const row = await eventually(
      async () =>
        (
          await h.service.db.query<{ deposit_id: string; status: string; received_at: Date }>(
            `select deposit_id, status, received_at from collect_key.payments where provider_transfer_id = ? and status = 'UNASSIGNED'`,
            [transfer],
          )
        )[0],
      15_000,
    );
    return { transfer, depositId: row.deposit_id, receivedAt: new Date(row.received_at) };
  };
  const postings = async (key: string) =>
    (await h.service.db.query<{ n: number }>(`select count(*)::int as n from ledger.postings where idempotency_key = ?`, [key]))[0]!.n;
  const day = (d: Date) => new Date(d.getTime() - 5 * 3600_000).toISOString().slice(0, 10);

  it('the company returns its held payment once (another company cannot); the network reports it RETURNED; two legs for the reconciliation', async () => {
    const co = await h.newCompany();
    const p = await held(co, 'ret-1', 61_000);
    const before = await h.brebAvailable(co);
    expect((await failure(h.client.returnPayment({ depositId: p.depositId, note: '', returnedBy: '' }, h.ctx(await h.newCompany())))).code).toBe(
      'DEPOSIT_NOT_FOUND',
    );

    const [a, b] = await Promise.all([0, 1].map(() => h.client.returnPayment({ depositId: p.depositId, note: '', returnedBy: '' }, h.ctx(co))));
    for (const d of [a!, b!]) expect(d).toMatchObject({ id: p.depositId, status: 'REVERSED', amountCents: 61_000n });
    const row = (
      await h.service.db.query<{ status: string; returned_at: Date }>(`select status, returned_at from collect_key.payments where deposit_id = ?`, [
        p.depositId,
      ])
    )[0]!;
    expect(row.status).toBe('RETURNED');
    expect(await postings(`collectkey:payment:${p.transfer}:returned`)).toBe(1);
    expect(await h.brebAvailable(co)).toBe(before);
    expect(await h.client.returnPayment({ depositId: p.depositId, note: '', returnedBy: '' }, h.ctx(co))).toMatchObject({ status: 'REVERSED' });
    expect((await failure(h.client.assignPayment({ depositId: p.depositId, note: '', assignedBy: '' }, h.ctx(co)))).code).toBe('INVALID_STATE_TRANSITION');
    const subjects = (
      await h.service.db.query<{ subject: string }>(
        `select subject from collect_key.outbox where payload #>> '{deposit,providerTransferId}' = ? order by seq`,
        [p.transfer],
      )
    ).map((r) => r.subject);
    expect(subjects).toEqual(['deposit.unassigned', 'deposit.reversed']);

    // The network's side: its report has the payment and its return.
    const report = await fetch(`${h.sandbox.url}/sandbox/reports/breb-inbound/${day(new Date(row.returned_at))}.csv`).then((r) => r.text());
    expect(
      report
        .split('\r\n')
        .filter((l) => l.startsWith(`${p.transfer},`))
        .map((l) => l.split(',')[5]),
    ).toEqual(['RECEIVED', 'RETURNED']);

    // Ours: the payment (IN, UNASSIGNED, at its reception) and its return (OUT, RETURNED, at the network's return time), in key order.
    const found = await recon.findSettlements({ rail: 'breb-inbound', ids: [p.transfer] }, { requestId: randomUUID() });
    expect(found.records.map((r) => [r.direction, r.status, r.settledAt])).toEqual([
      ['IN', 'UNASSIGNED', p.receivedAt.toISOString()],
      ['OUT', 'RETURNED', new Date(row.returned_at).toISOString()],
    ]);
    const listed: Array<[string, string, string]> = [];
    for await (const batch of recon.listSettlements(
      { rail: 'breb-inbound', date: day(new Date(row.returned_at)), batchSize: 1 },
      { requestId: randomUUID() },
    )) {
      for (const r of batch.records) listed.push([r.providerId ?? '', r.direction, r.status]);
    }
    expect(listed.filter(([id]) => id === p.transfer)).toEqual([
      [p.transfer, 'IN', 'UNASSIGNED'],
      [p.transfer, 'OUT', 'RETURNED'],
    ]);
    expect([...listed].sort((x, y) => (x[0] === y[0] ? (x[1] < y[1] ? -1 : 1) : x[0] < y[0] ? -1 : 1))).toEqual(listed);
  });

  it('the network unreachable: 503, RETURNING; the sweeper finishes it once the network is back', async () => {
    const co = await h.newCompany();
    const p = await held(co, 'ret-2', 12_000);
    await h.sandboxPost('/sandbox/faults', { brebRail: 'down' });
    expect((await failure(h.client.returnPayment({ depositId: p.depositId, note: '', returnedBy: '' }, h.ctx(co)))).code).toBe('SERVICE_UNAVAILABLE');
    expect((await h.service.db.query<{ status: string }>(`select status from collect_key.payments where deposit_id = ?`, [p.depositId]))[0]!.status).toBe(
      'RETURNING',
    );
    // Neither an assignment nor a second return can take it meanwhile.
    expect((await failure(h.client.assignPayment({ depositId: p.depositId, note: '', assignedBy: '' }, h.ctx(co)))).code).toBe('INVALID_STATE_TRANSITION');
    await h.sandboxPost('/sandbox/faults', { brebRail: 'up' });
    await eventually(
      async () =>
        (
          await h.service.db.query<{ status: string }>(`select status from collect_key.payments where deposit_id = ? and status = 'RETURNED'`, [p.depositId])
        )[0],
      15_000,
    );
    expect(await postings(`collectkey:payment:${p.transfer}:returned`)).toBe(1);
  });
});
