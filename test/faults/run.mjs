// Fault-injection suite: the product's real processes under a bank-style workload while faults are
// injected (kill -9 of every service in turn, NATS restarted, Postgres connections cut, Redis
// stopped, provider callbacks duplicated / delayed / reordered, provider time-outs and outages),
// then the money invariants checked over the data (README.md beside this file).
//
//   node test/faults/run.mjs [--profile full|fast] [--json <file>]
//
// Needs a build (`npx turbo run build`). Owns its NATS (`nats-server`) and Redis (`redis-server`)
// so that it can restart and stop them; uses the shared Postgres with a database of its own (only
// that database's connections are cut). Exit code 0 only when every invariant held.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Secret, TOTP } from 'otpauth';
import { ledgerV1 } from '@wallet/proto';
// Ledger calls as their real callers make them over the mesh (the gateway for an operator or a
// company, transfer for holds, ops for the invariant report): the development PKI, allow-lists on.
import { policyClient } from '@wallet/platform/testing';
import { ledgerAccess } from '@wallet/ledger/testing';
import { NODE_FLAGS } from '../../deploy/local/processes.mjs';
import { consumersBehind, observations, runChecks, sabotageSelfTest } from './checks.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const argv = process.argv.slice(2);
const arg = (name, def) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const profileName = arg('profile', process.env.FAULTS_PROFILE ?? 'full');
const jsonOut = arg('json');

/**
 * full: npm run test:faults (≥ 30 kills over every service, ~6 min). fast: the part `npm test` runs
 * (a kill of each of transfer, ledger, gateway and sandbox plus one of every other fault, ~1 min).
 * Ports differ so both can run at the same time; neither collides with `npm run up` or the bench.
 */
const PROFILES = {
  full: { companies: 20, workers: 12, killRounds: 4, portBases: [0], gapMs: 1200, settleSeconds: 180, hold: 1 },
  fast: { companies: 4, workers: 6, killRounds: 1, portBases: [20, 40, 60], gapMs: 300, settleSeconds: 60, hold: 0.6, killOnly: ['transfer', 'ledger', 'gateway', 'sandbox'] },
};
const profile = PROFILES[profileName];
if (!profile) { console.error(`unknown profile ${profileName} (full | fast)`); process.exit(2); }
const seed = Number(process.env.FAULTS_SEED ?? 20261121);

// The first base whose ports are all free (the fast profile tries a few: `npm test` may overlap another run).
// Every port is below the kernel's ephemeral range (32768-60999), so an outgoing connection cannot hold one.
const portsAt = (b) => ({
  gateway: 8380 + b, gatewayOps: 9300 + b, ledgerOps: 9301 + b, transferOps: 9302 + b, depositOps: 9303 + b, collectKeyOps: 9304 + b,
  receiptOps: 9305 + b, webhookOps: 9306 + b, ledger: 28351 + b, transfer: 28352 + b, deposit: 28353 + b, collectKey: 28354 + b,
  receipt: 28355 + b, webhook: 28356 + b, sandbox: 8390 + b, smtp: 2635 + b, nats: 4322 + b, redis: 6479 + b,
});
let ports = portsAt(profile.portBases[0]);
for (const b of profile.portBases) {
  const free = await Promise.all(Object.values(portsAt(b)).map(portFree));
  if (free.every(Boolean)) { ports = portsAt(b); break; }
}
const PG_ADMIN = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const dbName = `wallet_faults_${profileName}_${process.pid}`;
const dbUrl = (() => { const u = new URL(PG_ADMIN); u.pathname = `/${dbName}`; return u.toString(); })();
const namespace = `faults${profileName}${process.pid}`;
const work = join(tmpdir(), `wallet-faults-${profileName}-${process.pid}`);
const logDir = join(work, 'logs');
const gw = `http://127.0.0.1:${ports.gateway}`;
const sb = `http://127.0.0.1:${ports.sandbox}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (msg) => console.log(`[faults ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}`);
const t0 = Date.now();

// Deterministic choices (the timing of faults still varies from run to run).
let rngState = seed >>> 0;
function rand() { rngState = (rngState + 0x6d2b79f5) >>> 0; let t = rngState; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const between = (lo, hi) => lo + Math.floor(rand() * (hi - lo));

// ---------------------------------------------------------------------------------------------
// Infrastructure owned by the suite: NATS, Redis, the database.

async function portFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}
async function waitPort(port, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const ok = await new Promise((r) => { const s = net.connect(port, '127.0.0.1'); s.once('connect', () => { s.end(); r(true); }); s.once('error', () => r(false)); });
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on ${port}`);
}
async function adminSql(sql, params = []) {
  const c = new pg.Client({ connectionString: PG_ADMIN });
  await c.connect();
  try { return await c.query(sql, params); } finally { await c.end(); }
}

