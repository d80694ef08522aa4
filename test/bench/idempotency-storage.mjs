// Storage and purge cost of `gateway.idempotency_keys` with 30-day keys (issue 43), in a scratch database of its
// own (created here, dropped at the end), on the machine's PostgreSQL (loopback only):
//   1. the gateway's migrations, as `npm run migrate -w @wallet/gateway` runs them;
//   2. 1,000 keys written by the real IdempotencyKeyStore (claim, then complete: the answer sealed with SecretBox,
//      the request stored as its keyed fingerprint), as a send through the gateway writes them;
//   3. 1,000,000 live keys (BENCH_IDEM_ROWS) like those (same answer shape, same sealing and fingerprint), created
//      over the last 30 days by 1,000 companies: table, TOAST and index sizes → MiB per million keys;
//   4. as many keys again, already expired, then the purge as every gateway replica runs it
//      (IdempotencyKeyStore.purgeExpired, batches of PURGE_BATCH): total time and time per batch, while a
//      second connection keeps claiming and completing fresh keys and taking over expired ones (a send's
//      statements): their latency beside the same loop with no purge running;
//   5. the purge with nothing to delete on the live million (what each 10-minute run costs when idle), before and
//      after a vacuum.
// Usage (after `npx turbo run build`): node test/bench/idempotency-storage.mjs
//   BENCH_IDEM_ROWS (1000000)   keys of steps 3 and 4
//   TEST_DATABASE_ADMIN_URL     the server (default postgresql://postgres@127.0.0.1:5432/postgres)
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createLogger, Database, SecretBox } from '@wallet/platform';
import { createTestDatabase } from '@wallet/platform/testing';
import { IdempotencyKeyStore, PURGE_BATCH } from '../../gateway/dist/persistence/idempotency-key.store.js';
import { gatewayMigrations } from '../../gateway/dist/persistence/migrations/index.js';
import { idempotencyRequestHash, requestFingerprinter } from '../../gateway/dist/http/idempotency-key.js';
import { toJsonText } from '../../gateway/dist/http/json-text.js';
import { IDEMPOTENCY_KEY_TTL_DEFAULT_SECONDS } from '../../gateway/dist/config.js';

const ROWS = Number(process.env.BENCH_IDEM_ROWS ?? 1_000_000);
const CHUNK = 5_000;
const TTL = IDEMPOTENCY_KEY_TTL_DEFAULT_SECONDS;
const ENCRYPTION_KEY = 'bench-gateway-encryption-key-0123456789';
const box = new SecretBox(ENCRYPTION_KEY);
const fingerprint = requestFingerprinter(ENCRYPTION_KEY);
const companies = Array.from({ length: 1_000 }, () => randomUUID());
const NAMES = ['Ana María Pérez Gómez', 'Juan Carlos Rodríguez', 'Distribuidora El Sol S.A.S.', 'Luisa Fernanda Ortiz Valencia', 'Pedro Díaz'];

/** A send and its 201 answer (the shape of docs' recorded example of POST /transfers/send), varied per key. */
function send(i) {
  const amount = 1_000 + ((i * 7919) % 5_000_000);
  const fee = i % 3 === 0 ? 0 : 350;
  const iva = i % 3 === 0 ? 0 : 67;
  const request = {
    amount,
    destination: { brebKey: { type: 'PHONE', value: `3${String(100_000_000 + (i % 899_999_999)).padStart(9, '0')}` } },
    targetName: NAMES[i % NAMES.length],
    targetDocument: String(1_000_000_000 + i),
    description: 'Pago proveedor',
    reference: `INV-${2026_000_000 + i}`,
  };
  const answer = {
    id: randomUUID(),
    status: 'PENDING',
    amount,
    totalFee: fee,
    ivaAmount: iva,
    netAmount: amount,
    currency: 'COP',
    rail: i % 4 === 0 ? 'ACH' : 'BREB',
    targetName: request.targetName,
    targetDocument: request.targetDocument,
    reference: request.reference,
    createdAt: new Date().toISOString(),
    policyDecision: { policyVersion: 0, ruleId: null, action: 'ALLOW', approvals: 0, roles: [] },
  };
  const requestHash = fingerprint(idempotencyRequestHash({ method: 'POST', routeTemplate: '/transfers/send', params: {}, body: request }));
  return { requestHash, body: toJsonText(answer) };
}

const mib = (bytes) => Number(bytes) / 1024 / 1024;
const fmt = (x, d = 1) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
function pct(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: pct(s, 50), p99: pct(s, 99), max: s.at(-1) ?? 0 };
};
const showStats = (s) => `n=${s.n} p50 ${fmt(s.p50, 2)} ms, p99 ${fmt(s.p99, 2)} ms, max ${fmt(s.max, 2)} ms`;

/**
 * Inserts `count` DONE keys the way the store leaves them (claim + complete) in one statement per chunk; each key's
 * created_at is `ageSeconds(i)` ago, its lock 60 s after, its expiry TTL after.
 */
