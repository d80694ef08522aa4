// npm run bench: measures, in one run on this machine, with the product's real processes and config:
//   1. bare Koa hello (ceiling) vs GET /wallets/balance through gateway → gRPC → ledger → Postgres
//   2. ledger Reserve (holds/s) over gRPC on one hot wallet and spread over 100 wallets
//   3. pgbench built-in simple-update (ceiling for the ledger)
// and prints a table with the ratios the issues set as targets. Loopback only; bounded in time.
import { fork, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { ledgerV1 } from '@wallet/proto';
import { createAsyncClient } from '@wallet/platform';
import { NODE_FLAGS } from '../../deploy/local/processes.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 32);
const PG_ADMIN = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const benchDb = `wallet_bench_${process.pid}`;
const ports = { gateway: 8180, gatewayOps: 9200, ledger: 50151, ledgerOps: 9201, transfer: 50152, transferOps: 9202, deposit: 50153, depositOps: 9203, collectKey: 50154, collectKeyOps: 9204, receipt: 50155, receiptOps: 9205, sandbox: 8190, smtp: 2625, koa: 8181 };
const children = [];

function dbUrl(name) { const u = new URL(PG_ADMIN); u.pathname = `/${name}`; return u.toString(); }
async function adminSql(sql) { const c = new pg.Client({ connectionString: PG_ADMIN }); await c.connect(); try { await c.query(sql); } finally { await c.end(); } }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitReady(url, name) {
  for (let i = 0; i < 240; i++) {
    try { if ((await fetch(url)).ok) return; } catch { /* not yet */ }
    await sleep(250);
  }
  throw new Error(`${name} not ready`);
}

function startProcess(name, dir, env) {
  // BENCH_PROFILE=gateway (or ledger) writes a V8 CPU profile of that process to .tools/profiles/.
  const prof = process.env.BENCH_PROFILE === name ? ['--cpu-prof', `--cpu-prof-dir=${join(root, '.tools/profiles')}`] : [];
  const child = spawn(process.execPath, [...NODE_FLAGS, ...prof, '--import', '@wallet/platform/otel', 'dist/main.js'], { cwd: join(root, dir), env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  return child;
}

function cleanup() { for (const c of children) if (c.exitCode === null) c.kill('SIGTERM'); }
process.on('exit', cleanup);
process.on('SIGINT', () => { cleanup(); process.exit(130); });

function cannon(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONC, duration: DURATION, pipelining: 1, ...opts }, (err, r) => (err ? reject(err) : resolve(r)));
  });
}
const summarize = (r) => ({
  rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99,
  non2xx: r.non2xx, errors: r.errors, total: r.requests.total,
});

/** CPU seconds (user+sys) used so far by each named group of processes, from /proc. */
function cpuSnapshot(groups) {
  const tick = 100; // USER_HZ on Linux
  const out = {};
  for (const [name, pids] of Object.entries(groups)) {
    let t = 0;
    for (const pid of pids()) {
      try {
        const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
        t += (Number(f[11]) + Number(f[12])) / tick;
      } catch { /* exited */ }
    }
    out[name] = t;
  }
  return out;
}
const pidsOf = (comm) => () => spawnSync('pgrep', ['-x', comm], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);

/** Runs `fn`, returns its result and the CPU µs per operation each process group spent meanwhile. */
async function withCpu(groups, fn, opsOf) {
  const before = cpuSnapshot(groups);
  const r = await fn();
  const after = cpuSnapshot(groups);
  const ops = opsOf(r) || 1;
  const perOp = Object.fromEntries(Object.keys(groups).map((k) => [k, Math.round(((after[k] - before[k]) * 1e6) / ops)]));
  return { r, perOp };
}

async function cpuOf(pid) {
  const r = spawnSync('ps', ['-o', 'rss=,pcpu=', '-p', String(pid)], { encoding: 'utf8' });
  const [rss, cpu] = r.stdout.trim().split(/\s+/).map(Number);
  return { rssMiB: Math.round((rss ?? 0) / 1024), cpu: cpu ?? 0 };
}

