import { randomBytes, randomUUID } from 'node:crypto';
import { createAsyncClient, devMeshTls, type MeshIdentity } from '@wallet/platform';
import { returnsPageSql, settledPageSql } from '../../src/persistence/settlement.store.js';
import { eventually, indexOnlyPlan } from '@wallet/platform/testing';
import { collectKeyV1, type settlementsV1 } from '@wallet/proto';
import { failure, startHarness, type Harness } from './harness.js';

/**
 * The reconciliation's read path for rail breb-inbound (docs/reconciliation.md, `OurRecords`): a
 * Bogotá day's inbound payments keyed by the network's transfer id in byte order (`collate "C"`),
 * in keyset batches; FindSettlements by the network's ids, any day. Only the `reconciliation`
 * identity may call them, through the real gRPC server with mutual TLS.
 */

const D = '2025-03-14';
type Client = ReturnType<typeof createAsyncClient<collectKeyV1.CollectKeyServiceServer>>;
type Rec = settlementsV1.Settlement;

describe('collect-key ListSettlements / FindSettlements (reconciliation read path)', () => {
  let h: Harness;
  const clients: Client[] = [];
  const as = (id: MeshIdentity): Client => {
    const c = createAsyncClient<collectKeyV1.CollectKeyServiceServer>(collectKeyV1.CollectKeyServiceClient, h.service.address, {
      deadlineMs: 15_000,
      mesh: { tls: devMeshTls(id), server: 'collect-key' },
    });
    clients.push(c);
    return c;
  };
  let recon: Client;
  const ctx = () => ({ requestId: randomUUID() });
  let co: string;
  let key: collectKeyV1.CollectKey;
  const tag = randomBytes(4).toString('hex');
  const newDepositId = () => `dep_${[...randomBytes(24)].map((b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('')}`;

  /** An inbound payment row as the service leaves it (the read path only reads these columns). */
  async function payment(providerId: string, receivedAt: string, o: { status?: 'ASSIGNED' | 'UNASSIGNED'; amount?: bigint } = {}): Promise<string> {
    const id = newDepositId();
    await h.service.db.query(
      `insert into collect_key.payments (deposit_id, provider_transfer_id, company_id, key_id, key_external_id, key_name, key_value, key_state,
         status, amount, net_amount, received_at, movement_id)
       values (?, ?, ?, ?, ?, ?, ?, 'ACTIVE', ?, ?, ?, ?::timestamptz, ?::uuid)`,
      [
        id,
        providerId,
        co,
        key.id,
        key.externalId,
        key.name,
        key.keyValue,
        o.status ?? 'ASSIGNED',
        String(o.amount ?? 10_000n),
        String(o.amount ?? 10_000n),
        receivedAt,
        randomUUID(),
      ],
    );
    return id;
  }

  async function list(date: string, batchSize = 0): Promise<Rec[][]> {
    const batches: Rec[][] = [];
    for await (const b of recon.listSettlements({ rail: 'breb-inbound', date, batchSize }, ctx())) batches.push(b.records);
    return batches;
  }

  const p = (s: string) => `${s}-${tag}`;
  const dayKeys: string[] = [];
  const deposits: Record<string, string> = {};

  beforeAll(async () => {
    h = await startHarness();
    recon = as('reconciliation');
    co = await h.newCompany();
    key = (await h.client.createKey({ externalId: `recon-${tag}`, name: 'Recon' }, h.ctx(co))).key!;
    // Ids whose byte order differs from a linguistic one (upper case before lower, '-' and '_' before letters).
    deposits.first = await payment(p('BRB-Z'), `${D}T05:00:00.000Z`, { amount: 250_000n });
    deposits.last = await payment(p('brb_a'), '2025-03-15T04:59:59.999Z', { status: 'UNASSIGNED', amount: 90_000n });
    await payment(p('brb-before'), `${D}T04:59:59.999Z`);
    await payment(p('brb-after'), '2025-03-15T05:00:00.000Z');
    dayKeys.push(p('BRB-Z'), p('brb_a'));
    for (const s of ['a', 'B', 'c', 'D', 'e', '0', '9', 'Z-1', 'z-1']) {
      await payment(p(`brb-${s}`), `${D}T12:00:00.000Z`);
      dayKeys.push(p(`brb-${s}`));
    }
    dayKeys.sort(); // code-unit order: the engine's key order (collate "C")
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await h?.stop();
  });

  it("streams only the day's payments, in provider-id byte order, across several batches", async () => {
    const mine = (rs: Rec[]) => rs.filter((r) => r.providerId!.endsWith(tag));
    const batches = await list(D, 4);
    expect(batches.length).toBeGreaterThan(1);
    for (const b of batches) expect(b.length).toBeLessThanOrEqual(4);
    const all = batches.flat();
    for (let i = 1; i < all.length; i++) expect(all[i - 1]!.providerId! < all[i]!.providerId!).toBe(true);
    expect(mine(all).map((r) => r.providerId)).toEqual(dayKeys);
    expect(mine((await list(D)).flat()).map((r) => r.providerId)).toEqual(dayKeys);
  });

  it('each page is a range scan of the received-day index from the last id: no sequential scan, no sort', async () => {
    for (const [sql, params] of [
      [settledPageSql(false), [D, 1000]],
      [settledPageSql(true), [D, p('brb-a'), 1000]],
    ] as const) {
      const plan = await indexOnlyPlan(h.service.db, sql, [...params]);
      expect(plan).toContain('Index Scan using payments_settlements_idx');
      expect(plan).not.toMatch(/Sort|Seq Scan/);
    }
    // The return legs (a payment returned to the payer), by the day of the return: the same shape on migration 0007's index.
    for (const [sql, params] of [
      [returnsPageSql(false), [D, 1000]],
      [returnsPageSql(true), [D, p('brb-a'), 1000]],
    ] as const) {
      const plan = await indexOnlyPlan(h.service.db, sql, [...params]);
      expect(plan).toContain('Index Scan using payments_returns_idx');
      expect(plan).not.toMatch(/Sort|Seq Scan/);
    }
  });

  it("each record carries what the engine's OurRecord needs, with the Bogotá value date at the day's edges", async () => {
    const got = new Map((await list(D)).flat().map((r) => [r.providerId, r]));
    expect(got.get(p('BRB-Z'))).toEqual({
      ourId: deposits.first,
      providerId: p('BRB-Z'),
      status: 'ASSIGNED',
      direction: 'IN',
      amountCents: 250_000n,
      settledAt: `${D}T05:00:00.000Z`,
      valueDate: D,
      companyId: co,
    });
    expect(got.get(p('brb_a'))).toMatchObject({ ourId: deposits.last, status: 'UNASSIGNED', settledAt: '2025-03-15T04:59:59.999Z', valueDate: D });
    expect((await list('2025-03-13')).flat().map((r) => r.providerId)).toContain(p('brb-before'));
    expect((await list('2025-03-15')).flat().map((r) => r.providerId)).toContain(p('brb-after'));
    expect((await list('2025-03-15')).flat().map((r) => r.providerId)).not.toContain(p('brb_a'));
  });

  it('through the real flow: a payment the network notified is found by its transfer id, with those of other days', async () => {
    const pay = await h.sandboxPost('/sandbox/breb/incoming', {
      keyValue: key.keyValue,
      amountCents: 123_400,
      payerName: 'Ana',
      payerDocument: 'CC 1010',
      payerBank: 'Nequi',
    });
    expect(pay.status).toBe(202);
    const transfer = String(pay.body.providerTransferId);
    // Recorded CREDITING before the ledger's credit, it is PENDING until the credit closes it: wait for that.
    const found = await eventually(async () => {
      const r = (await recon.findSettlements({ rail: 'breb-inbound', ids: [transfer, p('brb-before'), 'unknown'] }, ctx())).records;
      return r.length === 2 && r.every((x) => x.status !== 'PENDING') ? r : undefined;
    }, 10_000);
    const by = new Map(found.map((r) => [r.providerId, r]));
    expect(by.get(transfer)).toMatchObject({ status: 'ASSIGNED', direction: 'IN', amountCents: 123_400n, companyId: co });
    expect(by.get(transfer)!.ourId).toMatch(/^dep_[a-z0-9]{24}$/);
    expect(by.get(p('brb-before'))).toMatchObject({ valueDate: '2025-03-13' });
    const today = by.get(transfer)!.valueDate!;
    expect((await list(today)).flat().map((r) => r.providerId)).toContain(transfer);
  });

  it('refuses bad requests: another rail, a bad date, more than 500 ids', async () => {
    const drain = async (rail: string, date: string) => {
      for await (const _ of recon.listSettlements({ rail, date, batchSize: 0 }, ctx())) {
        /* none */
      }
    };
    await expect(drain('breb', D)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(drain('breb-inbound', '2025-13-01')).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect((await failure(recon.findSettlements({ rail: 'breb-inbound', ids: Array.from({ length: 501 }, (_, i) => `x${i}`) }, ctx()))).code).toBe(
      'INVALID_REQUEST',
    );
  });

  it('only the reconciliation identity may call them: the gateway, ops and other services are refused', async () => {
    for (const id of ['gateway', 'ops', 'pse-deposit', 'transfer'] as const) {
      const c = as(id);
      const principal = { kind: 'admin' as const, operator: 'op@example.com' };
      expect(
        (await failure(c.findSettlements({ rail: 'breb-inbound', ids: [p('brb-a')] }, { ...ctx(), ...(id === 'gateway' ? { principal } : {}) }))).code,
      ).toBe('CALLER_NOT_ALLOWED');
      const stream = async () => {
        for await (const _ of c.listSettlements({ rail: 'breb-inbound', date: D, batchSize: 0 }, ctx())) {
          /* none */
        }
      };
      await expect(stream()).rejects.toMatchObject({ code: 'CALLER_NOT_ALLOWED' });
    }
  });
});
