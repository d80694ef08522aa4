import { spawn, spawnSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { ledgerV1 } from '@wallet/proto';
import { createAsyncClient } from '@wallet/platform';
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PG_ADMIN = 'postgresql://postgres@127.0.0.1:5432/postgres';
const benchDb = `wallet_scratch_${process.pid}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function adminSql(sql) { const c = new pg.Client({ connectionString: PG_ADMIN }); await c.connect(); try { await c.query(sql); } finally { await c.end(); } }
function dbUrl(name) { const u = new URL(PG_ADMIN); u.pathname = `/${name}`; return u.toString(); }
const children = [];
function startProcess(dir, env) { const c = spawn(process.execPath, ['dist/main.js'], { cwd: join(root, dir), env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] }); children.push(c); return c; }
async function waitReady(url) { for (let i = 0; i < 240; i++) { try { if ((await fetch(url)).ok) return; } catch {} await sleep(250); } throw new Error('not ready ' + url); }
const cannon = (opts) => new Promise((res, rej) => autocannon({ connections: 32, duration: Number(process.env.D ?? 5), ...opts }, (e, r) => e ? rej(e) : res(r)));
import { readFileSync } from 'node:fs';
const cpuMs = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const sum = (r) => ({ rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx });
await adminSql(`create database "${benchDb}"`);
const common = { DATABASE_URL: dbUrl(benchDb), BUS_NAMESPACE: `scr${process.pid}`, LOG_LEVEL: 'warn', NODE_ENV: 'development' };
try {
  const L = startProcess('services/ledger', { ...common, LEDGER_GRPC_PORT: '50161', LEDGER_OPS_PORT: '9211' });
  await waitReady('http://127.0.0.1:9211/readyz');
  const G = startProcess('gateway', { ...common, GATEWAY_PORT: '8190', GATEWAY_OPS_PORT: '9210', LEDGER_GRPC_ADDR: '127.0.0.1:50161', RATE_LIMIT_PREFIX: `scr${process.pid}`, ...(process.env.GWENV ? JSON.parse(process.env.GWENV) : {}) });
  await waitReady('http://127.0.0.1:9210/readyz');
  const gw = 'http://127.0.0.1:8190';
  const admin = async (method, path, body) => { const r = await fetch(gw + path, { method, headers: { authorization: 'Bearer dev-admin-token', 'content-type': 'application/json' }, body: body && JSON.stringify(body) }); if (!r.ok) throw new Error(await r.text()); return r.json(); };
  const co = await admin('POST', '/admin/companies', { name: 'Bench', nit: '900000001-1', taxRegime: 'COMMON' });
  await admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1_000_000 });
  const key = (await admin('POST', `/admin/companies/${co.id}/api-keys`, { scope: 'READ', label: 'bench' })).key;
  await admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 1_000_000, reference: 'bench' });
  const h = { authorization: `Bearer ${key}` };
  const which = (process.env.WHICH ?? 'openapi,dict,balance,grpc').split(',');
  await cannon({ url: `${gw}/wallets/balance`, headers: h, duration: 2 });
  if (which.includes('openapi')) console.log('no-auth /docs/assets/docs-init.js', sum(await cannon({ url: `${gw}/docs/assets/docs-init.js` })));
  if (which.includes('dict')) console.log('dict (auth+ratelimit)', sum(await cannon({ url: `${gw}/dictionaries/banks/ach`, headers: h })));
  if (which.includes('balance')) {
    const g0 = cpuMs(G.pid), l0 = cpuMs(L.pid);
    const r = await cannon({ url: `${gw}/wallets/balance`, headers: h });
    const n = r.requests.total;
    console.log('balance', sum(r), 'gateway cpu µs/req', Math.round((cpuMs(G.pid) - g0) * 1000 / n), 'ledger cpu µs/req', Math.round((cpuMs(L.pid) - l0) * 1000 / n));
  }
  if (which.includes('dict')) {
    const g0 = cpuMs(G.pid);
    const r = await cannon({ url: `${gw}/dictionaries/banks/ach`, headers: h });
    console.log('dict gateway cpu µs/req', Math.round((cpuMs(G.pid) - g0) * 1000 / r.requests.total));
  }
  if (which.includes('grpc')) {
    const client = createAsyncClient(ledgerV1.LedgerServiceClient, '127.0.0.1:50161');
    const ctx = { requestId: 'b', companyId: co.id };
    let n = 0; const lat = []; const end = Date.now() + 5000;
    await Promise.all(Array.from({ length: 32 }, async () => { while (Date.now() < end) { const t = performance.now(); await client.getBalances({ ivaApplicable: true }, ctx); lat.push(performance.now() - t); n++; } }));
    lat.sort((a, b) => a - b);
    console.log('direct grpc getBalances', { rps: Math.round(n / 5), p50: lat[Math.floor(lat.length / 2)].toFixed(1), p99: lat[Math.floor(lat.length * 0.99)].toFixed(1) });
    client.close();
  }
} finally {
  for (const c of children) c.kill('SIGTERM');
  await sleep(800);
  await adminSql(`drop database if exists "${benchDb}" with (force)`);
}
