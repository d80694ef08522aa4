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
await db.migrate(); await db.close();
const c = new pg.Client({ connectionString: url }); await c.connect();
const co = randomUUID();
await c.query(`insert into ledger.wallets (company_id, rail, available_cents) values ($1, 'BREB', 1000000000)`, [co]);
await c.query(`create table ledger.t (x int)`);
const payload = JSON.stringify({ eventId: randomUUID(), postingId: randomUUID(), kind: 'reserve', companyId: co, rail: 'RAIL_BREB', movementId: randomUUID(), holdId: randomUUID(), entries: [{ account: `wallet_available:${co}:BREB`, amount: '-100' }, { account: `wallet_pending_out:${co}:BREB`, amount: '100' }], occurredAt: new Date().toISOString(), idempotencyKey: `bench-hold-${randomUUID()}` });
function write(variant) {
  const d = reservePosting(co, 'BREB', { amount: 100n, fee: 0n, iva: 0n });
  const pid = randomUUID(), hid = randomUUID(), mid = randomUUID();
  const w = { posting: { id: pid, kind: 'reserve', idempotencyKey: randomUUID(), requestHash: 'x'.repeat(64), companyId: co, rail: 'BREB', movementId: mid, holdId: hid },
    entries: d.entries, wallet: d.wallet,
    newHold: { id: hid, companyId: co, rail: 'BREB', amount: 100n, fee: 0n, iva: 0n, total: 100n, feeOperation: 'BREB_OUTFLOW', movementId: mid },
    newMovement: { id: mid, companyId: co, type: 'TRANSFER_OUT', rail: 'BREB', walletRail: 'BREB', status: 'PENDING', amount: 100n, totalFee: 0n, ivaAmount: 0n, netAmount: 100n, reference: null, apiKeyId: null, details: {}, completed: false },
    event: { id: randomUUID(), subject: 'ledger.reserved', payload: JSON.parse(payload) } };
  return postingStatement(w);
}
const toDollar = (s) => { let i = 0; return s.replace(/\?/g, () => `$${++i}`); };
async function time(label, fn, n = 1000) { for (let i = 0; i < 50; i++) await fn(); const t = performance.now(); for (let i = 0; i < n; i++) await fn(); console.log(label, ((performance.now() - t) / n * 1000).toFixed(0), 'µs/op'); }
await time('select 1', () => c.query('select 1'));
await time('insert 1 row autocommit', () => c.query('insert into ledger.t values (1)'));
await time('wallet update only', () => c.query({ name: 'wu', text: `update ledger.wallets set available_cents = available_cents - 1, version = version + 1 where company_id = $1 and rail = 'BREB'`, values: [co] }));
await time('reserve statement prepared', () => { const w = write(); return c.query({ name: 'r', text: toDollar(w.sql), values: w.params }); });
await c.query('set synchronous_commit = off');
await time('reserve statement prepared, no fsync wait', () => { const w = write(); return c.query({ name: 'r', text: toDollar(w.sql), values: w.params }); });
await time('insert 1 row, no fsync wait', () => c.query('insert into ledger.t values (1)'));
await c.end();
const c1 = new pg.Client({ connectionString: admin }); await c1.connect(); await c1.query(`drop database ${name} with (force)`); await c1.end();
