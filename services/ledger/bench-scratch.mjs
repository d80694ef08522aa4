import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { ledgerV1 } from '@wallet/proto';
import { createAsyncClient } from '@wallet/platform';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 32);
const admin = 'postgresql://postgres@127.0.0.1:5432/postgres';
const name = `ledger_bench_${process.pid}`;
const sql = async (q) => { const c = new pg.Client({ connectionString: admin }); await c.connect(); try { await c.query(q); } finally { await c.end(); } };
await sql(`create database ${name}`);
const port = 50391;
const child = spawn(process.execPath, [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/ledger-prof'] : []), 'dist/main.js'], { env: { ...process.env, DATABASE_URL: `postgresql://postgres@127.0.0.1:5432/${name}`, BUS_NAMESPACE: `bench${process.pid}`, LOG_LEVEL: 'warn', LEDGER_GRPC_PORT: String(port), LEDGER_OPS_PORT: '9391', ...(process.env.POOL ? { LEDGER_DB_POOL_MAX: process.env.POOL } : {}) }, stdio: ['ignore', 'inherit', 'inherit'] });
try {
  for (let i = 0; i < 200; i++) { try { if ((await fetch('http://127.0.0.1:9391/readyz')).ok) break; } catch {} await new Promise((r) => setTimeout(r, 100)); }
  const client = createAsyncClient(ledgerV1.LedgerServiceClient, `127.0.0.1:${port}`, { deadlineMs: 10_000 });
  const companies = [];
  for (let i = 0; i < 100; i++) {
    const id = randomUUID(); const ctx = { requestId: 'b', companyId: id };
    await client.openWallets({ rails: [ledgerV1.Rail.BREB, ledgerV1.Rail.ACH] }, ctx);
    await client.credit({ idempotencyKey: `f-${id}`, rail: ledgerV1.Rail.BREB, amountCents: 10n ** 13n }, ctx);
    companies.push(ctx);
  }
  const fee = { fixedFee: 0n, variableFee: 0n, subtotalFee: 0n, ivaApplicable: false, ivaAmount: 0n, totalCharged: 0n };
  const reserve = (ctx) => client.reserve({ idempotencyKey: `h-${randomUUID()}`, rail: ledgerV1.Rail.BREB, amount: 100n, fee, movement: { id: randomUUID(), status: ledgerV1.MovementStatus.PENDING, details: {} } }, ctx);
  const { readFileSync, readdirSync } = await import('node:fs');
  const ticks = (pid) => { try { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]); } catch { return 0; } };
  const pgPids = () => readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((d) => { try { return readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'postgres'; } catch { return false; } });
  const natsPid = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).find((d) => { try { return readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'nats-server'; } catch { return false; } });
  const snap = () => ({ ledger: ticks(child.pid), bench: ticks(process.pid), nats: ticks(natsPid), pg: pgPids().reduce((s, p) => s + ticks(p), 0), t: Date.now() });
  async function loop(fn, secs = DURATION) {
    const s0 = snap();
    const lat = []; let ops = 0, errors = 0; let lastErr;
    const end = Date.now() + secs * 1000;
    await Promise.all(Array.from({ length: CONC }, async (_, w) => { let i = 0; while (Date.now() < end) { const t = performance.now(); try { await fn(w, i++); ops++; lat.push(performance.now() - t); } catch (e) { errors++; lastErr = e; } } }));
    lat.sort((a, b) => a - b);
    const s1 = snap();
    const per = (k) => ((s1[k] - s0[k]) * 10 / ops * 1000).toFixed(0);
    console.log(`cpu µs/op: ledger ${per('ledger')} pg ${per('pg')} nats ${per('nats')} bench ${per('bench')}`);
    return { rps: Math.round(ops / secs), p50: lat[Math.floor(lat.length / 2)]?.toFixed(2), p99: lat[Math.floor(lat.length * 0.99)]?.toFixed(2), errors, lastErr: lastErr?.message };
  }
  await loop((w, i) => reserve(companies[(w * 7 + i) % 100]), 2);
  console.log('ledger pid', child.pid, 'bench pid', process.pid);
  console.log('spread', await loop((w, i) => reserve(companies[(w * 7 + i) % 100])));
  console.log('hot   ', await loop(() => reserve(companies[0])));
  const t = Date.now();
  const inv = await client.checkInvariants({}, { requestId: 'b' });
  console.log('invariants', inv.ok, inv.violations.slice(0, 3), String(inv.postings), `${Date.now() - t}ms`);
  client.close();
  const c = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:5432/${name}` }); await c.connect();
  console.log('outbox', (await c.query('select count(*) as events, count(distinct published_at) as batches from ledger.outbox')).rows[0]);
  await c.end();
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await sql(`drop database if exists ${name} with (force)`);
}
