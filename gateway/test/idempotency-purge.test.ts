import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createLogger, Database, SecretBox } from '@wallet/platform';
import { createTestDatabase, eventually, type TestDatabase } from '@wallet/platform/testing';
import { IDEMPOTENCY_KEY_TTL_DEFAULT_SECONDS } from '../src/config.js';
import { IdempotencyKeyStore, type IdempotencyClaim } from '../src/persistence/idempotency-key.store.js';
import { gatewayMigrations } from '../src/persistence/migrations/index.js';

/**
 * The purge of expired `Idempotency-Key` rows (IdempotencyKeyStore.purgeExpired) beside the claims of
 * sends and beside the purge of other replicas, on real Postgres. Every session of this database
 * has `lock_timeout` = 2 s: a purge that waited on a row lock fails the test instead of hanging it.
 * Sessions held open in a transaction (a claim, another replica's batch) run the store's own
 * statements on a client of their own.
 */
const LOCK_TIMEOUT_MS = 2_000;
const box = new SecretBox('k'.repeat(32));
let tdb: TestDatabase;
let db: Database;
let store: IdempotencyKeyStore;
const open: pg.Client[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase('gw-idem-purge');
  const admin = new pg.Client({ connectionString: tdb.url });
  await admin.connect();
  await admin.query(`alter database "${tdb.name}" set lock_timeout = '${LOCK_TIMEOUT_MS}ms'`);
  await admin.query(`alter database "${tdb.name}" set statement_timeout = '20s'`);
  await admin.end();
  db = await Database.open({ url: tdb.url, schema: 'gateway', migrations: gatewayMigrations, logger: createLogger('idem-purge-test', 'silent'), poolMax: 4 });
  await db.migrate();
  store = new IdempotencyKeyStore(db, box);
}, 60_000);
afterEach(async () => {
  for (const c of open.splice(0)) await c.end().catch(() => undefined);
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

/** A session with an open transaction, and the store's statements run in it. */
async function inTransaction(): Promise<{ client: pg.Client; store: IdempotencyKeyStore }> {
  const client = new pg.Client({ connectionString: tdb.url });
  await client.connect();
  open.push(client);
  await client.query('begin');
  const onClient = { prepared: async (sql: string, params: readonly unknown[] = []) => (await client.query(sql, [...params])).rows };
  return { client, store: new IdempotencyKeyStore(onClient as unknown as Database, box) };
}

/** A row as the store leaves it; `age` and `expiresIn` are SQL intervals from now. */
async function row(
  companyId: string,
  key: string,
  state: 'DONE' | 'IN_FLIGHT' | 'UNKNOWN',
  expiresIn: string,
  opts: { claimId?: string; lockedIn?: string } = {},
) {
  await db.prepared(
    `insert into gateway.idempotency_keys (company_id, key, method, path, request_hash, state, claim_id, status_code, response_body, created_at, locked_until, expires_at)
     values ($1, $2, 'POST', '/transfers/send', 'hm1:old', $3, $4, case when $3 = 'DONE' then 201 end, case when $3 = 'DONE' then $5 end,
             now() + $6::interval - make_interval(secs => $8), now() + $7::interval, now() + $6::interval)`,
    [
      companyId,
      key,
      state,
      opts.claimId ?? randomUUID(),
      box.seal('{"id":"t-old"}'),
      expiresIn,
      opts.lockedIn ?? '-1 day',
      IDEMPOTENCY_KEY_TTL_DEFAULT_SECONDS,
    ],
  );
}

const keysOf = async (companyId: string) =>
  (await db.prepared<{ key: string }>('select key from gateway.idempotency_keys where company_id = $1 order by key', [companyId])).map((r) => r.key);

const claimOf = (companyId: string, key: string, claimId = randomUUID()): IdempotencyClaim => ({
  companyId,
  key,
  method: 'POST',
  path: '/transfers/send',
  requestHash: 'hm1:new',
  claimId,
  lockSeconds: 60,
  ttlSeconds: IDEMPOTENCY_KEY_TTL_DEFAULT_SECONDS,
});

/** Times a purge: it must end well inside the lock timeout (a wait on a row would fail it with "lock timeout"). */
async function promptly<T>(work: Promise<T>): Promise<T> {
  const started = performance.now();
  const out = await work;
  expect(performance.now() - started).toBeLessThan(LOCK_TIMEOUT_MS);
  return out;
}

describe('idempotency purge', () => {
  it('skips a key being claimed and the rows another replica holds, deletes every other expired row at once, never a live one', async () => {
    const co = randomUUID();
    for (let i = 1; i <= 20; i++) await row(co, `old-${String(i).padStart(2, '0')}`, i % 5 === 0 ? 'UNKNOWN' : 'DONE', `-${i} minutes`);
    await row(co, 'dead-claim', 'IN_FLIGHT', '-1 minute', { lockedIn: '-1 second' });
    await row(co, 'taken', 'DONE', '-30 minutes');
    await row(co, 'held', 'DONE', '-40 minutes');
    await row(co, 'live', 'DONE', '1 day');
    const flightClaim = randomUUID();
    await row(co, 'live-flight', 'IN_FLIGHT', '29 days', { claimId: flightClaim, lockedIn: '1 minute' });

    // A send claims the expired key `taken` (its insert … on conflict takes the row over) and has not committed.
    const send = await inTransaction();
    expect(await send.store.claim(claimOf(co, 'taken'))).toBe(true);
    // Another replica's purge batch holds `held`; a request is storing the answer of the live `live-flight`.
    const other = await inTransaction();
    await other.client.query(`select 1 from gateway.idempotency_keys where company_id = $1 and key = 'held' for update`, [co]);
    expect(await other.store.complete(co, 'live-flight', flightClaim, { status: 201, body: '{"id":"t-1"}', headers: {} })).toBe(true);

    // Small batches, so that the purge goes past the held rows over several statements.
    expect(await promptly(store.purgeExpired({ batch: 3 }))).toBe(21);
    expect(await keysOf(co)).toEqual(['held', 'live', 'live-flight', 'taken']);

    // The claim commits: `taken` is a fresh key for 30 days. The other replica ends without deleting `held`.
    await send.client.query('commit');
    await other.client.query('rollback');
    const taken = (
      await db.prepared<{ state: string; ttl: number; left: number }>(
        `select state, extract(epoch from expires_at - created_at)::int as ttl, extract(epoch from expires_at - now())::int as left
           from gateway.idempotency_keys where company_id = $1 and key = 'taken'`,
        [co],
      )
    )[0];
    expect(taken).toMatchObject({ state: 'IN_FLIGHT', ttl: IDEMPOTENCY_KEY_TTL_DEFAULT_SECONDS });
    expect(taken!.left).toBeGreaterThan(IDEMPOTENCY_KEY_TTL_DEFAULT_SECONDS - 60);
    expect(await promptly(store.purgeExpired())).toBe(1);
    expect(await keysOf(co)).toEqual(['live', 'live-flight', 'taken']);
  });

  it('two replicas purge at once without waiting on each other; a claim of a key being deleted waits for that one batch, then gets it fresh', async () => {
    const co = randomUUID();
    for (let i = 1; i <= 10; i++) await row(co, `e-${String(i).padStart(2, '0')}`, 'DONE', `-${100 - i} minutes`);

    // Replica A: one batch (the four oldest) deleted and not yet committed.
    const a = await inTransaction();
    expect(await a.store.purgeExpiredBatch(4)).toMatchObject({ deleted: 4 });
    // Replica B meanwhile: the rest, at once.
    expect(await promptly(store.purgeExpired({ batch: 4 }))).toBe(6);
    expect(await keysOf(co)).toEqual(['e-01', 'e-02', 'e-03', 'e-04']);

    // A send claims e-01 while A's batch holds it: it waits for that batch…
    const claim = store.claim(claimOf(co, 'e-01'));
    await eventually(
      async () =>
        (
          await db.prepared<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock' and query like 'insert into gateway.idempotency_keys%'`,
          )
        )[0]!.n === 1,
      LOCK_TIMEOUT_MS,
      20,
    );
    // …and once it commits, the key is its own, fresh.
    await a.client.query('commit');
    expect(await claim).toBe(true);
    const fresh = await store.findLive(co, 'e-01');
    expect(fresh).toMatchObject({ state: 'IN_FLIGHT', requestHash: 'hm1:new', statusCode: null });
    expect(await keysOf(co)).toEqual(['e-01']);
    expect(await store.purgeExpired()).toBe(0);
  });
});
