import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import pg from 'pg';
import { Database, createLogger, type PreparedTx } from '@wallet/platform';
import { Choreography, createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { DepositCounter } from '../../src/app/deposit-counter.js';
import { depositMigrations } from '../../src/persistence/migrations/index.js';
import { SqlDepositCounts } from '../../src/persistence/deposit-counts.js';
import { SqlDepositStore } from '../../src/persistence/deposit.store.js';
import type { DepositState } from '../../src/domain/deposit.js';

/**
 * The deposit counts (docs/deposit-counts.md): the trigger's deltas for every writer's statement shape,
 * the fold, the backfill of a history written before the counts existed (resumable, never split, one
 * replica at a time), the listing's totals read from them, and the invariant (deposits = counts + deltas
 * per company, rail and state) under every interleaving fast-check's scheduler explores of writers'
 * open transactions, folds and two replicas' backfills. Real Postgres, the service's migrations.
 */
const RUNS = Number(process.env.INTERLEAVING_RUNS ?? 40);
const log = createLogger('deposit-counts-test', 'silent');

let tdb: TestDatabase;
let db: Database;
let admin: pg.Client;

beforeAll(async () => {
  tdb = await createTestDatabase('wt_dcount');
  db = await Database.open({ url: tdb.url, schema: 'pse_deposit', migrations: depositMigrations, logger: log, poolMax: 6 });
  await db.migrate();
  admin = new pg.Client({ connectionString: tdb.url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await db?.close();
  await tdb?.drop();
});

const depositId = () => `dep_${randomBytes(12).toString('hex')}`;
const STEP: Partial<Record<DepositState, string>> = { CREDITING: 'CREDIT', REVERSING: 'REVERSE' };

/** One PSE deposit row as the store's writers leave it (only the columns the counts read vary). */
function insertSql(rows: Array<{ id?: string; company: string; status: DepositState; createdAt?: string }>): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const tuples = rows.map((r) => {
    values.push(r.id ?? depositId(), r.company, r.status, STEP[r.status] ?? null, randomUUID(), r.createdAt ?? new Date().toISOString());
    const b = values.length - 6;
    return `($${b + 1}, $${b + 2}, 'PSE', $${b + 3}, 1000, 1000, $${b + 4}, $${b + 5}::uuid, now() + interval '1 hour', $${b + 6}::timestamptz)`;
  });
  return {
    text: `insert into pse_deposit.deposits (id, company_id, source, status, amount, net_amount, pending_step, movement_id, expires_at, created_at) values ${tuples.join(', ')}`,
    values,
  };
}

async function withTriggersOff(fn: () => Promise<void>): Promise<void> {
  await admin.query('alter table pse_deposit.deposits disable trigger user');
  try {
    await fn();
  } finally {
    await admin.query('alter table pse_deposit.deposits enable trigger user');
  }
}

/** A history written before the counts existed: its rows have no deltas, and the backfill has not run. */
async function history(rows: Array<{ company: string; status: DepositState }>): Promise<void> {
  await withTriggersOff(async () => {
    if (rows.length > 0) await admin.query(insertSql(rows));
  });
  await admin.query(`update pse_deposit.deposit_count_progress set after_company = null, done_at = null`);
}

async function reset(): Promise<void> {
  await withTriggersOff(async () => {
    await admin.query('delete from pse_deposit.deposits');
  });
  await admin.query('delete from pse_deposit.deposit_counts; delete from pse_deposit.deposit_count_deltas');
  await admin.query(`update pse_deposit.deposit_count_progress set after_company = null, done_at = null`);
}

async function settle(counts: SqlDepositCounts): Promise<void> {
  while ((await counts.fold(3)) > 0);
  while (!(await counts.backfill(2)).done);
}

const live = async (company: string, where = 'true', values: unknown[] = []) =>
  Number(
    (await admin.query<{ n: string }>(`select count(*) as n from pse_deposit.deposits d where company_id = $1 and ${where}`, [company, ...values])).rows[0]!.n,
  );

describe('deposit counts', () => {
  beforeEach(reset);

  it("counts every writer's statement shape: inserts, updates, upserts (both ways), deletes, rollbacks", async () => {
    const counts = new SqlDepositCounts(db);
    await settle(counts);
    await admin.query(
      insertSql([
        { company: 'co_a', status: 'PENDING_CONFIRM' },
        { company: 'co_a', status: 'PENDING_CONFIRM' },
        { company: 'co_b', status: 'FAILED' },
      ]),
    );
    await admin.query(`update pse_deposit.deposits set status = 'CREDITING', pending_step = 'CREDIT' where company_id = 'co_a'`);
    await admin.query(`update pse_deposit.deposits set updated_at = now()`); // no state changed: no delta
    const fixed = depositId();
    const upsert = `${insertSql([{ id: fixed, company: 'co_a', status: 'EXPIRED' }]).text} on conflict (id) do update set status = 'ASSIGNED', pending_step = null`;
    const upsertValues = insertSql([{ id: fixed, company: 'co_a', status: 'EXPIRED' }]).values;
    await admin.query(upsert, upsertValues); // inserted
    await admin.query(upsert, upsertValues); // updated to ASSIGNED
    await admin.query(`delete from pse_deposit.deposits where company_id = 'co_b'`);
    await admin.query('begin');
    await admin.query(insertSql([{ company: 'co_b', status: 'ASSIGNED' }]));
    await admin.query('rollback');

    expect(await counts.mismatches()).toEqual([]);
    expect(await counts.count('co_a', undefined, null)).toBe(3);
    expect(await counts.count('co_a', 'PSE', ['CREDITING'])).toBe(2);
    expect(await counts.count('co_a', 'BREB', null)).toBe(0);
    expect(await counts.count('co_b', undefined, null)).toBe(0);
    const unchanged = Number((await admin.query('select count(*) as n from pse_deposit.deposit_count_deltas')).rows[0].n);
    expect(unchanged).toBeGreaterThan(0);
    // folded: the deltas are gone, the counts hold them, the totals are the same
    while ((await counts.fold(2)) > 0);
    expect(Number((await admin.query('select count(*) as n from pse_deposit.deposit_count_deltas')).rows[0].n)).toBe(0);
    expect(await counts.mismatches()).toEqual([]);
    expect(await counts.count('co_a', undefined, ['ASSIGNED', 'CREDITING'])).toBe(3);
  });

  it('counts the history in batches that never split a company, resumes where it stopped, and only one replica at a time', async () => {
    const rows = ['co_1', 'co_2', 'co_3', 'co_4'].flatMap((company, i) => Array.from({ length: 3 + i }, () => ({ company, status: 'ASSIGNED' as const })));
    await history(rows);
    const counts = new SqlDepositCounts(db);
    expect(await counts.ready()).toBe(false);
    // another replica's step holds the lock: this one does nothing
    const other = new pg.Client({ connectionString: tdb.url });
    await other.connect();
    try {
      await other.query('begin');
      await other.query(`select pg_advisory_xact_lock(hashtext('pse_deposit deposit counts backfill'))`);
      expect(await counts.backfill(4)).toEqual({ locked: false, companies: 0, done: false });
      await other.query('rollback');
    } finally {
      await other.end();
    }
    // 3 + 4 + 5 + 6 deposits, 4 a batch: each step ends at a company's last deposit
    expect(await counts.backfill(4)).toEqual({ locked: true, companies: 2, done: false }); // co_1 (3) and co_2 (the 4th row starts it)
    await admin.query(
      insertSql([
        { company: 'co_1', status: 'FAILED' },
        { company: 'co_4', status: 'FAILED' },
      ]),
    ); // beside the backfill
    expect((await admin.query('select after_company from pse_deposit.deposit_count_progress')).rows[0].after_company).toBe('co_2');
    expect(await counts.backfill(4)).toEqual({ locked: true, companies: 1, done: false }); // co_3's 5
    expect(await counts.backfill(4)).toEqual({ locked: true, companies: 1, done: false }); // co_4's 7
    expect(await counts.ready()).toBe(false);
    expect(await counts.backfill(4)).toEqual({ locked: true, companies: 0, done: true });
    expect(await counts.ready()).toBe(true);
    expect(await counts.mismatches()).toEqual([]);
    expect(await counts.count('co_4', undefined, null)).toBe(7);
    // done: a further step changes nothing
    expect(await counts.backfill(4)).toEqual({ locked: true, companies: 0, done: true });
    expect(await counts.mismatches()).toEqual([]);
  });

  it('a second count of the same companies adds nothing (the counts already hold their history)', async () => {
    await history([
      { company: 'co_1', status: 'ASSIGNED' },
      { company: 'co_2', status: 'EXPIRED' },
    ]);
    const counts = new SqlDepositCounts(db);
    await settle(counts);
    await admin.query(`update pse_deposit.deposit_count_progress set after_company = null, done_at = null`);
    await settle(counts);
    expect(await counts.mismatches()).toEqual([]);
    expect(await counts.count('co_1', undefined, null)).toBe(1);
  });

  it("the listing's page-style totals come from the counts once they are ready, and from the deposits before", async () => {
    const now = Date.now();
    const at = (s: number) => new Date(now - s * 1000).toISOString();
    await history([
      { company: 'co_l', status: 'ASSIGNED' },
      { company: 'co_l', status: 'FAILED' },
    ]);
    await admin.query(
      insertSql([
        { company: 'co_l', status: 'PENDING_CONFIRM', createdAt: at(5) },
        { company: 'co_l', status: 'CREDITING', createdAt: at(4) },
        { company: 'co_l', status: 'EXPIRED', createdAt: at(3) },
        { company: 'co_l', status: 'ASSIGNED', createdAt: at(2) },
      ]),
    );
    // one pending link past its expiry: it shows EXPIRED by the clock, with no write
    await admin.query(`update pse_deposit.deposits set expires_at = now() - interval '1 minute' where status = 'PENDING_CONFIRM'`);
    const counts = new SqlDepositCounts(db);
    const store = new SqlDepositStore(db, undefined, counts);
    const totals = async () => {
      const page = { limit: 1, offset: 0, withTotal: true, now: new Date() };
      const out: Record<string, number | null> = {};
      for (const [name, f] of Object.entries({
        all: {},
        pse: { source: 'PSE' as const },
        breb: { source: 'BREB' as const },
        pending: { status: 'PENDING_CONFIRM' as const },
        expired: { status: 'EXPIRED' as const },
        assigned: { status: 'ASSIGNED' as const },
        failedPse: { status: 'FAILED' as const, source: 'PSE' as const },
      }))
        out[name] = (await store.list('co_l', f, page)).total;
      return out;
    };
    const expected = { all: 6, pse: 6, breb: 0, pending: 1, expired: 2, assigned: 2, failedPse: 1 };
    expect(await totals()).toEqual(expected); // counted from the deposits: the counts are not ready
    await settle(counts);
    expect(await counts.ready()).toBe(true);
    expect(await totals()).toEqual(expected);
    // the counts are what is read now: a count made wrong on purpose shows
    await admin.query(`insert into pse_deposit.deposit_count_deltas (company_id, source, status, n) values ('co_l', 'PSE', 'FAILED', 10)`);
    expect((await totals()).failedPse).toBe(11);
    expect(await counts.mismatches()).toEqual([{ companyId: 'co_l', source: 'PSE', status: 'FAILED', deposits: 1, counted: 11 }]);
  });

  it('the counter folds and counts the history on its runs', async () => {
    await history([{ company: 'co_r', status: 'ASSIGNED' }]);
    await admin.query(insertSql([{ company: 'co_r', status: 'FAILED' }]));
    const counter = new DepositCounter(new SqlDepositCounts(db), { intervalMs: 60_000, foldBatch: 1, backfillBatch: 1 }, log);
    expect(await counter.run()).toEqual({ folded: 1, companies: 1, done: true });
    expect(await counter.run()).toEqual({ folded: 0, companies: 0, done: true });
    expect(await new SqlDepositCounts(db).mismatches()).toEqual([]);
  });

  it('deposits = counts + deltas under interleavings of open writes, folds and two replicas counting the history', async () => {
    type Op = 'insert' | 'insert two' | 'move one' | 'move all' | 'upsert' | 'delete one';
    const STATES: DepositState[] = ['PENDING_CONFIRM', 'CREDITING', 'ASSIGNED', 'FAILED', 'EXPIRED'];
    const companies = ['co_a', 'co_b', 'co_c', 'co_d'];
    let current: Choreography | undefined;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ company: fc.constantFrom(...companies), status: fc.constantFrom(...STATES) }), { maxLength: 8 }),
        fc.array(
          fc.array(
            fc.record({
              op: fc.constantFrom<Op>('insert', 'insert two', 'move one', 'move all', 'upsert', 'delete one'),
              status: fc.constantFrom(...STATES),
              commit: fc.boolean(),
            }),
            {
              minLength: 1,
              maxLength: 3,
            },
          ),
          { minLength: 1, maxLength: 2 },
        ),
        fc.scheduler({ act: Choreography.act(() => current) }),
        async (past, writers, s) => {
          await reset();
          await history(past);
          const c = (current = new Choreography(s));
          // a replica whose backfill stops before its counting statement (the lock held, the snapshot not yet taken)
          const paused = (): Database => {
            const d = Object.create(db) as Database;
            d.preparedTx = <T>(fn: (tx: PreparedTx) => Promise<T>) =>
              db.preparedTx((tx) =>
                fn({
                  ...tx,
                  query: async <R>(sql: string, params?: readonly unknown[]) => {
                    if (/^\s*with live/.test(sql)) await c.point('count the history');
                    return tx.query<R>(sql, params);
                  },
                }),
              );
            return d;
          };
          const clients = await Promise.all(
            writers.map(async () => {
              const cl = new pg.Client({ connectionString: tdb.url });
              await cl.connect();
              return cl;
            }),
          );
          try {
            const actors = [
              // each writer its own company (two writers never wait for each other's row)
              ...writers.map((ops, w) =>
                c.actor(`writer ${w}`, async () => {
                  const cl = clients[w]!;
                  const company = companies[w]!;
                  const fixed = `dep_${'0'.repeat(23)}${w}`;
                  for (const [i, o] of ops.entries()) {
                    await c.point(`begin ${i}`);
                    await cl.query('begin');
                    const step = STEP[o.status] ?? null;
                    if (o.op === 'insert') await cl.query(insertSql([{ company, status: o.status }]));
                    if (o.op === 'insert two')
                      await cl.query(
                        insertSql([
                          { company, status: o.status },
                          { company, status: 'FAILED' },
                        ]),
                      );
                    if (o.op === 'move one')
                      await cl.query(
                        `update pse_deposit.deposits set status = $1, pending_step = $2 where id = (select id from pse_deposit.deposits where company_id = $3 order by id limit 1)`,
                        [o.status, step, company],
                      );
                    if (o.op === 'move all')
                      await cl.query(`update pse_deposit.deposits set status = $1, pending_step = $2 where company_id = $3`, [o.status, step, company]);
                    if (o.op === 'upsert') {
                      const ins = insertSql([{ id: fixed, company, status: o.status }]);
                      await cl.query(`${ins.text} on conflict (id) do update set status = excluded.status, pending_step = excluded.pending_step`, ins.values);
                    }
                    if (o.op === 'delete one')
                      await cl.query(
                        `delete from pse_deposit.deposits where id = (select id from pse_deposit.deposits where company_id = $1 order by id desc limit 1)`,
                        [company],
                      );
                    await c.point(`${o.commit ? 'commit' : 'roll back'} ${i}`);
                    await cl.query(o.commit ? 'commit' : 'rollback');
                  }
                }),
              ),
              ...[1, 2].map((r) =>
                c.actor(`replica ${r} backfill`, async () => {
                  const counts = new SqlDepositCounts(paused());
                  for (let i = 0; i < 3; i++) {
                    await c.point(`step ${i}`);
                    if ((await counts.backfill(2)).done) return;
                  }
                }),
              ),
              c.actor('folder', async () => {
                const counts = new SqlDepositCounts(db);
                for (let i = 0; i < 3; i++) {
                  await c.point(`fold ${i}`);
                  await counts.fold(2);
                }
              }),
            ];
            await s.waitFor(Promise.all(actors));
          } finally {
            current = undefined;
            await Promise.all(clients.map((cl) => cl.end()));
          }
          const counts = new SqlDepositCounts(db);
          await settle(counts);
          const wrong = await counts.mismatches();
          if (wrong.length > 0) throw new Error(`counts differ from the deposits: ${JSON.stringify(wrong)}\n${c.trace.join('\n')}`);
          for (const company of companies) expect(await counts.count(company, undefined, null)).toBe(await live(company));
        },
      ),
      { numRuns: RUNS, ...(process.env.INTERLEAVING_SEED ? { seed: Number(process.env.INTERLEAVING_SEED), path: process.env.INTERLEAVING_PATH } : {}) },
    );
  });
});
