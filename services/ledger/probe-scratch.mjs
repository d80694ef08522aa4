import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Database, createLogger } from '@wallet/platform';
import { ledgerMigrations } from './dist/persistence/migrations/index.js';
import { postingStatement } from './dist/persistence/posting-statement.js';
import { reservePosting } from './dist/domain/postings.js';
const admin = 'postgresql://postgres@127.0.0.1:5432/postgres';
const name = `ledger_probe_${process.pid}`;
const c0 = new pg.Client({ connectionString: admin }); await c0.connect(); await c0.query(`create database ${name}`); await c0.end();
const url = `postgresql://postgres@127.0.0.1:5432/${name}`;
const db = await Database.open({ url, schema: 'ledger', migrations: ledgerMigrations, logger: createLogger('x', 'silent') });
await db.migrate();
const co = randomUUID();
await db.query(`insert into ledger.wallets (company_id, rail, available_cents) values (?, 'BREB', 1000000000)`, [co]);
function write() {
  const d = reservePosting(co, 'BREB', { amount: 100n, fee: 0n, iva: 0n });
  const pid = randomUUID(), hid = randomUUID(), mid = randomUUID();
  return postingStatement({ posting: { id: pid, kind: 'reserve', idempotencyKey: randomUUID(), requestHash: 'x'.repeat(64), companyId: co, rail: 'BREB', movementId: mid, holdId: hid },
    entries: d.entries, wallet: d.wallet,
    newHold: { id: hid, companyId: co, rail: 'BREB', amount: 100n, fee: 0n, iva: 0n, total: 100n, feeOperation: 'BREB_OUTFLOW', movementId: mid },
    newMovement: { id: mid, companyId: co, type: 'TRANSFER_OUT', rail: 'BREB', walletRail: 'BREB', status: 'PENDING', amount: 100n, totalFee: 0n, ivaAmount: 0n, netAmount: 100n, reference: null, apiKeyId: null, details: {}, completed: false },
    event: { id: randomUUID(), subject: 'ledger.reserved', payload: { a: 'x'.repeat(600) } } });
}
const platform = db.orm.em.getPlatform();
for (let i = 0; i < 50; i++) { const { sql, params } = write(); await db.query(sql, params); }
const { sql, params } = write();
const text = platform.formatQuery(sql, params);
const c = new pg.Client({ connectionString: url }); await c.connect();
const r = await c.query(`explain (analyze, buffers, summary) ${text}`);
console.log(r.rows.map((x) => x['QUERY PLAN']).filter((l) => /Planning|Execution/.test(l)).join('\n'));
// raw timing: pg simple query (no MikroORM) vs MikroORM execute
let t = performance.now();
for (let i = 0; i < 500; i++) { const w = write(); await c.query(platform.formatQuery(w.sql, w.params)); }
console.log('raw pg, inlined text, serial: ms/op', ((performance.now() - t) / 500).toFixed(3));
t = performance.now();
for (let i = 0; i < 500; i++) { const w = write(); await db.query(w.sql, w.params); }
console.log('mikro-orm execute, serial: ms/op', ((performance.now() - t) / 500).toFixed(3));
// prepared: $n params
const toDollar = (s) => { let i = 0; return s.replace(/\?/g, () => `$${++i}`); };
t = performance.now();
for (let i = 0; i < 500; i++) { const w = write(); await c.query({ name: 'reserve', text: toDollar(w.sql), values: w.params }); }
console.log('raw pg prepared, serial: ms/op', ((performance.now() - t) / 500).toFixed(3));
t = performance.now();
for (let i = 0; i < 500; i++) { await c.query('select 1'); }
console.log('select 1 round trip: ms/op', ((performance.now() - t) / 500).toFixed(3));
await c.end(); await db.close();
const c1 = new pg.Client({ connectionString: admin }); await c1.connect(); await c1.query(`drop database ${name} with (force)`); await c1.end();
