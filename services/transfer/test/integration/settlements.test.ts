import { randomUUID } from 'node:crypto';
import { createAsyncClient, devMeshTls, type AppError, type MeshIdentity } from '@wallet/platform';
import { indexOnlyPlan } from '@wallet/platform/testing';
import { settledPageSql } from '../../src/persistence/settlement.store.js';
import { settlementsV1, transferV1 } from '@wallet/proto';
import { failure, startHarness, type Harness } from './harness.js';

/**
 * The reconciliation's read path (docs/reconciliation.md, `OurRecords`): ListSettlements streams a
 * Bogotá day's settled transfers of one rail in id order, in keyset batches; FindSettlements finds
 * records of any day, PENDING ones included. Through the real gRPC server with mutual TLS: only the
 * `reconciliation` identity may call them.
 */

const D = '2025-03-14';
type Client = ReturnType<typeof createAsyncClient<transferV1.TransferServiceServer>>;

describe('ListSettlements / FindSettlements (reconciliation read path)', () => {
  let h: Harness;
  const clients: Client[] = [];
  const as = (id: MeshIdentity): Client => {
    const c = createAsyncClient<transferV1.TransferServiceServer>(transferV1.TransferServiceClient, h.transfer!.address, {
      deadlineMs: 15_000,
      mesh: { tls: devMeshTls(id), server: 'transfer' },
    });
    clients.push(c);
    return c;
  };
  let recon: Client;
  const ctx = () => ({ requestId: randomUUID() });
  const company = `co_settle_${process.pid}`;

  /** Inserts a transfer row as the saga leaves it (the read path only reads these columns). */
  async function row(o: {
    rail?: 'BREB' | 'ACH';
    state: string;
    amount?: bigint;
    provider?: string | null;
    completedAt?: string | null;
    finishedAt?: string | null;
  }): Promise<string> {
    const id = randomUUID();
    const rail = o.rail ?? 'BREB';
    await h.ledger.db.query(
      `insert into transfer.transfers (id, company_id, rail, state, amount, fixed_fee, variable_fee, subtotal_fee, iva_applicable, iva_amount,
         total_charged, target_name, target_document, counterparty_document, destination, provider_transfer_id, completed_at, finished_at,
         account_number_sealed, account_number_masked)
       values (?::uuid, ?, ?, ?, ?, 0, 0, 0, false, 0, 0, 'CAMILO MARIN', '40828038', '40828038', ?::jsonb, ?, ?::timestamptz, ?::timestamptz, ?, ?)`,
      [
        id,
        company,
        rail,
        o.state,
        String(o.amount ?? 1_000n),
        JSON.stringify({ kind: rail }),
        o.provider === undefined ? `prov_${id.slice(0, 8)}` : o.provider,
        o.completedAt ?? null,
        o.finishedAt ?? null,
        rail === 'ACH' ? 'sealed' : null,
        rail === 'ACH' ? '****1234' : null,
      ],
    );
    return id;
  }

  async function list(rail: string, date: string, batchSize = 0): Promise<settlementsV1.Settlement[][]> {
    const batches: settlementsV1.Settlement[][] = [];
    for await (const b of recon.listSettlements({ rail, date, batchSize }, ctx())) batches.push(b.records);
    return batches;
  }

  const ids: Record<string, string> = {};
  const dayIds: string[] = [];

  beforeAll(async () => {
    h = await startHarness();
    recon = as('reconciliation');
    // The day's edges in Bogotá (UTC-5): 00:00:00.000 and 23:59:59.999 are in; a millisecond either side is not.
    ids.first = await row({ state: 'COMPLETED', amount: 150_000n, completedAt: `${D}T05:00:00.000Z`, finishedAt: `${D}T05:00:00.100Z` });
    ids.last = await row({ state: 'FAILED', amount: 250_013n, finishedAt: '2025-03-15T04:59:59.999Z' });
    ids.dayBefore = await row({ state: 'COMPLETED', completedAt: `${D}T04:59:59.999Z` });
    ids.dayAfter = await row({ state: 'FAILED', finishedAt: '2025-03-15T05:00:00.000Z' });
    // Settled by finished_at only when FAILED: a COMPLETED one settles at completed_at (the day before here).
    ids.completedEarlier = await row({ state: 'COMPLETED', completedAt: '2025-03-13T12:00:00.000Z', finishedAt: `${D}T12:00:00.000Z` });
    // A failure the rail never took (refused at dispatch): no line at the provider, not a day's record.
    ids.neverTaken = await row({ state: 'FAILED', provider: null, finishedAt: `${D}T12:00:00.000Z` });
    ids.ach = await row({ rail: 'ACH', state: 'COMPLETED', amount: 1_200_000n, completedAt: `${D}T15:00:00.000Z` });
    ids.pending = await row({ state: 'DISPATCHED' });
    ids.rejected = await row({ state: 'REJECTED', provider: null, finishedAt: `${D}T12:00:00.000Z` });
    dayIds.push(ids.first, ids.last);
    // Enough more for several pages.
    for (let i = 0; i < 23; i++)
      dayIds.push(await row({ state: 'COMPLETED', amount: BigInt(1_000 + i), completedAt: `${D}T${String(5 + (i % 19)).padStart(2, '0')}:30:00.000Z` }));
    dayIds.sort(); // JavaScript's code-unit order: the engine's key order (collate "C")
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await h?.stop();
  });

  it("streams only the day's settled records of the rail, in key order, across several batches", async () => {
    const batches = await list('breb', D, 7);
    expect(batches.map((b) => b.length)).toEqual([7, 7, 7, 4]);
    const got = batches.flat();
    expect(got.map((r) => r.ourId)).toEqual(dayIds);
    for (let i = 1; i < got.length; i++) expect(got[i - 1]!.ourId < got[i]!.ourId).toBe(true);
    // One batch when it fits (the default size).
    expect((await list('breb', D)).map((b) => b.length)).toEqual([25]);
  });

  it('each page is a range scan of the settled-day index from the last id: no sequential scan, no sort (1,000,000 records a day stay bounded)', async () => {
    for (const [sql, params] of [
      [settledPageSql(false), ['BREB', D, 1000]],
      [settledPageSql(true), ['BREB', D, ids.first, 1000]],
    ] as const) {
      const plan = await indexOnlyPlan(h.ledger.db, sql, [...params]);
      expect(plan).toContain('Index Scan using transfers_settlements_idx');
      expect(plan).not.toMatch(/Sort|Seq Scan/);
    }
  });

  it("each record carries what the engine's OurRecord needs, with the Bogotá value date at the day's edges", async () => {
    const got = new Map((await list('breb', D)).flat().map((r) => [r.ourId, r]));
    expect(got.get(ids.first!)).toEqual({
      ourId: ids.first,
      providerId: `prov_${ids.first!.slice(0, 8)}`,
      status: 'COMPLETED',
      direction: 'OUT',
      amountCents: 150_000n,
      settledAt: `${D}T05:00:00.000Z`,
      valueDate: D,
      companyId: company,
    });
    expect(got.get(ids.last!)).toMatchObject({ status: 'FAILED', amountCents: 250_013n, settledAt: '2025-03-15T04:59:59.999Z', valueDate: D });
  });

  it('the other days, the other rail and an empty day', async () => {
    expect(
      (await list('breb', '2025-03-13'))
        .flat()
        .map((r) => r.ourId)
        .sort(),
    ).toEqual([ids.dayBefore, ids.completedEarlier].sort());
    expect((await list('breb', '2025-03-15')).flat()).toEqual([expect.objectContaining({ ourId: ids.dayAfter, valueDate: '2025-03-15' })]);
    expect((await list('ach', D)).flat()).toEqual([expect.objectContaining({ ourId: ids.ach, amountCents: 1_200_000n, valueDate: D })]);
    expect(await list('ach', '2025-03-16')).toEqual([]);
  });

  it('FindSettlements: records of any day and PENDING ones; not other rails, REJECTED, or ids that are not ours', async () => {
    const r = await recon.findSettlements(
      {
        rail: 'breb',
        ids: [ids.dayBefore!, ids.pending!, ids.first!, ids.ach!, ids.rejected!, 'not-a-uuid', ids.neverTaken!, ids.first!.toUpperCase()],
      },
      ctx(),
    );
    const byId = new Map(r.records.map((x) => [x.ourId, x]));
    expect([...byId.keys()].sort()).toEqual([ids.dayBefore, ids.pending, ids.first, ids.neverTaken].sort());
    expect(r.records).toHaveLength(4);
    expect(byId.get(ids.pending!)).toEqual({
      ourId: ids.pending,
      providerId: `prov_${ids.pending!.slice(0, 8)}`,
      status: 'PENDING',
      direction: 'OUT',
      amountCents: 1_000n,
      companyId: company,
    });
    expect(byId.get(ids.dayBefore!)).toMatchObject({ status: 'COMPLETED', valueDate: '2025-03-13' });
    expect(byId.get(ids.neverTaken!)).toMatchObject({ status: 'FAILED', valueDate: D });
    expect((await recon.findSettlements({ rail: 'ach', ids: [ids.ach!] }, ctx())).records).toEqual([
      expect.objectContaining({ ourId: ids.ach, status: 'COMPLETED' }),
    ]);
    expect((await recon.findSettlements({ rail: 'breb', ids: [] }, ctx())).records).toEqual([]);
  });

  it('refuses bad requests: another rail, a date that does not exist, more than 500 ids', async () => {
    const drain = async (rail: string, date: string) => {
      for await (const _ of recon.listSettlements({ rail, date, batchSize: 0 }, ctx())) {
        /* none */
      }
    };
    await expect(drain('pse', D)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(drain('breb', '2025-02-30')).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect((await failure(recon.findSettlements({ rail: 'breb', ids: Array.from({ length: 501 }, () => randomUUID()) }, ctx()))).code).toBe('INVALID_REQUEST');
  });

  it('only the reconciliation identity may call them: the gateway (even for an operator), ops and other services are refused', async () => {
    for (const id of ['gateway', 'ops', 'ledger', 'pse-deposit'] as const) {
      const c = as(id);
      const principal = { kind: 'admin' as const, operator: 'op@example.com' };
      const e = await failure(c.findSettlements({ rail: 'breb', ids: [ids.first!] }, { ...ctx(), ...(id === 'gateway' ? { principal } : {}) }));
      expect(e.code).toBe('CALLER_NOT_ALLOWED');
      const stream = async () => {
        for await (const _ of c.listSettlements({ rail: 'breb', date: D, batchSize: 0 }, ctx())) {
          /* none */
        }
      };
      await expect(stream()).rejects.toMatchObject({ code: 'CALLER_NOT_ALLOWED' } satisfies Partial<AppError>);
    }
  });
});