async function insertKeys(client, count, ageSeconds, keyPrefix) {
  for (let start = 0; start < count; start += CHUNK) {
    const n = Math.min(CHUNK, count - start);
    const cols = { company: [], key: [], hash: [], claim: [], body: [], age: [] };
    for (let j = 0; j < n; j++) {
      const i = start + j;
      const s = send(i);
      cols.company.push(companies[i % companies.length]);
      cols.key.push(`${keyPrefix}${randomUUID()}`);
      cols.hash.push(s.requestHash);
      cols.claim.push(randomUUID());
      cols.body.push(box.seal(s.body));
      cols.age.push(ageSeconds(i));
    }
    await client.query(
      `insert into gateway.idempotency_keys
         (company_id, key, method, path, request_hash, state, claim_id, status_code, response_body, response_headers, created_at, locked_until, expires_at)
       select c, k, 'POST', '/transfers/send', h, 'DONE', cl, 201, b, '{}'::jsonb, t, t + interval '60 seconds', t + make_interval(secs => $7)
         from (select c, k, h, cl, b, now() - make_interval(secs => a) as t
                 from unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::text[], $6::float8[]) as u(c, k, h, cl, b, a)) x`,
      [cols.company, cols.key, cols.hash, cols.claim, cols.body, cols.age, TTL],
    );
  }
}

async function sizes(client) {
  const [r] = (
    await client.query(`
      select pg_relation_size('gateway.idempotency_keys') as heap,
             coalesce(pg_total_relation_size(c.reltoastrelid), 0) as toast,
             pg_relation_size('gateway.idempotency_keys_pkey') as pkey,
             pg_relation_size('gateway.idempotency_keys_expires_idx') as expires_idx,
             pg_indexes_size('gateway.idempotency_keys') as indexes,
             pg_total_relation_size('gateway.idempotency_keys') as total,
             (select count(*) from gateway.idempotency_keys) as rows
        from pg_class c where c.oid = 'gateway.idempotency_keys'::regclass`)
  ).rows;
  return r;
}

/** A send's statements on the idempotency table: claim a fresh key, then store its answer. */
async function claimAndComplete(store, companyId, key) {
  const s = send(Math.floor(Math.random() * 1e6));
  const claimId = randomUUID();
  const c = { companyId, key, method: 'POST', path: '/transfers/send', requestHash: s.requestHash, claimId, lockSeconds: 60, ttlSeconds: TTL };
  const t0 = performance.now();
  const claimed = await store.claim(c);
  if (!claimed) throw new Error(`claim of ${key} refused`);
  await store.complete(companyId, key, claimId, { status: 201, body: s.body, headers: {} });
  return performance.now() - t0;
}

/** Claims and completes until `until()` (fresh keys, and every `takeoverEvery`-th an expired key taken over). */
async function sendLoop(store, until, expiredKeys, takeoverEvery = 10) {
  const fresh = [];
  const takeover = [];
  for (let i = 0; !until(); i++) {
    const old = i % takeoverEvery === takeoverEvery - 1 ? expiredKeys.pop() : undefined;
    if (old) takeover.push(await claimAndComplete(store, old.company_id, old.key));
    else fresh.push(await claimAndComplete(store, companies[i % companies.length], `fresh-${randomUUID()}`));
  }
  return { fresh: stats(fresh), takeover: stats(takeover) };
}

