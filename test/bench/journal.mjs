// The tamper-evident journal at scale (docs/journal.md, docs/benchmarks.md): in a scratch database,
// N postings (default 1,000,000; JOURNAL_BENCH_POSTINGS) of two entries each are written as the
// ledger's statements leave them (posting, entries, journal queue row), then sealed by the ledger's
// own sealer and verified from genesis by its own verifier (the code `npm run ledger:verify` runs).
// Prints the sealing rate, the verification time and the journal's size; drops the database.
//   node test/bench/journal.mjs            (after `npx turbo run build`)
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const imp = (p) => import(pathToFileURL(join(root, p)).href);
const { Database, createLogger } = await imp('services/platform/dist/index.js');
const { ledgerMigrations } = await imp('services/ledger/dist/persistence/migrations/index.js');
const { JournalStore } = await imp('services/ledger/dist/persistence/journal.store.js');
const { JournalSealer, verifyJournal } = await imp('services/ledger/dist/app/journal.js');

const N = Number(process.env.JOURNAL_BENCH_POSTINGS ?? 1_000_000);
const base = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const name = `journal_bench_${process.pid}`;
const url = (db) => {
  const u = new URL(base);
  u.pathname = `/${db}`;
  return u.toString();
};
const admin = new pg.Client({ connectionString: base });
await admin.connect();
await admin.query(`create database ${name}`);
const log = createLogger('journal-bench', 'warn');
let db;
try {
  db = await Database.open({ url: url(name), schema: 'ledger', migrations: ledgerMigrations, logger: log, poolMax: 4 });
  await db.migrate();
  const company = randomUUID();
  let t = performance.now();
  // in chunks of 100,000: postings with their two entries and their queue rows, as the statements write them
  for (let done = 0; done < N; done += 100_000) {
    const n = Math.min(100_000, N - done);
    await db.query(
      `with s as (select gen_random_uuid() as id, g from generate_series(1, ?::int) g),
        p as (insert into ledger.postings (id, idempotency_key, request_hash, kind, company_id, rail, created_at)
              select id, 'bench-' || ?::int + g, 'h', 'credit', ?, 'BREB', now() - interval '1 day' + (?::int + g) * interval '1 microsecond' from s returning id),
        e as (insert into ledger.entries (posting_id, seq, account, amount)
              select id, 1, 'funding', -100 from s union all select id, 2, ?, 100 from s returning 1)
      insert into ledger.journal_queue (posting_id) select id from s order by g`,
      [n, done, company, done, `wallet_available:${company}:BREB`],
    );
  }
  await db.query('analyze');
  const seeded = performance.now() - t;
  const sealer = new JournalSealer(new JournalStore(db), { newId: randomUUID, now: () => new Date() }, { intervalMs: 3_600_000 }, log);
  t = performance.now();
  const { sealed } = await sealer.drain();
  const sealMs = performance.now() - t;
  t = performance.now();
  const r = await verifyJournal(new JournalStore(db));
  const verifyMs = performance.now() - t;
  const [size] = await db.query(
    `select pg_total_relation_size('ledger.journal') as journal, pg_total_relation_size('ledger.postings') as postings, pg_total_relation_size('ledger.entries') as entries`,
  );
  const mb = (b) => (Number(b) / 1048576).toFixed(1);
  const out = {
    postings: N,
    seededMs: Math.round(seeded),
    sealed,
    sealMs: Math.round(sealMs),
    sealedPerSecond: Math.round(sealed / (sealMs / 1000)),
    sealUsPerPosting: Number(((sealMs * 1000) / sealed).toFixed(1)),
    verifyMs: Math.round(verifyMs),
    verifiedPerSecond: Math.round(r.verified / (verifyMs / 1000)),
    ok: r.ok,
    sizesMB: { journal: mb(size.journal), postings: mb(size.postings), entries: mb(size.entries) },
    journalBytesPerPosting: Math.round(Number(size.journal) / N),
  };
  console.log(JSON.stringify(out, null, 2));
  if (!r.ok || sealed !== N) process.exitCode = 1;
} finally {
  await db?.close();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
}
