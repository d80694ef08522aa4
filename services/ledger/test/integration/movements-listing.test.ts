import { instantFromDate } from '@wallet/platform';
import { randomUUID } from 'node:crypto';
import { ledgerV1 } from '@wallet/proto';
import { SqlLedgerStore } from '../../src/persistence/ledger.store.js';
import { InflowSource, MovementType, Rail, expectLedgerConsistent, failure, startHarness, zeroFee, type Harness } from './harness.js';

describe('listing movements', () => {
  let h: Harness;
  let co: string;
  /** Every movement of `co`, in the order the listing must give: newest first, ties by id descending. */
  let expected: ledgerV1.Movement[];

  beforeAll(async () => {
    h = await startHarness();
    co = h.newCompany();
    await h.api.open(co);
    // 25 credits at once (several share a created_at when they commit together), then a few others.
    await Promise.all(Array.from({ length: 25 }, (_, i) => h.api.credit(co, { rail: i % 2 ? Rail.ACH : Rail.BREB, amountCents: BigInt(100 + i) })));
    await h.api.reserve(co, { amount: 50n });
    await h.api.inflow(co, { source: InflowSource.PSE, grossCents: 1_000n, fee: zeroFee() });
    await h.api.chargeFee(co, { feeCents: 10n, ivaCents: 0n });
    const other = h.newCompany();
    await h.api.open(other);
    await h.api.credit(other, { amountCents: 1n });
    // Make ties certain: the credits fall into three instants shared by several movements each.
    await h.ledger.db.query(
      `
      with c as (select id, row_number() over (order by id) % 3 as grp from ledger.movements where company_id = ? and type = 'BALANCE_ADD')
      update ledger.movements m set created_at = timestamptz '2026-01-01 00:00:00.123456+00' + c.grp * interval '1 microsecond'
        from c where m.id = c.id`,
      [co],
    );
    const rows = await h.ledger.db.query<{ id: string }>('select id::text as id from ledger.movements where company_id = ? order by created_at desc, id desc', [
      co,
    ]);
    expected = await Promise.all(rows.map((r) => h.api.movement(co, r.id)));
    expect(expected).toHaveLength(28);
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerConsistent(h);
  });

  it('pages by page number: 20 by default, hasMore and nextCursor on all but the last page', async () => {
    const p0 = await h.api.list(co);
    expect(p0.items).toEqual(expected.slice(0, 20));
    expect(p0.hasMore).toBe(true);
    expect(p0.nextCursor).toBeTruthy();
    const p1 = await h.api.list(co, { page: 1 });
    expect(p1.items).toEqual(expected.slice(20));
    expect(p1.hasMore).toBe(false);
    expect(p1.nextCursor).toBeUndefined();
    const small = await h.api.list(co, { page: 2, limit: 5 });
    expect(small.items).toEqual(expected.slice(10, 15));
    expect((await h.api.list(co, { page: 9 })).items).toEqual([]);
  });

  it('pages by cursor through every movement exactly once; the cursor wins over the page', async () => {
    const seen: ledgerV1.Movement[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r: ledgerV1.ListMovementsResponse = await h.api.list(co, { limit: 6, page: 3, ...(cursor ? { cursor } : {}) });
      if (!cursor)
        expect(r.items).toEqual(expected.slice(18, 24)); // first call: page 3 applies
      else seen.push(...r.items);
      cursor = r.nextCursor;
      expect(r.hasMore).toBe(cursor !== undefined);
      pages++;
    } while (cursor && pages < 20);
    expect(seen).toEqual(expected.slice(24));

    const all: ledgerV1.Movement[] = [];
    cursor = undefined;
    do {
      const r: ledgerV1.ListMovementsResponse = await h.api.list(co, { limit: 7, ...(cursor ? { cursor } : {}) });
      all.push(...r.items);
      cursor = r.nextCursor;
    } while (cursor);
    expect(all.map((m) => m.id)).toEqual(expected.map((m) => m.id));
  });

  it('filters by type, rail and created_at range', async () => {
    const credits = await h.api.list(co, { type: MovementType.BALANCE_ADD, limit: 100 });
    expect(credits.items).toHaveLength(25);
    expect(credits.items.every((m) => m.type === MovementType.BALANCE_ADD)).toBe(true);
    const ach = await h.api.list(co, { rail: Rail.ACH, limit: 100 });
    expect(ach.items.map((m) => m.id)).toEqual(expected.filter((m) => m.rail === Rail.ACH).map((m) => m.id));
    const pse = await h.api.list(co, { rail: Rail.PSE });
    expect(pse.items.map((m) => m.type)).toEqual([MovementType.TRANSFER_IN]);
    const newest = expected[0]!.createdAt!;
    const recent = await h.api.list(co, { from: newest, limit: 100 });
    expect(recent.items.map((m) => m.id)).toEqual(expected.filter((m) => m.createdAt >= newest).map((m) => m.id));
    const none = await h.api.list(co, { to: '2025-12-31T23:59:59.000000Z' });
    expect(none.items).toEqual([]);
    const january = await h.api.list(co, { from: '2026-01-01T00:00:00.000000Z', to: '2026-01-01T00:00:00.124000Z', limit: 100 });
    expect(january.items.map((m) => m.id)).toEqual(credits.items.map((m) => m.id));
    const outOut = await h.api.list(co, { type: MovementType.TRANSFER_OUT, rail: Rail.BREB });
    expect(outOut.items).toHaveLength(1);
  });

  it("every page follows an index in its order (company[, type | rail], created_at desc, id desc): no sort of the company's movements", async () => {
    // A page that sorted would read every movement of the company first (a company with a million: seconds).
    const store = new SqlLedgerStore(h.ledger.db);
    const seen: Array<{ sql: string; params: unknown[] }> = [];
    const internals = store as unknown as { run(sql: string, params?: unknown[]): Promise<unknown[]> };
    const run = internals.run.bind(store);
    internals.run = (sql, params = []) => {
      seen.push({ sql, params });
      return run(sql, params);
    };
    const first = await store.listMovements(co, {}, { limit: 5, offset: 0 });
    await store.listMovements(co, {}, { limit: 5, offset: 0, after: first.items.at(-1)!.cursor });
    await store.listMovements(
      co,
      { from: '2025-01-01T00:00:00Z', to: instantFromDate(new Date()), type: 'BALANCE_ADD', rail: 'BREB' },
      { limit: 5, offset: 5 },
    );
    // a filter on type or on rail alone that matches few (or none) of a large company's movements must not walk
    // all of them in the order's index: each has its own, built online (ledgerOnlineIndexes)
    await store.listMovements(co, { type: 'TRANSFER_OUT' }, { limit: 5, offset: 0 });
    await store.listMovements(co, { rail: 'ACH' }, { limit: 5, offset: 0, after: first.items.at(-1)!.cursor });
    expect(seen).toHaveLength(5);
    const expected = [
      'movements_company_created_idx',
      'movements_company_created_idx',
      'movements_company_(type_|rail_)?created_idx',
      'movements_company_type_created_idx',
      'movements_company_rail_created_idx',
    ];
    for (const [i, q] of seen.entries()) {
      // with scans that need no index ruled out, a plan that must sort shows a Sort node
      const plan = await h.ledger.db.tx(async (tx) => {
        await tx.query('set local enable_seqscan = off');
        await tx.query('set local enable_bitmapscan = off');
        return tx.query(`explain (format json) ${q.sql}`, q.params);
      });
      const text = JSON.stringify(plan);
      expect(text).toMatch(new RegExp(`"Index Name":"${expected[i]}"`));
      expect(text).not.toMatch(/"Node Type":"(Incremental )?Sort"/);
    }
  });

  it('refuses a limit above 100, a negative page, a foreign cursor and a reversed range', async () => {
    const over = await failure(h.api.list(co, { limit: 101 }));
    expect(over.code).toBe('INVALID_REQUEST');
    expect(over.details).toEqual({ fields: [{ path: 'limit', message: 'Debe estar entre 1 y 100.' }] });
    expect((await h.api.list(co, { limit: 100 })).items).toHaveLength(28);
    expect((await failure(h.api.list(co, { page: -1 }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.list(co, { cursor: 'bm90LWEtY3Vyc29y' }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.list(co, { from: instantFromDate(new Date()), to: instantFromDate(new Date(Date.now() - 1000)) }))).code).toBe(
      'INVALID_REQUEST',
    );
    expect((await failure(h.api.list(undefined))).code).toBe('CALLER_NOT_ALLOWED');
  });

  it('another company lists only its own movements; GetMovement of theirs is not found', async () => {
    const stranger = h.newCompany();
    expect((await h.api.list(stranger)).items).toEqual([]);
    expect((await failure(h.api.movement(stranger, expected[0]!.id))).code).toBe('TRANSACTION_NOT_FOUND');
    expect((await failure(h.api.movement(co, randomUUID()))).code).toBe('TRANSACTION_NOT_FOUND');
    expect((await failure(h.api.movement(co, 'nope'))).code).toBe('TRANSACTION_NOT_FOUND');
  });
});
