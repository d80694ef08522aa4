import { Database, createLogger } from '@wallet/platform';
import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { Migration0001ReconciliationInitial } from '../src/persistence/migrations/0001-reconciliation-initial.js';
import { reconciliationMigrations } from '../src/persistence/migrations/index.js';
import { RECONCILIATION_SCHEMA } from '../src/persistence/reconciliation.store.js';

/** Migration 0002 on a database that 0001 left with data: the backfills. */
describe('migration 0002-reconciliation-service on data of 0001', () => {
  let tdb: TestDatabase;
  afterAll(async () => {
    await tdb?.drop();
  });

  it('runs without an outcome become FAILED (interrupted); statuses, exception ids and the rails BREB|ACH|PSE are backfilled; one RUNNING run per day', async () => {
    tdb = await createTestDatabase('recon_mig');
    const log = createLogger('recon-mig-test', 'silent');
    const old = await Database.open({ url: tdb.url, schema: RECONCILIATION_SCHEMA, migrations: [Migration0001ReconciliationInitial], logger: log, poolMax: 2 });
    expect(await old.migrate()).toEqual(['0001-reconciliation-initial']);
    await old.query(`insert into reconciliation.runs (id, rail, date, outcome, finished_at) values
      ('run_a', 'breb', '2025-03-14', 'RECONCILED', now()), ('run_b', 'pse', '2025-03-14', null, null), ('run_c', 'ach', '2025-03-14', 'REJECTED', now())`);
    await old.query(`insert into reconciliation.breaks (break_key, run_id, last_seen_run_id, kind, rail, date) values
      ('breb-inbound:2025-03-14:missing_in_our_books:x', 'run_a', 'run_a', 'missing_in_our_books', 'breb-inbound', '2025-03-14')`);
    for (const [id, rail, key] of [
      ['exc_1', 'breb-inbound', 'breb-inbound:2025-03-14:missing_in_our_books:x'],
      ['exc_2', 'pse', 'k2'],
      ['exc_3', 'ach', 'k3'],
      ['exc_4', 'breb', 'k4'],
    ]) {
      await old.query(
        `insert into reconciliation.money_exceptions (id, kind, company_id, rail, resource_id, ours, theirs) values (?, 'MISSING_IN_OUR_BOOKS', '', ?, ?, '{}', '{}')`,
        [id, rail, key],
      );
    }
    await old.close();

    const db = await Database.open({ url: tdb.url, schema: RECONCILIATION_SCHEMA, migrations: reconciliationMigrations, logger: log, poolMax: 2 });
    try {
      expect(await db.migrate()).toEqual(['0002-reconciliation-service', '0003-one-case-per-movement']);
      // 0003: every run covers its day up to its start at most (the cut-off, `covers_until`).
      expect(await db.query(`select count(*)::int as n from reconciliation.runs where covers_until is null or covers_until > started_at`)).toEqual([{ n: 0 }]);
      expect(
        await db.query(`select id, status, outcome, detail, trigger, requested_by, finished_at is not null as finished from reconciliation.runs order by id`),
      ).toEqual([
        { id: 'run_a', status: 'RECONCILED', outcome: 'RECONCILED', detail: null, trigger: 'ON_DEMAND', requested_by: 'admin', finished: true },
        { id: 'run_b', status: 'FAILED', outcome: 'FAILED', detail: 'interrupted', trigger: 'ON_DEMAND', requested_by: 'admin', finished: true },
        { id: 'run_c', status: 'REJECTED', outcome: 'REJECTED', detail: null, trigger: 'ON_DEMAND', requested_by: 'admin', finished: true },
      ]);
      expect(await db.query(`select exception_id, difference_cents::int as d, status, resolution from reconciliation.breaks`)).toEqual([
        { exception_id: 'exc_1', d: 0, status: 'OPEN', resolution: null },
      ]);
      expect(await db.query(`select id, rail from reconciliation.money_exceptions order by id`)).toEqual([
        { id: 'exc_1', rail: 'BREB' },
        { id: 'exc_2', rail: 'PSE' },
        { id: 'exc_3', rail: 'ACH' },
        { id: 'exc_4', rail: 'BREB' },
      ]);
      await db.query(`insert into reconciliation.runs (id, rail, date) values ('run_d', 'breb', '2025-03-15')`);
      await expect(db.query(`insert into reconciliation.runs (id, rail, date) values ('run_e', 'breb', '2025-03-15')`)).rejects.toThrow(/runs_one_running_uq/);
      expect(await db.query(`select count(*)::int as n from reconciliation.outbox`)).toEqual([{ n: 0 }]);
    } finally {
      await db.close();
    }
  });
});
