import { Database, createLogger } from '@wallet/platform';
import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import pg from 'pg';
import { SqlBatchStore } from '../../src/persistence/batch.store.js';
import { TransferDataProtection } from '../../src/persistence/data-protection.js';
import { transferMigrations, transferOnlineIndexes } from '../../src/persistence/migrations/index.js';

/**
 * A bulk payout's summary (GET /transfers/batches[/{id}]) reads each executed item's transfer state. By the
 * transfer's primary key that was one probe per item into the whole table (docs/benchmarks.md "Transfers,
 * receipts and a reconciliation day at scale": 5.7 ms for a batch of 5,000 on an empty table, 84 ms among
 * 3,000,000 transfers). It reads them from `transfers_batch_items_idx` (transferOnlineIndexes): the batch's
 * transfers as one index range, with its values and as the generic plan a connection keeps.
 */
const BATCH = '00000000-0000-4000-8000-0000000000b1';
const CO = 'co_batch_plan';

describe('a batch summary reads its transfers by batch', () => {
  let tdb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    tdb = await createTestDatabase('batch_plan');
    const protection = new TransferDataProtection('batch-summary-plan-test-key-0123456789');
    db = await Database.open({
      url: tdb.url,
      schema: 'transfer',
      migrations: transferMigrations(protection),
      onlineIndexes: transferOnlineIndexes,
      logger: createLogger('batch-plan-test', 'silent'),
      poolMax: 2,
    });
    await db.migrate();
    // 20,000 transfers of other companies and one batch of 300 executed items over its own transfers
    // (COMPLETED, FAILED, DISPATCHED by thirds), plus 10 items the batch rejected (no transfer).
    await db.query(
      `insert into transfer.transfers (id, company_id, rail, state, amount, fixed_fee, variable_fee, subtotal_fee, iva_applicable, iva_amount,
         total_charged, target_name, target_document, counterparty_document, destination, batch_id)
       select md5('t' || g)::uuid, case when g <= 300 then '${CO}' else 'co_' || (g % 500) end, 'BREB',
         case when g > 300 then 'COMPLETED' when g % 3 = 0 then 'COMPLETED' when g % 3 = 1 then 'FAILED' else 'DISPATCHED' end,
         1000 + g, 100, 0, 100, false, 0, 100, 'Ana', '1', '1', '{"kind":"BREB"}'::jsonb, case when g <= 300 then '${BATCH}'::uuid end
       from generate_series(1, 20000) g`,
    );
    await db.query(
      `insert into transfer.batches (id, company_id, request_fingerprint, state, mode, source, item_count, valid_count, invalid_count,
         iva_applicable, expires_at)
       values ('${BATCH}', '${CO}', 'hm1:x', 'EXECUTING', 'ALL', 'CSV', 310, 310, 0, false, now() + interval '1 day')`,
    );
    await db.query(
      `insert into transfer.batch_items (batch_id, seq, status, rail, amount, subtotal_fee, total_charged, transfer_id)
       select '${BATCH}'::uuid, g, 'EXECUTED', 'BREB', 1000 + g, 100, 100, md5('t' || g)::uuid from generate_series(1, 300) g
       union all select '${BATCH}'::uuid, g, 'REJECTED', 'BREB', 5, 0, 0, null::uuid from generate_series(301, 310) g`,
    );
    // 40 other batches of 1,000 items each: the summary of one batch must not read theirs.
    await db.query(
      `insert into transfer.batches (id, company_id, request_fingerprint, state, mode, source, item_count, valid_count, invalid_count,
         iva_applicable, expires_at)
       select md5('b' || g)::uuid, 'co_other', 'hm1:' || g, 'EXECUTING', 'ALL', 'CSV', 1000, 1000, 0, false, now() + interval '1 day'
         from generate_series(1, 40) g`,
    );
    await db.query(
      `insert into transfer.batch_items (batch_id, seq, status, rail, amount, subtotal_fee, total_charged, transfer_id)
       select md5('b' || b)::uuid, g, 'REJECTED', 'BREB', 5, 0, 0, null::uuid from generate_series(1, 40) b, generate_series(1, 1000) g`,
    );
    await db.query('analyze transfer.transfers, transfer.batches, transfer.batch_items');
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  it('counts each status from the batch transfers, read by batch (its items and its transfers), never by each transfer id nor every batch', async () => {
    const seen: Array<{ sql: string; params: readonly unknown[] }> = [];
    const spy = {
      prepared: (sql: string, params: readonly unknown[] = []) => {
        seen.push({ sql, params });
        return db.prepared(sql, params);
      },
    } as unknown as Database;
    const store = new SqlBatchStore(spy, new TransferDataProtection('batch-summary-plan-test-key-0123456789'));
    const batch = await store.get(CO, BATCH);
    const [summary] = await store.summaries([batch!]);
    expect(summary!.byStatus.map((s) => [s.status, s.count])).toEqual([
      ['COMPLETED', 100],
      ['FAILED', 100],
      ['PENDING', 100],
      ['REJECTED', 10],
    ]);
    const q = seen.find((s) => s.sql.includes('transfer.batch_items i'));
    expect(q).toBeDefined();

    interface PlanNode {
      'Node Type': string;
      'Index Name'?: string;
      'Relation Name'?: string;
      Plans?: PlanNode[];
    }
    const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
    const client = new pg.Client({ connectionString: tdb.url });
    await client.connect();
    try {
      let i = 0;
      const text = q!.sql.replace(/\?/g, () => `$${++i}`);
      const literal = (v: unknown) =>
        Array.isArray(v) ? `array[${(v as string[]).map((x) => client.escapeLiteral(x)).join(', ')}]::uuid[]` : `${client.escapeLiteral(String(v))}::uuid`;
      await client.query('begin');
      const custom = (await client.query(`explain (format json) ${text}`, [...q!.params])).rows[0]['QUERY PLAN'];
      await client.query(`prepare summary_shape as ${text}`);
      await client.query('set local plan_cache_mode = force_generic_plan');
      const generic = (await client.query(`explain (format json) execute summary_shape(${q!.params.map(literal).join(', ')})`)).rows[0]['QUERY PLAN'];
      await client.query('rollback');
      for (const plan of [custom, generic]) {
        const all = nodes((plan as Array<{ Plan: PlanNode }>)[0]!.Plan);
        const why = JSON.stringify(plan);
        const onTransfers = all.filter((n) => n['Relation Name'] === 'transfers');
        // By batch: one of the two indexes led by batch_id (the covering one, or (batch_id, state)), never each transfer's primary key.
        expect({ why, indexes: onTransfers.map((n) => n['Index Name']) }).toEqual({
          why,
          indexes: [expect.stringMatching(/^(transfers_batch_items_idx|transfers_batch)$/)],
        });
        // The batch's own items by the primary key, never a scan of every batch's items.
        const onItems = all.filter((n) => n['Relation Name'] === 'batch_items');
        expect({ why, items: onItems.map((n) => n['Node Type']) }).toEqual({
          why,
          items: [expect.stringMatching(/^(Index Scan|Index Only Scan|Bitmap Heap Scan)$/)],
        });
      }
    } finally {
      await client.end();
    }
  });
});
