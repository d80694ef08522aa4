import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { Database, createLogger } from '@wallet/platform';
import { ledgerMigrations } from './dist/persistence/migrations/index.js';
import { postingStatement } from './dist/persistence/posting-statement.js';
import { reservePosting } from './dist/domain/postings.js';
const admin = 'postgresql://postgres@127.0.0.1:5432/postgres';
const name = process.argv[2];
const c0 = new pg.Client({ connectionString: admin }); await c0.connect(); await c0.query(`drop database if exists ${name} with (force)`); await c0.query(`create database ${name}`); await c0.end();
const url = `postgresql://postgres@127.0.0.1:5432/${name}`;
const db = await Database.open({ url, schema: 'ledger', migrations: ledgerMigrations, logger: createLogger('x', 'silent') });
await db.migrate();
const cos = Array.from({ length: 100 }, () => randomUUID());
for (const co of cos) await db.query(`insert into ledger.wallets (company_id, rail, available_cents) values (?, 'BREB', 1000000000000)`, [co]);
await db.query(`create table ledger.cos (n int primary key, id text)`);
for (let i = 0; i < 100; i++) await db.query(`insert into ledger.cos values (?, ?)`, [i, cos[i]]);
await db.close();
const co = 'XXCO';
const d = reservePosting(co, 'BREB', { amount: 100n, fee: 0n, iva: 0n });
const payload = { eventId: 'E', postingId: 'P', kind: 'reserve', companyId: co, rail: 'RAIL_BREB', movementId: 'M', holdId: 'H', entries: [{ account: `wallet_available:${co}:BREB`, amount: '-100' }, { account: `wallet_pending_out:${co}:BREB`, amount: '100' }], occurredAt: new Date().toISOString(), idempotencyKey: `bench-hold-${randomUUID()}` };
const w = postingStatement({ posting: { id: 'P', kind: 'reserve', idempotencyKey: 'K', requestHash: 'x'.repeat(64), companyId: co, rail: 'BREB', movementId: 'M', holdId: 'H' },
  entries: d.entries, wallet: d.wallet,
  newHold: { id: 'H', companyId: co, rail: 'BREB', amount: 100n, fee: 0n, iva: 0n, total: 100n, feeOperation: 'BREB_OUTFLOW', movementId: 'M' },
  newMovement: { id: 'M', companyId: co, type: 'TRANSFER_OUT', rail: 'BREB', walletRail: 'BREB', status: 'PENDING', amount: 100n, totalFee: 0n, ivaAmount: 0n, netAmount: 100n, reference: null, apiKeyId: null, details: {}, completed: false },
  event: { id: 'EV', subject: 'ledger.reserved', payload } });
// pgbench script: substitute params with expressions
const map = { P: 'gen_random_uuid()', H: 'gen_random_uuid()', M: 'gen_random_uuid()', EV: 'gen_random_uuid()', K: 'gen_random_uuid()::text', XXCO: `(select id from ledger.cos where n = :n)` };
let i = 0;
const text = w.sql.replace(/\?/g, () => { const v = w.params[i++]; if (v === null) return 'null'; const s = String(v); if (map[s]) return map[s]; if (s.includes('XXCO')) return `'${s}'`; return `'${s.replaceAll("'", "''")}'`; });
writeFileSync(`/tmp/${name}.sql`, `\\set n random(0, 99)\n${text.replace(/\n\s*/g, ' ')};\n`);
console.log('ok');