/** Runs `fn` with `CONC` workers for DURATION seconds; returns ops/s and latency percentiles. */
async function closedLoop(fn) {
  const lat = [];
  let ops = 0, errors = 0;
  const end = Date.now() + DURATION * 1000;
  await Promise.all(Array.from({ length: CONC }, async (_, w) => {
    let i = 0;
    while (Date.now() < end) {
      const t = process.hrtime.bigint();
      try { await fn(w, i++); ops++; lat.push(Number(process.hrtime.bigint() - t) / 1e6); } catch { errors++; }
    }
  }));
  lat.sort((a, b) => a - b);
  const pct = (p) => (lat.length ? +lat[Math.min(lat.length - 1, Math.floor(lat.length * p))].toFixed(2) : 0);
  return { rps: Math.round(ops / DURATION), p50: pct(0.5), p99: pct(0.99), errors, total: ops };
}

function pgbench() {
  const name = 'wallet_pgbench';
  spawnSync('dropdb', ['-h', '127.0.0.1', '-U', 'postgres', '--if-exists', name]);
  spawnSync('createdb', ['-h', '127.0.0.1', '-U', 'postgres', name]);
  const init = spawnSync('pgbench', ['-h', '127.0.0.1', '-U', 'postgres', '-i', '-q', '-s', '10', name], { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`pgbench -i failed: ${init.stderr}`);
  const run = spawnSync('pgbench', ['-h', '127.0.0.1', '-U', 'postgres', '-b', 'simple-update', '-c', String(CONC), '-j', '2', '-T', String(DURATION), name], { encoding: 'utf8' });
  spawnSync('dropdb', ['-h', '127.0.0.1', '-U', 'postgres', '--if-exists', name]);
  const m = /tps = ([\d.]+) \(without initial connection time\)/.exec(run.stdout) ?? /tps = ([\d.]+)/.exec(run.stdout);
  if (!m) throw new Error(`pgbench output not understood: ${run.stdout} ${run.stderr}`);
  const lat = /latency average = ([\d.]+) ms/.exec(run.stdout);
  return { tps: Math.round(Number(m[1])), latencyAvgMs: lat ? Number(lat[1]) : null };
}

async function main() {
  console.log(`[bench] ${DURATION}s per run, concurrency ${CONC}, node ${process.version}`);
  await adminSql(`drop database if exists "${benchDb}" with (force)`);
  await adminSql(`create database "${benchDb}"`);
  const common = { DATABASE_URL: dbUrl(benchDb), BUS_NAMESPACE: `bench${process.pid}`, LOG_LEVEL: 'warn', NODE_ENV: 'development' };
  try {
    const ledger = startProcess('ledger', 'services/ledger', { ...common, LEDGER_GRPC_PORT: String(ports.ledger), LEDGER_OPS_PORT: String(ports.ledgerOps) });
    await waitReady(`http://127.0.0.1:${ports.ledgerOps}/readyz`, 'ledger');
    const sandbox = startProcess('sandbox', 'services/sandbox', { ...common, SANDBOX_PORT: String(ports.sandbox), SANDBOX_SMTP_PORT: String(ports.smtp), SANDBOX_BREB_CONFIRM_MS: '200', SANDBOX_ACH_CONFIRM_MS: '200' });
    await waitReady(`http://127.0.0.1:${ports.sandbox}/readyz`, 'sandbox');
    const transfer = startProcess('transfer', 'services/transfer', {
      ...common, TRANSFER_GRPC_PORT: String(ports.transfer), TRANSFER_OPS_PORT: String(ports.transferOps),
      LEDGER_GRPC_ADDR: `127.0.0.1:${ports.ledger}`, BREB_DIRECTORY_URL: `http://127.0.0.1:${ports.sandbox}`,
      BREB_RAIL_URL: `http://127.0.0.1:${ports.sandbox}`, ACH_RAIL_URL: `http://127.0.0.1:${ports.sandbox}`,
      RAIL_CALLBACK_BASE_URL: `http://127.0.0.1:${ports.gateway}/webhooks/rails`,
    });
    await waitReady(`http://127.0.0.1:${ports.transferOps}/readyz`, 'transfer');
    // The rest of the product, so the gateway runs with its real dependencies (and is ready).
    startProcess('pse-deposit', 'services/pse-deposit', {
      ...common, DEPOSIT_GRPC_PORT: String(ports.deposit), DEPOSIT_OPS_PORT: String(ports.depositOps), LEDGER_GRPC_ADDR: `127.0.0.1:${ports.ledger}`,
      PSE_PROVIDER_URL: `http://127.0.0.1:${ports.sandbox}`, PSE_CALLBACK_URL: `http://127.0.0.1:${ports.gateway}/webhooks/pse`, SMTP_URL: `smtp://127.0.0.1:${ports.smtp}`,
    });
    startProcess('collect-key', 'services/collect-key', {
      ...common, COLLECT_KEY_GRPC_PORT: String(ports.collectKey), COLLECT_KEY_OPS_PORT: String(ports.collectKeyOps), LEDGER_GRPC_ADDR: `127.0.0.1:${ports.ledger}`,
      BREB_DIRECTORY_URL: `http://127.0.0.1:${ports.sandbox}`, BREB_INCOMING_CALLBACK_URL: `http://127.0.0.1:${ports.gateway}/webhooks/breb/incoming`,
    });
    startProcess('receipt', 'services/receipt', { ...common, RECEIPT_GRPC_PORT: String(ports.receipt), RECEIPT_OPS_PORT: String(ports.receiptOps) });
    for (const [name, port] of [['pse-deposit', ports.depositOps], ['collect-key', ports.collectKeyOps], ['receipt', ports.receiptOps]]) {
      await waitReady(`http://127.0.0.1:${port}/readyz`, name);
    }
    const gateway = startProcess('gateway', 'gateway', {
      ...common, GATEWAY_PORT: String(ports.gateway), GATEWAY_OPS_PORT: String(ports.gatewayOps),
      LEDGER_GRPC_ADDR: `127.0.0.1:${ports.ledger}`, TRANSFER_GRPC_ADDR: `127.0.0.1:${ports.transfer}`,
      DEPOSIT_GRPC_ADDR: `127.0.0.1:${ports.deposit}`, COLLECT_KEY_GRPC_ADDR: `127.0.0.1:${ports.collectKey}`, RECEIPT_GRPC_ADDR: `127.0.0.1:${ports.receipt}`, RATE_LIMIT_PREFIX: `bench${process.pid}`,
    });
    await waitReady(`http://127.0.0.1:${ports.gatewayOps}/readyz`, 'gateway');
    // BENCH_ONLY=sends runs only the end-to-end sends phase (no Koa, balance, holds or pgbench).
    const sendsOnly = process.env.BENCH_ONLY === 'sends';
    if (!sendsOnly) {
      const koa = fork(join(root, 'test/bench/koa-hello.mjs'), [String(ports.koa)], { stdio: 'ignore' });
      children.push(koa);
      await new Promise((r) => koa.once('message', r));
    }

    const gw = `http://127.0.0.1:${ports.gateway}`;
    const admin = async (method, path, body) => {
      const r = await fetch(gw + path, { method, headers: { authorization: 'Bearer dev-admin-token', 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return r.json();
    };
    const co = await admin('POST', '/admin/companies', { name: 'Bench S.A.S.', nit: '900000001-1', taxRegime: 'COMMON' });
    // The benchmark is one client IP; lift this company's limits (a documented per-company setting).
    await admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1_000_000 });
    const key = (await admin('POST', `/admin/companies/${co.id}/api-keys`, { scope: 'READ', label: 'bench' })).key;
    await admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 1_000_000, reference: 'bench' });

    const groups = {
      gateway: () => [gateway.pid], ledger: () => [ledger.pid], transfer: () => [transfer.pid], sandbox: () => [sandbox.pid], 'load generator': () => [process.pid],
      postgres: pidsOf('postgres'), redis: pidsOf('redis-server'),
    };
    let koaR, bal, balR, balCpu, gwRes, sp, spread, hot, ledgerRes, inv;
    if (!sendsOnly) {
    console.log('[bench] warm-up');
    await cannon({ url: `http://127.0.0.1:${ports.koa}/`, duration: 2 });
    await cannon({ url: `${gw}/wallets/balance`, headers: { authorization: `Bearer ${key}` }, duration: 2 });
    console.log('[bench] bare Koa hello');
    koaR = summarize(await cannon({ url: `http://127.0.0.1:${ports.koa}/` }));
    console.log('[bench] GET /wallets/balance');
    bal = await withCpu(groups, async () => summarize(await cannon({ url: `${gw}${process.env.BENCH_PATH ?? "/wallets/balance"}`, headers: { authorization: `Bearer ${key}` } })), (r) => r.total);
    balR = bal.r;
    balCpu = Object.entries(bal.perOp).map(([k, v]) => `${k} ${v}`).join(', ');
    gwRes = await cpuOf(gateway.pid);
    if (process.env.BENCH_ONLY === 'balance') {
      console.log(`balance ${balR.rps}/s p50 ${balR.p50} p99 ${balR.p99}; Koa ${koaR.rps}/s (${((balR.rps / koaR.rps) * 100).toFixed(1)}%)\nCPU µs per request: ${balCpu}`);
      return;
    }

    // Ledger holds over gRPC, the way the transfer service will call it.
    const client = createAsyncClient(ledgerV1.LedgerServiceClient, `127.0.0.1:${ports.ledger}`, { deadlineMs: 10_000 });
    const companies = [];
    for (let i = 0; i < 100; i++) {
      const id = randomUUID();
      const ctx = { requestId: 'bench', companyId: id };
      await client.openWallets({ rails: [ledgerV1.Rail.BREB, ledgerV1.Rail.ACH] }, ctx);
      await client.credit({ idempotencyKey: `bench-fund-${id}`, rail: ledgerV1.Rail.BREB, amountCents: 10n ** 13n }, ctx);
      companies.push(ctx);
    }
    const fee = { fixedFee: 0n, variableFee: 0n, subtotalFee: 0n, ivaApplicable: false, ivaAmount: 0n, totalCharged: 0n };
    const reserve = (ctx) => client.reserve({
      idempotencyKey: `bench-hold-${randomUUID()}`, rail: ledgerV1.Rail.BREB, amount: 100n, fee,
      movement: { id: randomUUID(), status: ledgerV1.MovementStatus.PENDING, details: {} },
    }, ctx);
    console.log('[bench] ledger holds over gRPC, spread over 100 wallets');
    await closedLoop((w, i) => reserve(companies[(w * 7 + i) % 100]));
    sp = await withCpu(groups, () => closedLoop((w, i) => reserve(companies[(w * 7 + i) % 100])), (r) => r.total);
    spread = sp.r;
    console.log('[bench] ledger holds over gRPC, one hot wallet');
    hot = await closedLoop(() => reserve(companies[0]));
    ledgerRes = await cpuOf(ledger.pid);
    inv = await client.checkInvariants({}, { requestId: 'bench' });
    client.close();
    }

    // Sends end to end: HTTP → gateway → transfer (directory, ledger reserve, rail dispatch) → 201,
    // then the rail's signed callback → gateway → transfer → ledger commit → COMPLETED.
    const sendCompanies = [];
    for (let i = 0; i < 100; i++) {
      const c = await admin('POST', '/admin/companies', { name: `Bench Send ${i} S.A.S.`, nit: `9001${String(i).padStart(5, '0')}-1`, taxRegime: 'COMMON' });
      await admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1_000_000 });
      const k = (await admin('POST', `/admin/companies/${c.id}/api-keys`, { scope: 'WRITE', label: 'bench' })).key;
      await admin('POST', `/admin/companies/${c.id}/wallets/BREB/credit`, { amountCents: 100_000_000_000, reference: 'bench' });
      sendCompanies.push({ id: c.id, key: k });
    }
    const destinations = [];
    for (let i = 0; i < 16; i++) {
      const keyValue = `31${String(10_000_000 + i * 7919).slice(0, 8)}`;
      const r = await (await fetch(`${gw}/transfers/resolve-key`, { method: 'POST', headers: { authorization: `Bearer ${sendCompanies[0].key}`, 'content-type': 'application/json' }, body: JSON.stringify({ keyValue }) })).json();
      destinations.push({ destination: { brebKey: { type: r.keyType, value: r.keyValue } }, targetName: r.recipient.fullName, targetDocument: r.recipient.idValue });
    }
    const sentIds = [];
    const sendOnce = async (co, i) => {
      const res = await fetch(`${gw}/transfers/send`, {
        method: 'POST', headers: { authorization: `Bearer ${co.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 1_000 + (i % 50) * 2, ...destinations[i % destinations.length], reference: `b-${randomUUID()}` }),
      });
      const body = await res.json();
      if (res.status !== 201) throw new Error(`${res.status} ${body.error}`);
      sentIds.push([co.key, body.id]);
    };
    console.log('[bench] sends end to end, 100 companies');
    const sendStart = Date.now();
    const sendSpread = await withCpu(groups, () => closedLoop((w, i) => sendOnce(sendCompanies[(w * 7 + i) % 100], i)), (r) => r.total);
    console.log('[bench] sends end to end, one hot wallet');
    const sendHot = await closedLoop((w, i) => sendOnce(sendCompanies[0], w * 100_000 + i));
    // Every accepted send must reach COMPLETED; time until the last one did.
    const ledgerCheck = createAsyncClient(ledgerV1.LedgerServiceClient, `127.0.0.1:${ports.ledger}`, { deadlineMs: 10_000 });
    // No bench amount ends in 13, so none fails: a wallet with nothing pending has all its sends COMPLETED.
    let pendingLeft = 0;
    const settleDeadline = Date.now() + 120_000;
    for (const co of sendCompanies) {
      for (;;) {
        const wallets = await ledgerCheck.getBalances({ ivaApplicable: true }, { requestId: 'bench', companyId: co.id });
        const pendingOut = wallets.wallets.find((w) => w.rail === ledgerV1.Rail.BREB)?.pendingOutCents ?? 0n;
        if (pendingOut === 0n) break;
        if (Date.now() > settleDeadline) { pendingLeft++; break; }
        await sleep(200);
      }
    }
    const settledMs = Date.now() - sendStart;
    const completed = pendingLeft === 0 ? sentIds.length : NaN;
    const invAfterSends = await ledgerCheck.checkInvariants({}, { requestId: 'bench' });
    ledgerCheck.close();

    const ratio = (a, b) => (b ? `${((a / b) * 100).toFixed(1)}%` : 'n/a');
    if (sendsOnly) {
      const sendCpu = Object.entries(sendSpread.perOp).map(([k, v]) => `${k} ${v}`).join(', ');
      console.log([
        '| measurement | ops/s | p50 ms | p99 ms | ratio |', '|---|---:|---:|---:|---|',
        `| POST /transfers/send → 201, 100 companies | ${sendSpread.r.rps} | ${sendSpread.r.p50} | ${sendSpread.r.p99} | |`,
        `| POST /transfers/send → 201, one hot wallet | ${sendHot.rps} | ${sendHot.p50} | ${sendHot.p99} | ${ratio(sendHot.rps, sendSpread.r.rps)} of 100 companies |`,
        `CPU µs per send (100 companies, 201 path plus the callbacks meanwhile): ${sendCpu}`,
        `sends: ${sentIds.length} accepted (errors: spread ${sendSpread.r.errors}, hot ${sendHot.errors}); ${pendingLeft === 0 ? `all COMPLETED ${Math.round(settledMs / 1000)} s after the first send` : `${pendingLeft} companies still had funds pending after 120 s`}; ledger invariants ${invAfterSends.ok ? 'ok' : 'VIOLATED'}`,
      ].join('\n'));
      return;
    }

    console.log('[bench] pgbench simple-update');
    const pgb = pgbench();

    const rows = [
      ['bare Koa hello (HTTP)', koaR.rps, koaR.p50, koaR.p99, ''],
      ['GET /wallets/balance (gateway→gRPC→ledger→PG)', balR.rps, balR.p50, balR.p99, `${ratio(balR.rps, koaR.rps)} of Koa (target ≥ 10%, p99 < 25 ms)`],
      ['pgbench simple-update (TPS)', pgb.tps, '', pgb.latencyAvgMs ?? '', 'avg latency in p99 column'],
      ['ledger Reserve over gRPC, 100 wallets', spread.rps, spread.p50, spread.p99, `${ratio(spread.rps, pgb.tps)} of pgbench (target ≥ 25%)`],
      ['ledger Reserve over gRPC, one wallet', hot.rps, hot.p50, hot.p99, `${ratio(hot.rps, spread.rps)} of spread (target ≥ 40%)`],
      ['POST /transfers/send → 201, 100 companies', sendSpread.r.rps, sendSpread.r.p50, sendSpread.r.p99, `${ratio(sendSpread.r.rps, pgb.tps)} of pgbench (target ≥ 10%)`],
      ['POST /transfers/send → 201, one hot wallet', sendHot.rps, sendHot.p50, sendHot.p99, `${ratio(sendHot.rps, sendSpread.r.rps)} of 100 companies (target ≥ 50%)`],
    ];
    const table = ['| measurement | ops/s | p50 ms | p99 ms | ratio |', '|---|---:|---:|---:|---|',
      ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
    const notes = [
      `errors: balance non-2xx ${balR.non2xx}, transport ${balR.errors}; holds errors spread ${spread.errors}, hot ${hot.errors}`,
      `CPU µs per balance request: ${balCpu}`,
      `CPU µs per hold (spread): ${Object.entries(sp.perOp).map(([k, v]) => `${k} ${v}`).join(', ')}`,
      `CPU µs per send (100 companies, 201 path plus the callbacks meanwhile): ${Object.entries(sendSpread.perOp).map(([k, v]) => `${k} ${v}`).join(', ')}`,
      `sends: ${sentIds.length} accepted (errors: spread ${sendSpread.r.errors}, hot ${sendHot.errors}); ${pendingLeft === 0 ? `all COMPLETED ${Math.round(settledMs / 1000)} s after the first send (≈ ${Math.round(completed / (settledMs / 1000))}/s end to end)` : `${pendingLeft} companies still had funds pending after 120 s`}; ledger invariants ${invAfterSends.ok ? 'ok' : 'VIOLATED'}`,
      `gateway after load: ${gwRes.rssMiB} MiB RSS; ledger: ${ledgerRes.rssMiB} MiB RSS`,
      `ledger invariants after the run: ${inv.ok ? 'ok' : `VIOLATED: ${inv.violations.join('; ')}`} (${inv.postings} postings)`,
      `machine: ${(await import('node:os')).cpus().length} cores; ${DURATION}s runs, concurrency ${CONC}; everything on loopback`,
    ];
    const report = `# Benchmark ${new Date().toISOString()}\n\n${table}\n\n${notes.map((n) => `- ${n}`).join('\n')}\n`;
    console.log(`\n${report}`);
    mkdirSync(join(root, 'test/bench/reports'), { recursive: true });
    writeFileSync(join(root, 'test/bench/reports', `bench-${stamp}.md`), report);
  } finally {
    cleanup();
    await sleep(500);
    await adminSql(`drop database if exists "${benchDb}" with (force)`).catch(() => {});
  }
}

main().then(() => process.exit(0), (err) => { console.error(`[bench] failed: ${err.stack ?? err}`); cleanup(); process.exit(1); });