const log = createLogger('idempotency-storage', 'silent');
const scratch = await createTestDatabase('idem_bench');
console.log(`scratch database ${scratch.name}; ${ROWS.toLocaleString('en-US')} keys; TTL ${TTL} s; purge batch ${PURGE_BATCH}`);
let db;
const client = new pg.Client({ connectionString: scratch.url });
try {
  db = await Database.open({ url: scratch.url, schema: 'gateway', migrations: gatewayMigrations, logger: log });
  const applied = await db.migrate();
  console.log(`migrations: ${applied.length} applied (${applied.at(-1)})`);
  await client.connect();
  const store = new IdempotencyKeyStore(db, box);

  // 2. The real store's rows, to check that the bulk rows are the same size.
  for (let i = 0; i < 1_000; i++) await claimAndComplete(store, companies[i % companies.length], randomUUID());
  const real = (
    await client.query(
      `select avg(pg_column_size(response_body))::int as body, avg(pg_column_size(request_hash))::int as hash, avg(pg_column_size(k.*))::int as row
         from gateway.idempotency_keys k`,
    )
  ).rows[0];
  await client.query('truncate gateway.idempotency_keys');

  // 3. A month of live keys.
  let t0 = performance.now();
  await insertKeys(client, ROWS, (i) => (i / ROWS) * (TTL - 3600), '');
  const insertS = (performance.now() - t0) / 1000;
  await client.query('vacuum analyze gateway.idempotency_keys');
  const bulk = (
    await client.query(
      `select avg(pg_column_size(response_body))::int as body, avg(pg_column_size(request_hash))::int as hash, avg(pg_column_size(k.*))::int as row
         from (select * from gateway.idempotency_keys limit 10000) k`,
    )
  ).rows[0];
  const live = await sizes(client);
  const perMillion = (b) => mib(b) * (1_000_000 / Number(live.rows));
  console.log(
    `\nrow (bytes, pg_column_size avg): real store ${real.row} (sealed answer ${real.body}, fingerprint ${real.hash}); bulk ${bulk.row} (${bulk.body}, ${bulk.hash})`,
  );
  console.log(`inserted ${Number(live.rows).toLocaleString('en-US')} live keys in ${fmt(insertS)} s`);
  console.log('size of the table with that many live keys (MiB, and MiB per million keys):');
  for (const [name, b] of [
    ['heap', live.heap],
    ['TOAST', live.toast],
    ['primary key (company_id, key)', live.pkey],
    ['index on expires_at', live.expires_idx],
    ['total (pg_total_relation_size)', live.total],
  ]) {
    console.log(`  ${name.padEnd(32)} ${fmt(mib(b)).padStart(9)}   ${fmt(perMillion(b)).padStart(9)} per million`);
  }

  // 4. A backlog of expired keys, purged while sends go on.
  t0 = performance.now();
  await insertKeys(client, ROWS, (i) => TTL + 60 + (i / ROWS) * TTL, 'old-');
  console.log(`\ninserted ${ROWS.toLocaleString('en-US')} expired keys in ${fmt((performance.now() - t0) / 1000)} s`);
  await client.query('vacuum analyze gateway.idempotency_keys');
  const expiredKeys = (await client.query(`select company_id, key from gateway.idempotency_keys where key like 'old-%' order by random() limit 2000`)).rows;
  const plan = (
    await client.query(`explain delete from gateway.idempotency_keys
       where ctid = any(array(select ctid from gateway.idempotency_keys
         where expires_at <= now() and expires_at >= coalesce(null::timestamptz, '-infinity') and (state <> 'IN_FLIGHT' or locked_until <= now())
         order by expires_at limit ${PURGE_BATCH} for update skip locked))`)
  ).rows
    .map((r) => r['QUERY PLAN'])
    .join('\n');
  console.log(`plan of one purge batch:\n${plan}`);

  // The same send loop alone for a baseline (its own expired keys to take over), then beside the purge.
  const baselineUntil = performance.now() + 5_000;
  const baseline = await sendLoop(store, () => performance.now() > baselineUntil, expiredKeys);

  const batches = [];
  const timed = {
    prepared: async (sql, params) => {
      const s = performance.now();
      const r = await db.prepared(sql, params);
      batches.push(performance.now() - s);
      return r;
    },
  };
  const purger = new IdempotencyKeyStore(timed, box);
  let purging = true;
  t0 = performance.now();
  const purge = purger.purgeExpired().finally(() => (purging = false));
  const during = await sendLoop(store, () => !purging, expiredKeys);
  const deleted = await purge;
  const purgeS = (performance.now() - t0) / 1000;
  const left = (await client.query(`select count(*)::int as n, count(*) filter (where expires_at <= now())::int as expired from gateway.idempotency_keys`))
    .rows[0];
  console.log(
    `\npurge: ${deleted.toLocaleString('en-US')} rows in ${fmt(purgeS)} s (${fmt(deleted / purgeS, 0)} rows/s), ${batches.length} batches of ≤ ${PURGE_BATCH}: ${showStats(stats(batches))}`,
  );
  console.log(`left: ${left.n.toLocaleString('en-US')} rows, ${left.expired} expired`);
  console.log(`a send's claim + complete, fresh key:         alone ${showStats(baseline.fresh)}; during the purge ${showStats(during.fresh)}`);
  console.log(`a send's claim + complete, expired key taken: alone ${showStats(baseline.takeover)}; during the purge ${showStats(during.takeover)}`);

  // 5. The purge with nothing expired (each 10-minute run in steady state is mostly this, plus its slice): once right
  // after the backlog (its first index scan walks over the million entries just deleted, and marks them dead), then
  // after a vacuum (what autovacuum does in production; the machine's server runs with autovacuum off).
  let s = performance.now();
  await store.purgeExpired();
  const firstIdle = performance.now() - s;
  await client.query('vacuum gateway.idempotency_keys');
  const idle = [];
  for (let i = 0; i < 20; i++) {
    s = performance.now();
    await store.purgeExpired();
    idle.push(performance.now() - s);
  }
  console.log(
    `purge with nothing to delete on ${left.n.toLocaleString('en-US')} live keys: first after the backlog ${fmt(firstIdle, 2)} ms; after a vacuum ${showStats(stats(idle))}`,
  );
} finally {
  await client.end().catch(() => undefined);
  await db?.close();
  await scratch.drop();
  console.log(`\ndropped ${scratch.name}`);
}
