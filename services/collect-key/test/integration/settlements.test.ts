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
  async function payment(
    providerId: string,
    receivedAt: string,
    o: { status?: 'ASSIGNED' | 'UNASSIGNED' | 'RETURNED'; amount?: bigint; returnedAt?: string } = {},
  ): Promise<string> {
    const id = newDepositId();
    await h.service.db.query(
      `insert into collect_key.payments (deposit_id, provider_transfer_id, company_id, key_id, key_external_id, key_name, key_value, key_state,
         status, amount, net_amount, received_at, movement_id, returned_at)
       values (?, ?, ?, ?, ?, ?, ?, 'ACTIVE', ?, ?, ?, ?::timestamptz, ?::uuid, ?::timestamptz)`,
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
        o.returnedAt ?? null,
      ],
    );
    return id;
  }

  const newReturnId = () => `ret_${[...randomBytes(24)].map((b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('')}`;
  /** A return of a credited payment as collect-key's return saga leaves it in `payment_returns` (the read path only reads these columns). */
  async function partReturn(
    depositId: string,
    providerId: string,
    amount: bigint,
    status: 'RESERVING' | 'SENDING' | 'RELEASING' | 'RETURNED' | 'FAILED',
    returnedAt: string | null = null,
    id = newReturnId(),
  ): Promise<string> {
    await h.service.db.query(
      `insert into collect_key.payment_returns (id, deposit_id, company_id, provider_transfer_id, inflow_key, amount, reason, status, movement_id, requested_by, returned_at)
       values (?, ?, ?, ?, ?, ?, 'CUSTOMER_REQUEST', ?, ?::uuid, 'operator:test', ?::timestamptz)`,
      [id, depositId, co, providerId, `collectkey:payment:${providerId}`, String(amount), status, randomUUID(), returnedAt],
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
    // The return legs, by the day of the return: the held payments' full returns on migration 0007's index and the
    // returns of credited payments on 0010's, each a range scan from the last (provider id, return id), merged. The held
    // payment's one return comes through an incremental sort on its provider id (groups of one), never a full sort.
    for (const [sql, params] of [
      [returnsPageSql(false), [D, 1000]],
      [returnsPageSql(true), [D, p('brb-a'), 'ret_0', 1000]],
    ] as const) {
      const plan = await indexOnlyPlan(h.service.db, sql, [...params]);
      expect(plan).toContain('Index Scan using payments_returns_idx');
      expect(plan).toContain('Index Scan using payment_returns_settled_idx');
      expect(plan).toContain('Merge Append');
      expect(plan).not.toMatch(/Seq Scan|(?<!Incremental )Sort {2}\(/);
      if (params.length === 4) expect(plan).toMatch(/payment_returns_settled_idx[^\n]*\n[^\n]*Index Cond: [^\n]*ROW\(/);
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

  describe('returns to the payer: a held payment returned in full, a credited one returned in parts', () => {
    const R = '2025-03-20';
    const legs: Record<string, string> = {};
    /** Return ids in byte order: the engine's key order within one payment. */
    const ids: string[] = [];

    beforeAll(async () => {
      // A credited payment returned three times in part on R (more returns than a page holds), once on the day after,
      // and with returns that are not final: one being sent, one being released, one reserving, one failed.
      legs.parts = await payment(p('brb_R-parts'), `${R}T14:00:00.000Z`, { amount: 100_000n });
      for (const [amount, at] of [
        [10_000n, `${R}T15:00:00.000Z`],
        [20_000n, `${R}T16:00:00.000Z`],
        [5_000n, '2025-03-21T04:59:59.999Z'], // 23:59:59.999 in Bogotá: still R
      ] as const) {
        ids.push(await partReturn(legs.parts, p('brb_R-parts'), amount, 'RETURNED', at));
      }
      ids.sort();
      legs.nextDay = await partReturn(legs.parts, p('brb_R-parts'), 1_000n, 'RETURNED', '2025-03-21T05:00:00.000Z');
      legs.sending = await partReturn(legs.parts, p('brb_R-parts'), 2_000n, 'SENDING');
      legs.releasing = await partReturn(legs.parts, p('brb_R-parts'), 3_000n, 'RELEASING');
      legs.reserving = await partReturn(legs.parts, p('brb_R-parts'), 4_000n, 'RESERVING');
      legs.failed = await partReturn(legs.parts, p('brb_R-parts'), 5_000n, 'FAILED');
      // A held payment returned in full on R (its return id at the network: the deposit id).
      legs.held = await payment(p('brb_R-held'), `${R}T10:00:00.000Z`, { status: 'RETURNED', amount: 70_000n, returnedAt: `${R}T11:00:00.000Z` });
      // A payment received the day before, returned in part on R: only its return leg is R's.
      legs.early = await payment(p('brb_R-early'), '2025-03-19T15:00:00.000Z', { amount: 8_000n });
      legs.earlyReturn = await partReturn(legs.early, p('brb_R-early'), 8_000n, 'RETURNED', `${R}T09:00:00.000Z`);
    });

    const mine = (rs: Rec[]) => rs.filter((r) => r.providerId!.endsWith(tag)).map((r) => [r.providerId, r.direction, r.ourId, r.amountCents, r.status]);

    it("lists the day's return legs, one per return, our_id the return's id, in (provider id, IN before OUT, return id) byte order across pages", async () => {
      const expected = [
        [p('brb_R-early'), 'OUT', legs.earlyReturn, 8_000n, 'RETURNED'],
        [p('brb_R-held'), 'IN', legs.held, 70_000n, 'UNASSIGNED'],
        [p('brb_R-held'), 'OUT', legs.held, 70_000n, 'RETURNED'],
        [p('brb_R-parts'), 'IN', legs.parts, 100_000n, 'ASSIGNED'],
        ...ids.map((id) => [p('brb_R-parts'), 'OUT', id]),
      ];
      for (const size of [0, 1, 2, 3]) {
        const all = (await list(R, size)).flat();
        const key = (r: Rec) => [r.providerId!, r.direction === 'IN' ? '0' : '1', r.ourId].join('\u0000');
        for (let i = 1; i < all.length; i++) expect(key(all[i - 1]!) < key(all[i]!)).toBe(true);
        const got = mine(all);
        expect(got.slice(0, 4)).toEqual(expected.slice(0, 4));
        expect(got.slice(4).map((g) => g.slice(0, 3))).toEqual(expected.slice(4));
      }
      const byId = new Map((await list(R)).flat().map((r) => [r.ourId, r]));
      const amounts = new Map([
        [10_000n, `${R}T15:00:00.000Z`],
        [20_000n, `${R}T16:00:00.000Z`],
        [5_000n, '2025-03-21T04:59:59.999Z'],
      ]);
      for (const id of ids) {
        const r = byId.get(id)!;
        expect(r).toMatchObject({ providerId: p('brb_R-parts'), direction: 'OUT', status: 'RETURNED', valueDate: R, companyId: co });
        expect(r.settledAt).toBe(amounts.get(r.amountCents));
      }
      // The return made the day after is that day's; the payment's IN leg is not.
      expect(mine((await list('2025-03-21')).flat())).toEqual([[p('brb_R-parts'), 'OUT', legs.nextDay, 1_000n, 'RETURNED']]);
    });

    it('finds a payment with all its return legs: returned ones settled, those in flight at the network PENDING with a step owed; none for a return reserving or failed', async () => {
      const found = (await recon.findSettlements({ rail: 'breb-inbound', ids: [p('brb_R-parts'), p('brb_R-held')] }, ctx())).records;
      const rows = found.map((r) => [r.providerId, r.direction, r.ourId, r.status, r.stepOwed ?? false, r.settledAt !== undefined]);
      const outs = [...ids, legs.nextDay!, legs.sending!, legs.releasing!].sort();
      expect(rows).toEqual([
        [p('brb_R-held'), 'IN', legs.held, 'UNASSIGNED', false, true],
        [p('brb_R-held'), 'OUT', legs.held, 'RETURNED', false, true],
        [p('brb_R-parts'), 'IN', legs.parts, 'ASSIGNED', false, true],
        ...outs.map((id) => {
          const inFlight = id === legs.sending || id === legs.releasing;
          return [p('brb_R-parts'), 'OUT', id, inFlight ? 'PENDING' : 'RETURNED', inFlight, !inFlight];
        }),
      ]);
      // An open exception about a return (or its payment) is reported on that return's leg.
      await h.service.db.query(
        `insert into collect_key.money_exceptions (id, kind, company_id, rail, resource_id, ours, theirs) values (?, 'RETURN_STUCK', ?, 'BREB', ?, '{}', '{}')`,
        [`exc_${randomBytes(16).toString('hex')}`, co, legs.sending],
      );
      const again = (await recon.findSettlements({ rail: 'breb-inbound', ids: [p('brb_R-parts')] }, ctx())).records;
      expect(again.filter((r) => r.openExceptionId).map((r) => r.ourId)).toEqual([legs.sending]);
    });
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