const infra = {};
function startInfra(name) {
  if (stopping) throw new Error('the run is stopping');
  const out = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
  const child = name === 'nats'
    ? spawn('/usr/sbin/nats-server', ['-js', '-a', '127.0.0.1', '-p', String(ports.nats), '-sd', join(work, 'nats')], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('/usr/bin/redis-server', ['--port', String(ports.redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(out); child.stderr.pipe(out);
  infra[name] = child;
  return waitPort(name === 'nats' ? ports.nats : ports.redis);
}
async function stopInfra(name, signal = 'SIGTERM') {
  const c = infra[name];
  if (!c || c.exitCode !== null || c.signalCode !== null) return;
  const exited = new Promise((r) => c.once('exit', r));
  c.kill(signal);
  await exited;
}

// ---------------------------------------------------------------------------------------------
// The product's processes, started as deploy/local/up.mjs and the bench do.

const common = { DATABASE_URL: dbUrl, NATS_URL: `nats://127.0.0.1:${ports.nats}`, BUS_NAMESPACE: namespace, LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'warn', NODE_ENV: 'development' };
const APPROVAL_TTL = 15; // multi-signature sends nobody signs expire within the run
// Small pools: the Postgres is shared (max_connections 100) with other people's tests; the gateway's is fixed at 10.
const sweep = { SWEEPER_INTERVAL_MS: '500', SWEEPER_GRACE_SECONDS: '3', PROVIDER_HTTP_TIMEOUT_MS: '1500' };
const services = {
  sandbox: { dir: 'services/sandbox', ops: ports.sandbox, env: {
    SANDBOX_HOST: '127.0.0.1', SANDBOX_PORT: ports.sandbox, SANDBOX_DB_POOL_MAX: 2, SANDBOX_SMTP_PORT: ports.smtp, SANDBOX_PUBLIC_URL: sb, SANDBOX_BREB_CONFIRM_MS: 300, SANDBOX_ACH_CONFIRM_MS: 600,
    SANDBOX_CALLBACK_RETRY_BASE_MS: 200, SANDBOX_CALLBACK_RETRY_MAX_MS: 2000, SANDBOX_CALLBACK_TIMEOUT_MS: 3000 } },
  ledger: { dir: 'services/ledger', ops: ports.ledgerOps, env: { LEDGER_GRPC_HOST: '127.0.0.1', LEDGER_DB_POOL_MAX: 3, LEDGER_GRPC_PORT: ports.ledger, LEDGER_OPS_PORT: ports.ledgerOps } },
  transfer: { dir: 'services/transfer', ops: ports.transferOps, env: {
    ...sweep, TRANSFER_GRPC_HOST: '127.0.0.1', TRANSFER_DB_POOL_MAX: 3, TRANSFER_GRPC_PORT: ports.transfer, TRANSFER_OPS_PORT: ports.transferOps, LEDGER_GRPC_ADDR: `127.0.0.1:${ports.ledger}`,
    BREB_DIRECTORY_URL: sb, BREB_RAIL_URL: sb, ACH_RAIL_URL: sb, RAIL_CALLBACK_BASE_URL: `${gw}/webhooks/rails`,
    RAIL_CONFIRM_TIMEOUT_SECONDS: 5, RAIL_DISPATCH_RETRY_BASE_MS: 200, RAIL_DISPATCH_RETRY_MAX_MS: 2000, RAIL_DISPATCH_TIMEOUT_SECONDS: 120,
    APPROVAL_TTL_SECONDS: APPROVAL_TTL } },
  'pse-deposit': { dir: 'services/pse-deposit', ops: ports.depositOps, env: {
    ...sweep, DEPOSIT_GRPC_HOST: '127.0.0.1', DEPOSIT_DB_POOL_MAX: 2, DEPOSIT_GRPC_PORT: ports.deposit, DEPOSIT_OPS_PORT: ports.depositOps, LEDGER_GRPC_ADDR: `127.0.0.1:${ports.ledger}`,
    PSE_PROVIDER_URL: sb, PSE_CALLBACK_URL: `${gw}/webhooks/pse`, SMTP_URL: `smtp://127.0.0.1:${ports.smtp}` } },
  'collect-key': { dir: 'services/collect-key', ops: ports.collectKeyOps, env: {
    ...sweep, COLLECT_KEY_GRPC_HOST: '127.0.0.1', COLLECT_KEY_DB_POOL_MAX: 2, COLLECT_KEY_GRPC_PORT: ports.collectKey, COLLECT_KEY_OPS_PORT: ports.collectKeyOps, LEDGER_GRPC_ADDR: `127.0.0.1:${ports.ledger}`,
    BREB_DIRECTORY_URL: sb, BREB_INCOMING_CALLBACK_URL: `${gw}/webhooks/breb/incoming` } },
  receipt: { dir: 'services/receipt', ops: ports.receiptOps, env: { RECEIPT_GRPC_HOST: '127.0.0.1', RECEIPT_DB_POOL_MAX: 2, RECEIPT_GRPC_PORT: ports.receipt, RECEIPT_OPS_PORT: ports.receiptOps } },
  webhook: { dir: 'services/webhook', ops: ports.webhookOps, env: { WEBHOOK_GRPC_HOST: '127.0.0.1', WEBHOOK_DB_POOL_MAX: 2, WEBHOOK_GRPC_PORT: ports.webhook, WEBHOOK_OPS_PORT: ports.webhookOps, WEBHOOK_POLL_INTERVAL_MS: 500 } },
  gateway: { dir: 'gateway', ops: ports.gatewayOps, env: {
    GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: ports.gateway, GATEWAY_OPS_PORT: ports.gatewayOps, REDIS_URL: `redis://127.0.0.1:${ports.redis}`, RATE_LIMIT_PREFIX: namespace,
    LEDGER_GRPC_ADDR: `127.0.0.1:${ports.ledger}`, TRANSFER_GRPC_ADDR: `127.0.0.1:${ports.transfer}`, DEPOSIT_GRPC_ADDR: `127.0.0.1:${ports.deposit}`,
    COLLECT_KEY_GRPC_ADDR: `127.0.0.1:${ports.collectKey}`, RECEIPT_GRPC_ADDR: `127.0.0.1:${ports.receipt}`, WEBHOOK_GRPC_ADDR: `127.0.0.1:${ports.webhook}` } },
};
const running = {};
let stopping = false; // set by cleanup: nothing is (re)started after it

const MIGRATE_FLAG = { sandbox: 'SANDBOX', ledger: 'LEDGER', transfer: 'TRANSFER', 'pse-deposit': 'DEPOSIT', 'collect-key': 'COLLECT_KEY', receipt: 'RECEIPT', webhook: 'WEBHOOK', gateway: 'GATEWAY' };
function startService(name, { restart = false } = {}) {
  if (stopping) throw new Error('the run is stopping');
  const s = services[name];
  const out = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
  const env = { ...process.env, ...common, OTEL_SERVICE_NAME: name, ...Object.fromEntries(Object.entries(s.env).map(([k, v]) => [k, String(v)])) };
  delete env.NODE_OPTIONS;
  if (restart) env[`${MIGRATE_FLAG[name]}_MIGRATE_ON_START`] = 'false'; // applied at the first start
  const child = spawn(process.execPath, [...NODE_FLAGS, '--import', '@wallet/platform/otel', 'dist/main.js'], { cwd: join(root, s.dir), env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(out); child.stderr.pipe(out);
  running[name] = child;
  return child;
}
async function waitReady(name, timeoutMs = 60_000) {
  const url = `http://127.0.0.1:${services[name].ops}/readyz`;
  const child = running[name];
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${name} exited (code ${child.exitCode}); see ${join(logDir, `${name}.log`)}`);
    try { if ((await fetch(url, { signal: AbortSignal.timeout(1000) })).ok) return; } catch { /* not yet */ }
    await sleep(150);
  }
  throw new Error(`${name} not ready after ${timeoutMs / 1000} s; see ${join(logDir, `${name}.log`)}`);
}
async function kill9(name) {
  const c = running[name];
  const exited = c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : Promise.resolve();
  c.kill('SIGKILL');
  await exited;
}

// ---------------------------------------------------------------------------------------------
// HTTP clients: tolerate faults, record what they know.

const ops = {}; // kind → { ok, refused, error }
const totalErrors = () => Object.values(ops).reduce((a, o) => a + o.error, 0);
function count(kind, outcome) { (ops[kind] ??= { ok: 0, refused: 0, error: 0 })[outcome]++; }
async function call(method, url, { token, body, timeoutMs = 10_000, forwardedFor } = {}) {
  const headers = {};
  if (forwardedFor) headers['x-forwarded-for'] = forwardedFor; // the gateway trusts loopback as a proxy
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let json; try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
    return { status: res.status, body: json, text };
  } catch (err) {
    return { status: 0, body: undefined, text: String(err?.cause?.code ?? err?.name ?? err) };
  }
}
const ADMIN = 'dev-admin-token';
async function admin(method, path, body, tries = 20) {
  for (let i = 0; ; i++) {
    const r = await call(method, gw + path, { token: ADMIN, body });
    if (r.status >= 200 && r.status < 300) return r.body;
    if (i >= tries || (r.status >= 400 && r.status < 500)) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    await sleep(500);
  }
}

const record = {
  accepted: new Map(), // transfer id → { companyId, rail, amount, reference }
  refusedRefs: [], // { companyId, reference, status, error } — 4xx with a unique reference
  duplicatePairs: [], // { companyId, reference, ids: [..] }
  deposits: new Map(), // deposit id → { companyId, amount, paid: true|false|undefined }
  incoming: new Map(), // providerTransferId → { companyId, keyValue, amount }
  clientViolations: [],
};

const payer = { payerDocumentTypeId: 1, payerDocumentNumber: '1020304050', payerFirstName: 'Laura', payerLastName: 'Gómez Ruiz', payerEmail: 'laura@example.com', payerPhone: '3101234567' };
const achDest = (i) => ({ bankAccount: { bankId: 1, accountTypeId: 20, accountNumber: `1234567${String(8000 + i).padStart(4, '0')}`, documentTypeId: 1, documentNumber: `10203${String(10000 + i)}`, holderFirstName: 'Ana María', holderLastName: 'Pérez Gómez' } });

async function provision(i) {
  const c = await admin('POST', '/admin/companies', { name: `Faults ${i} S.A.S.`, nit: `9009${String(i).padStart(5, '0')}-1`, taxRegime: i % 2 ? 'SIMPLE' : 'COMMON', wallets: ['BREB', 'ACH'] });
  await admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1_000_000 });
  const write = (await admin('POST', `/admin/companies/${c.id}/api-keys`, { scope: 'WRITE', label: 'faults-write' })).key;
  const read = (await admin('POST', `/admin/companies/${c.id}/api-keys`, { scope: 'READ', label: 'faults-read' })).key;
  for (const rail of ['BREB', 'ACH']) await admin('POST', `/admin/companies/${c.id}/wallets/${rail}/credit`, { amountCents: 20_000_000, reference: `faults-seed-${rail}` });
  const keys = [];
  for (let k = 0; k < 2; k++) {
    for (let t = 0; ; t++) {
      const r = await call('POST', `${gw}/breb/collect-keys`, { token: write, body: { externalId: `cliente-${k}`, name: `Cliente ${k}` } });
      if (r.status === 201 || r.status === 200) { keys.push(r.body.key.value); break; }
      if (t > 20) throw new Error(`collect key: ${r.status} ${r.text}`);
      await sleep(500);
    }
  }
  const dests = [];
  for (const keyValue of [`31${String(20_000_000 + i * 7919).slice(0, 8)}`, `@faults${i}dest`]) {
    for (let t = 0; ; t++) {
      const r = await call('POST', `${gw}/transfers/resolve-key`, { token: write, body: { keyValue } });
      if (r.status === 200) { dests.push({ destination: { brebKey: { type: r.body.keyType, value: r.body.keyValue } }, targetName: r.body.recipient.fullName, targetDocument: r.body.recipient.idValue }); break; }
      if (t > 20) throw new Error(`resolve-key: ${r.status} ${r.text}`);
      await sleep(500);
    }
  }
  return { id: c.id, index: i, write, read, keys, dests };
}

function amountFor(kind) {
  let a = between(1_000, 60_000);
  if (kind === 'fail') return a - (a % 100) + 13; // the sandbox fails amounts ending in 13
  if (a % 100 === 13) a += 1;
  return a;
}

async function sendOp(co, rail, { fail = false, withRef = rand() < 0.6 } = {}) {
  const kind = `send ${rail}${fail ? ' (rail fails)' : ''}`;
  const amount = amountFor(fail ? 'fail' : 'ok');
  const reference = withRef ? `f-${randomUUID()}` : undefined;
  const body = rail === 'BREB' ? { amount, ...pick(co.dests), ...(reference ? { reference } : {}) } : { amount, destination: achDest(co.index), description: 'Pago proveedor', ...(reference ? { reference } : {}) };
  const r = await call('POST', `${gw}/transfers/send`, { token: co.write, body });
  if (r.status === 201 || r.status === 200) { count(kind, 'ok'); record.accepted.set(r.body.id, { companyId: co.id, rail, amount, reference }); }
  else if (r.status >= 400 && r.status < 500) { count(kind, 'refused'); if (reference && r.status !== 429) record.refusedRefs.push({ companyId: co.id, reference, status: r.status, error: r.body?.error }); }
  else count(kind, 'error');
}

async function duplicateSendOp(co) {
  const reference = `dup-${randomUUID()}`;
  const body = { amount: amountFor('ok'), ...pick(co.dests), reference };
  const rs = await Promise.all([0, 1, 2].map(() => call('POST', `${gw}/transfers/send`, { token: co.write, body })));
  const ids = new Set();
  for (const r of rs) {
    if (r.status === 201 || r.status === 200) { count('send BREB, same reference ×3', 'ok'); ids.add(r.body.id); record.accepted.set(r.body.id, { companyId: co.id, rail: 'BREB', amount: body.amount, reference }); }
    else if (r.status >= 400 && r.status < 500) count('send BREB, same reference ×3', 'refused');
    else count('send BREB, same reference ×3', 'error');
  }
  record.duplicatePairs.push({ companyId: co.id, reference, ids: [...ids] });
  if (ids.size > 1) record.clientViolations.push(`reference ${reference} of company ${co.id} answered with ${ids.size} different transfers: ${[...ids].join(', ')}`);
}

async function insufficientOp(co) {
  const reference = `nsf-${randomUUID()}`;
  const rail = rand() < 0.5 ? 'BREB' : 'ACH';
  const body = rail === 'BREB' ? { amount: 900_000_001, ...pick(co.dests), reference } : { amount: 900_000_001, destination: achDest(co.index), reference };
  const r = await call('POST', `${gw}/transfers/send`, { token: co.write, body });
  if (r.status >= 400 && r.status < 500) { count('send, insufficient funds', 'refused'); if (r.status !== 429) record.refusedRefs.push({ companyId: co.id, reference, status: r.status, error: r.body?.error }); }
  else if (r.status === 201 || r.status === 200) { count('send, insufficient funds', 'ok'); record.clientViolations.push(`send of 900000001 with a 20000000 wallet was accepted (${r.body.id})`); record.accepted.set(r.body.id, { companyId: co.id, rail, amount: body.amount, reference }); }
  else count('send, insufficient funds', 'error');
}

async function pseOp(co) {
  const amount = between(20_000, 400_000);
  const r = await call('POST', `${gw}/deposits/pse`, { token: co.write, body: { amountCents: amount, ...payer } });
  if (r.status !== 201 && r.status !== 200) { count('PSE deposit created', r.status >= 400 && r.status < 500 ? 'refused' : 'error'); return; }
  count('PSE deposit created', 'ok');
  const id = r.body.id;
  record.deposits.set(id, { companyId: co.id, amount });
  const outcome = rand() < 0.85 ? 'APPROVED' : 'REJECTED';
  const p = await call('POST', `${sb}/sandbox/pse/${id}/pay`, { body: { outcome, payerBank: 'Bancolombia' } });
  const kind = `PSE ${outcome === 'APPROVED' ? 'paid' : 'rejected'} at the provider`;
  if (p.status === 200) { count(kind, 'ok'); record.deposits.get(id).paid = p.body.status === 'PAID'; }
  else count(kind, p.status >= 400 && p.status < 500 ? 'refused' : 'error');
  // Some payments are reversed by the provider at once: the PAID and REVERSED callbacks are then
  // both in flight and may arrive in either order (or REVERSED first after a failed PAID delivery).
  if (p.status === 200 && p.body.status === 'PAID' && rand() < 0.15) {
    const rv = await call('POST', `${sb}/sandbox/pse/${id}/reverse`);
    count('PSE reversed by the provider', rv.status === 200 ? 'ok' : rv.status >= 400 && rv.status < 500 ? 'refused' : 'error');
  }
}

async function incomingOp(co) {
  const amount = between(5_000, 300_000);
  const keyValue = pick(co.keys);
  const r = await call('POST', `${sb}/sandbox/breb/incoming`, { body: { keyValue, amountCents: amount, payerName: 'Pedro Pérez', payerDocument: 'CC 79123456', payerBank: 'Nequi' } });
  if (r.status === 202) { count('inbound Bre-B payment', 'ok'); record.incoming.set(r.body.providerTransferId, { companyId: co.id, keyValue, amount }); }
  else count('inbound Bre-B payment', r.status >= 400 && r.status < 500 ? 'refused' : 'error');
}

async function readOp(co) {
  const path = pick(['/wallets/balance', '/wallets/transactions?limit=20', '/deposits?limit=20']);
  const r = await call('GET', gw + path, { token: co.read });
  count(`read ${path.split('?')[0]}`, r.status === 200 ? 'ok' : r.status >= 400 && r.status < 500 ? 'refused' : 'error');
}

// Multi-signature (threshold 2): sends wait for two dashboard users' TOTP signatures; the signer
// signs the newest pending one once per 30 s step (a code is accepted once), the rest expire.
async function provisionMultiSig(i) {
  const c = await admin('POST', '/admin/companies', { name: `Faults Firmas ${i} S.A.S.`, nit: `9008${String(i).padStart(5, '0')}-2`, taxRegime: 'COMMON', multiSigThreshold: 2, wallets: ['BREB', 'ACH'] });
  await admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1_000_000 });
  const write = (await admin('POST', `/admin/companies/${c.id}/api-keys`, { scope: 'WRITE', label: 'faults-write' })).key;
  await admin('POST', `/admin/companies/${c.id}/wallets/BREB/credit`, { amountCents: 20_000_000, reference: 'faults-seed-BREB' });
  const users = [];
  for (const role of ['ADMIN', 'OPERATOR']) {
    const email = `${role.toLowerCase()}.${c.id.slice(0, 8)}@faults.co`;
    const password = `Clave-${randomUUID()}`;
    const u = await admin('POST', `/admin/companies/${c.id}/users`, { email, password, role });
    const login = await call('POST', `${gw}/auth/login`, { body: { email, password }, forwardedFor: '10.77.0.2' });
    if (login.status !== 200) throw new Error(`login: ${login.status} ${login.text}`);
    users.push({ email, password, token: login.body.token, totp: new TOTP({ secret: Secret.fromBase32(u.totpSecret), digits: 6, period: 30, algorithm: 'SHA1' }) });
  }
  const r = await call('POST', `${gw}/transfers/resolve-key`, { token: write, body: { keyValue: '3007770001' } });
  if (r.status !== 200) throw new Error(`resolve-key: ${r.status} ${r.text}`);
  return { id: c.id, write, users, dest: { destination: { brebKey: { type: r.body.keyType, value: r.body.keyValue } }, targetName: r.body.recipient.fullName, targetDocument: r.body.recipient.idValue }, awaiting: [] };
}
async function multiSigSendOp(ms) {
  const amount = amountFor(rand() < 0.15 ? 'fail' : 'ok');
  const r = await call('POST', `${gw}/transfers/send`, { token: ms.write, body: { amount, ...ms.dest, reference: `ms-${randomUUID()}` } });
  if ((r.status === 200 || r.status === 201) && r.body.approvalId) {
    count('send BREB, multi-signature', 'ok');
    record.accepted.set(r.body.id, { companyId: ms.id, rail: 'BREB', amount, multiSig: true });
    ms.awaiting.push({ approvalId: r.body.approvalId, at: Date.now() });
  } else count('send BREB, multi-signature', r.status >= 400 && r.status < 500 ? 'refused' : 'error');
}
async function signer(ms, stop) {
  while (!stop.done) {
    const step = Math.floor(Date.now() / 30_000);
    while (!stop.done && (Math.floor(Date.now() / 30_000) === step || Date.now() % 30_000 < 500)) await sleep(200); // a fresh TOTP step
    if (stop.done) break;
    await multiSigSendOp(ms); // one fresh send to sign now (the workers' ones mostly expire)
    const target = ms.awaiting.filter((a) => Date.now() - a.at < (APPROVAL_TTL - 3) * 1000).at(-1);
    if (!target) continue;
    ms.awaiting = ms.awaiting.filter((a) => a !== target);
    let signed = 0;
    for (const u of ms.users) {
      // The signers sit at another office (client IP): the API clients' traffic fills this IP's windows.
      const r = await call('POST', `${gw}/dashboard/approvals/${target.approvalId}/sign`, { token: u.token, body: { totpCode: u.totp.generate() }, forwardedFor: '10.77.0.2' });
      if (r.status === 200) signed++;
      else log(`signing ${target.approvalId} as ${u.email.split('.')[0]}: ${r.status} ${r.body?.error ?? r.text.slice(0, 80)}`);
    }
    count('approval signed by both users', signed === 2 ? 'ok' : 'error');
  }
}

async function workload(companies, stop, ms) {
  const signing = signer(ms, stop);
  await Promise.all(Array.from({ length: profile.workers }, async () => {
    while (!stop.done) {
      const co = pick(companies);
      const x = rand();
      const errorsBefore = totalErrors();
      if (x < 0.25) await sendOp(co, 'BREB');
      else if (x < 0.40) await sendOp(co, 'ACH');
      else if (x < 0.45) await sendOp(co, pick(['BREB', 'ACH']), { fail: true });
      else if (x < 0.50) await duplicateSendOp(co);
      else if (x < 0.53) await insufficientOp(co);
      else if (x < 0.65) await pseOp(co);
      else if (x < 0.77) await incomingOp(co);
      else if (x < 0.80) await multiSigSendOp(ms);
      else await readOp(co);
      if (totalErrors() > errorsBefore) await sleep(250); // a fault is on: do not spin
    }
  }));
  await signing;
}

// ---------------------------------------------------------------------------------------------
// Faults.

const faults = {}; // kind → count
const faultLog = [];
const injected = (kind) => { faults[kind] = (faults[kind] ?? 0) + 1; };
let dbConn;

const FAULTS = {
  async kill(name) {
    await kill9(name);
    injected(`kill -9 ${name}`);
    await sleep(between(100, 600));
    for (let attempt = 1; ; attempt++) {
      startService(name, { restart: true });
      try { await waitReady(name); break; } catch (err) {
        if (attempt >= 3 || running[name].exitCode === null) throw err; // exited at start (e.g. its port briefly taken): again
        log(`${name} did not come back (${err.message}); starting it again`);
        await sleep(1000);
      }
    }
  },
  async natsRestart() {
    await stopInfra('nats');
    injected('NATS restarted');
    await sleep(800);
    await startInfra('nats');
  },
  async pgCut() {
    const r = await dbConn.query('select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()) t', [dbName]);
    injected('Postgres connections cut');
    faultLog.push(`pg cut: ${r.rows[0].n} connections`);
    await sleep(1500);
  },
  async redisStop() {
    await stopInfra('redis');
    injected('Redis stopped');
    await sleep(3000 * profile.hold);
    await startInfra('redis');
  },
  async callbacksDelayed() {
    // Outcome callbacks held back, then released together: late, and in another order than the outcomes.
    await call('POST', `${sb}/sandbox/faults`, { body: { callbacks: 'down' } });
    injected('callbacks delayed + reordered (held back, then released together)');
    await sleep(4000 * profile.hold);
    await setUp({ callbacks: 'up' });
  },
  async callbacksDuplicated() {
    const ids = [...sampleIds(record.accepted, 8), ...sampleIds(record.deposits, 6), ...sampleIds(record.incoming, 6)];
    // Each one redelivered twice at the same time (concurrent duplicates), plus once later (a late duplicate).
    await Promise.all(ids.flatMap((id) => [0, 1].map(() => call('POST', `${sb}/sandbox/callbacks/${id}/redeliver`))));
    injected('callbacks duplicated');
    faults['duplicate callback deliveries requested'] = (faults['duplicate callback deliveries requested'] ?? 0) + ids.length * 3;
    await sleep(1000);
    await Promise.all(ids.map((id) => call('POST', `${sb}/sandbox/callbacks/${id}/redeliver`)));
  },
  async providerTimeout() {
    // The provider stops answering (SIGSTOP) for longer than the product's PROVIDER_HTTP_TIMEOUT_MS:
    // calls in flight time out on the product's side while the provider may still act on them.
    const c = running.sandbox;
    c.kill('SIGSTOP');
    injected('provider time-out (sandbox frozen with SIGSTOP > PROVIDER_HTTP_TIMEOUT_MS)');
    await sleep(Math.max(2500, 3500 * profile.hold));
    c.kill('SIGCONT');
    await sleep(500);
  },
  async providerOutage() {
    await call('POST', `${sb}/sandbox/faults`, { body: { brebRail: 'down', achRail: 'down', pse: 'down' } });
    injected('provider outage (rails + PSE answer 503)');
    await sleep(3000 * profile.hold);
    await setUp({ brebRail: 'up', achRail: 'up', pse: 'up' });
  },
};
async function setUp(body) {
  for (let i = 0; i < 60; i++) {
    const r = await call('POST', `${sb}/sandbox/faults`, { body });
    if (r.status === 200) return;
    await sleep(500);
  }
  throw new Error(`could not reset sandbox faults ${JSON.stringify(body)}`);
}
function sampleIds(map, n) {
  const keys = [...map.keys()];
  const out = [];
  for (let i = 0; i < n && keys.length; i++) out.push(keys.splice(Math.floor(rand() * keys.length), 1)[0]);
  return out;
}

function schedule() {
  const killable = profile.killOnly ?? ['ledger', 'transfer', 'pse-deposit', 'collect-key', 'receipt', 'webhook', 'gateway', 'sandbox'];
  const others = ['natsRestart', 'callbacksDuplicated', 'pgCut', 'callbacksDelayed', 'redisStop', 'providerTimeout', 'providerOutage', 'callbacksDuplicated'];
  const plan = [];
  let o = 0;
  for (let round = 0; round < profile.killRounds; round++) {
    for (const name of killable) {
      plan.push(['kill', name]);
      plan.push([others[o++ % others.length]]);
    }
  }
  while (o < others.length) plan.push([others[o++]]);
  return plan;
}

async function injectFaults(plan) {
  for (const [f, a] of plan) {
    const started = Date.now();
    await FAULTS[f](a);
    faultLog.push(`${f}${a ? ` ${a}` : ''} (${Date.now() - started} ms)`);
    log(`fault ${f}${a ? ` ${a}` : ''} done in ${Date.now() - started} ms; ${record.accepted.size} sends accepted so far`);
    await sleep(profile.gapMs);
  }
}

// ---------------------------------------------------------------------------------------------

async function settle(db) {
  const until = Date.now() + profile.settleSeconds * 1000;
  let last = '';
  for (;;) {
    const outboxes = (await db.query(`select table_schema from information_schema.tables where table_name = 'outbox'`)).rows.map((r) => r.table_schema);
    const pendingOutbox = outboxes.length ? (await db.query(outboxes.map((s) => `select count(*)::int as n from "${s}".outbox where published_at is null`).join(' union all '))).rows.reduce((a, r) => a + r.n, 0) : 0;
    const q = async (sql) => (await db.query(sql)).rows[0].n;
    const state = {
      liveTransfers: await q(`select count(*)::int as n from transfer.transfers where state in ('RECEIVED','RESERVED','AWAITING_APPROVAL','EXECUTING','DISPATCHED')`),
      providerPending: await q(`select count(*)::int as n from sandbox.transfers where status = 'PENDING'`),
      callbacksPending: await q(`select count(*)::int as n from sandbox.callbacks where state in ('pending','sending')`),
      depositSteps: await q(`select count(*)::int as n from pse_deposit.deposits where pending_step is not null`),
      paymentSteps: await q(`select count(*)::int as n from collect_key.payments where pending_step is not null`),
      pendingOutbox,
      consumersBehind: await consumersBehind(common.NATS_URL).catch(() => 1),
    };
    const busy = Object.values(state).some((n) => n > 0);
    const line = JSON.stringify(state);
    if (line !== last) { log(`settling: ${line}`); last = line; }
    if (!busy) return { settled: true, state };
    if (Date.now() > until) return { settled: false, state };
    await sleep(1000);
  }
}

async function main() {
  mkdirSync(logDir, { recursive: true });
  // gRPC ports sit in Linux's ephemeral range: an outgoing connection may hold one for a moment.
  let busy = [];
  for (let i = 0; i < 20; i++) {
    busy = [];
    for (const [k, p] of Object.entries(ports)) if (!(await portFree(p))) busy.push(`${k}:${p}`);
    if (!busy.length) break;
    await sleep(500);
  }
  if (busy.length) throw new Error(`ports in use (another fault run?): ${busy.join(', ')}`);
  log(`profile ${profileName}, seed ${seed}, database ${dbName}, logs in ${logDir}`);
  await adminSql(`drop database if exists "${dbName}" with (force)`);
  await adminSql(`create database "${dbName}"`);
  dbConn = new pg.Client({ connectionString: PG_ADMIN });
  await dbConn.connect();
  await startInfra('nats');
  await startInfra('redis');

  startService('sandbox'); startService('ledger');
  await Promise.all([waitReady('sandbox'), waitReady('ledger')]);
  for (const n of ['transfer', 'pse-deposit', 'collect-key', 'receipt', 'webhook']) startService(n);
  await Promise.all(['transfer', 'pse-deposit', 'collect-key', 'receipt', 'webhook'].map((n) => waitReady(n)));
  startService('gateway');
  await waitReady('gateway');
  log('all processes ready');

  const companies = [];
  for (let i = 0; i < profile.companies; i += 4) companies.push(...await Promise.all(Array.from({ length: Math.min(4, profile.companies - i) }, (_, j) => provision(i + j))));
  const ms = await provisionMultiSig(profile.companies);
  log(`${companies.length} companies provisioned (both wallets credited, 2 collect keys each) + 1 multi-signature company`);

  const started = Date.now();
  const stop = { done: false };
  const load = workload(companies, stop, ms);
  await sleep(2000);
  const plan = schedule();
  await injectFaults(plan);
  await sleep(2000);
  stop.done = true;
  await load;
  const loadSeconds = (Date.now() - started) / 1000;
  log(`workload stopped after ${loadSeconds.toFixed(0)} s; letting everything settle`);
  // Whatever a fault left behind is undone: every switch up, every process running.
  await setUp({ directory: 'up', brebRail: 'up', achRail: 'up', pse: 'up', callbacks: 'up' });
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  const settled = await settle(db);

  const ledger = policyClient(ledgerV1.LedgerServiceClient, `127.0.0.1:${ports.ledger}`, 'ledger', ledgerAccess, 30_000);
  const checks = await runChecks({ db, ledger, record, natsUrl: common.NATS_URL });
  ledger.close();
  const observed = await observations(db);
  const self = await sabotageSelfTest({ db, record });
  log(`self-test: ${self.tried - self.missed.length}/${self.tried} planted violations caught (rolled back)`);
  await db.end();
  checks.unshift({ name: `everything settled within ${profile.settleSeconds} s (no live transfer, callbacks delivered, outboxes drained, consumers caught up)`, violations: settled.settled ? [] : [`not settled: ${JSON.stringify(settled.state)}`] });
  const clientCheck = { name: 'client-observed: same reference → one transfer; insufficient funds refused', violations: record.clientViolations };
  checks.push(clientCheck);
  checks.push({ name: `self-test: each SQL check fires on a planted violation (${self.tried} planted, rolled back)`, violations: self.missed, selfTest: true });
  return { companies: companies.length, loadSeconds, checks, observed };
}

function summary(result, seconds) {
  const lines = [];
  lines.push(`\n## Fault suite (${profileName}), seed ${seed}\n`);
  lines.push('| operation | ok | refused (4xx) | error (5xx / transport) |', '|---|---:|---:|---:|');
  const tot = { ok: 0, refused: 0, error: 0 };
  for (const [k, v] of Object.entries(ops).sort()) { lines.push(`| ${k} | ${v.ok} | ${v.refused} | ${v.error} |`); tot.ok += v.ok; tot.refused += v.refused; tot.error += v.error; }
  lines.push(`| **total** | **${tot.ok}** | **${tot.refused}** | **${tot.error}** |`);
  const kills = Object.entries(faults).filter(([k]) => k.startsWith('kill')).reduce((a, [, n]) => a + n, 0);
  lines.push('', '| fault injected | count |', '|---|---:|');
  for (const [k, v] of Object.entries(faults).sort()) lines.push(`| ${k} | ${v} |`);
  lines.push(`| **kill -9 in total** | **${kills}** |`);
  const violations = result ? result.checks.reduce((a, c) => a + c.violations.length, 0) : NaN;
  if (result) {
    lines.push('', '| invariant check | violations |', '|---|---:|');
    for (const c of result.checks) lines.push(`| ${c.name} | ${c.violations.length} |`);
    lines.push('', '| observed during the run | |', '|---|---|', ...result.observed.map(([k, v]) => `| ${k} | ${v} |`));
    lines.push('', `accepted sends ${record.accepted.size}, PSE deposits ${record.deposits.size} (paid per client ${[...record.deposits.values()].filter((d) => d.paid).length}), inbound Bre-B ${record.incoming.size}; companies ${result.companies}`);
    lines.push(`**${result.checks.length} invariant checks, ${violations} violations**; workload ${result.loadSeconds.toFixed(0)} s, whole run ${seconds.toFixed(0)} s`);
    for (const c of result.checks) for (const v of c.violations.slice(0, 20)) lines.push(`  VIOLATION [${c.name}] ${v}`);
  }
  return { text: lines.join('\n'), kills, violations, tot };
}

async function cleanup(keepDb) {
  stopping = true;
  for (const c of Object.values(running)) { if (c.signalCode === 'SIGSTOP') c.kill('SIGCONT'); }
  await Promise.all(Object.values(running).map(async (c) => {
    if (c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await exited; clearTimeout(t);
  }));
  await stopInfra('nats').catch(() => {});
  await stopInfra('redis').catch(() => {});
  await dbConn?.end().catch(() => {});
  if (!keepDb) await adminSql(`drop database if exists "${dbName}" with (force)`).catch(() => {});
  rmSync(keepDb ? join(work, 'nats') : work, { recursive: true, force: true });
}

process.on('SIGINT', () => { cleanup(false).finally(() => process.exit(130)); });
// Last resort: no child outlives the runner.
process.on('exit', () => {
  for (const c of [...Object.values(running), ...Object.values(infra)]) {
    if (c.exitCode === null && c.signalCode !== 'SIGKILL') { try { c.kill('SIGKILL'); } catch { /* gone */ } }
  }
});
let result, failure;
try { result = await main(); } catch (err) { failure = err; console.error(`[faults] failed: ${err.stack ?? err}`); }
const seconds = (Date.now() - t0) / 1000;
const s = summary(result, seconds);
console.log(s.text);
const ok = !failure && s.violations === 0;
const keep = !ok && process.env.FAULTS_KEEP === '1';
await cleanup(!ok);
if (!ok && !keep) await adminSql(`drop database if exists "${dbName}" with (force)`).catch(() => {});
if (keep) console.log(`[faults] kept database ${dbName} and logs in ${logDir}`);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ profile: profileName, seed, ok, failure: failure ? String(failure.stack ?? failure) : undefined, seconds, ops, faults, kills: s.kills, checks: result?.checks ?? [], violations: s.violations, accepted: record.accepted.size, deposits: record.deposits.size, incoming: record.incoming.size, observed: result?.observed, logDir }, null, 2));
console.log(ok ? '[faults] all invariants held' : `[faults] FAILED (logs: ${logDir})`);
process.exit(ok ? 0 : 1);
