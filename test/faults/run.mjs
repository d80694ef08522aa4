// Fault-injection suite: the product's real processes, two replicas of every service as production
// runs them, under a bank-style workload while faults are injected (kill -9 of any replica, replicas
// stalled with SIGSTOP past the sweepers' grace, the ledger's replies slowed, NATS restarted,
// Postgres connections cut, Redis stopped, provider callbacks duplicated / delayed / reordered,
// provider time-outs and outages), then the money invariants checked over the data (README.md
// beside this file).
//
//   node test/faults/run.mjs [--profile full|fast|ha|ha-async] [--json <file>]
//
// ha / ha-async (issue 45): the suite's own Postgres, a primary and a hot standby (synchronous / asynchronous)
// made on loopback, every process given both hosts with target_session_attrs=read-write; the primary is
// crashed under load and the standby promoted (then a fresh standby rebuilt in its place), twice; a three-node
// NATS cluster loses, freezes and restarts nodes; links to a ledger replica and from a replica set to Postgres
// hang (link-proxy.mjs); the WAL archive and a base backup are restored after the run (restore.mjs).
//
// Needs a build (`npx turbo run build`). Owns its NATS (`nats-server`) and Redis (`redis-server`)
// so that it can restart and stop them; uses the shared Postgres with a database of its own (only
// that database's connections are cut). Exit code 0 only when every invariant held.
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Secret, TOTP } from 'otpauth';
import { ledgerV1 } from '@wallet/proto';
// Ledger calls as their real callers make them over the mesh (the gateway for an operator or a
// company, transfer for holds, ops for the invariant report): the development PKI, allow-lists on.
import { baseBackup, makeArchiveDir, policyClient, startPrimary, startStandby } from '@wallet/platform/testing';
import { pgClientFor } from '@wallet/platform';
import { ledgerAccess } from '@wallet/ledger/testing';
import { NODE_FLAGS } from '../../deploy/local/processes.mjs';
import { connect as natsConnect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { consumersBehind, observations, runChecks, sabotageSelfTest } from './checks.mjs';
import { startLinkHost } from './link-proxy.mjs';
import { restoreDrill, withDatabase } from './restore.mjs';
import { SUBSCRIBED, startWebhookReceiver, webhookOrderCheck } from './webhooks.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const argv = process.argv.slice(2);
const arg = (name, def) => {
  const i = argv.lastIndexOf(`--${name}`); // the last one wins: `npm run test:faults -- --profile ha`
  return i >= 0 ? argv[i + 1] : def;
};
const profileName = arg('profile', process.env.FAULTS_PROFILE ?? 'full');
const jsonOut = arg('json');

/**
 * The product's services; each runs REPLICAS processes (the sandbox, the provider simulator, one).
 * The reconciliation runs with no schedule (RECON_SCHEDULE off: the workload's days are still open),
 * reading the sandbox's reports; killed and stalled like the others.
 */
const PRODUCT = ['ledger', 'transfer', 'pse-deposit', 'collect-key', 'receipt', 'webhook', 'reconciliation', 'gateway'];
const REPLICAS = 2;

/**
 * full: npm run test:faults (4 rounds: a kill -9 of a replica of every service and of the sandbox,
 * a stall of a replica of every service, a slow-ledger window, the other faults; ~8 min).
 * fast: the part `npm test` runs (a replica of transfer, ledger and gateway and the sandbox killed,
 * a replica of every service stalled, one slow-ledger window, one of every other fault; ~1.5 min).
 * stallMs / slowMs / slowDelayMs: [lo, hi) ranges, every one longer than the grace (1 s).
 * Ports differ so both can run at the same time; neither collides with `npm run up` or the bench.
 */
const PROFILES = {
  full: {
    companies: 20,
    workers: 12,
    rounds: 4,
    portBases: [0],
    gapMs: 1200,
    settleSeconds: 180,
    hold: 1,
    stallMs: [2000, 4000],
    slowMs: [3000, 5000],
    slowDelayMs: [1500, 2500],
  },
  fast: {
    companies: 4,
    workers: 6,
    rounds: 1,
    portBases: [20, 40, 60],
    gapMs: 300,
    settleSeconds: 60,
    hold: 0.6,
    killOnly: ['transfer', 'ledger', 'gateway', 'sandbox'],
    stallMs: [2000, 3000],
    slowMs: [3000, 4000],
    slowDelayMs: [1500, 2500],
  },
};
/**
 * ha / ha-async (issue 45): Postgres failover under load. The suite's own primary and hot standby
 * (synchronous / asynchronous replication) on loopback; each `pgFailover` crashes the primary
 * (`pg_ctl stop -m immediate`), promotes the standby and rebuilds a standby in the old one's place. Kills and
 * stalls of the services that write most (ledger, transfer), the rest of the fast profile's faults.
 */
PROFILES.ha = {
  ...PROFILES.fast,
  portBases: [100, 120],
  settleSeconds: 90,
  killOnly: ['transfer', 'ledger'],
  stallOnly: ['transfer', 'ledger', 'pse-deposit', 'collect-key'],
  others: [
    'pgFailover',
    'linkHang',
    'natsNodeKill',
    'pgLinkHang',
    'callbacksDuplicated',
    'natsNodePause',
    'linkHang',
    'pgFailover',
    'pgLinkHang',
    'natsRestart',
    'pgCut',
    'natsNodeKill',
    'linkHangLong',
  ],
  /** Partitions: longer than the calls' deadlines (5 s) and the sweepers' grace. */
  hangMs: [6000, 9000],
  /** The long one: past the gRPC keep-alive's verdict (10 s + 5 s). */
  longHangMs: 30_000,
  postgres: 'synchronous',
  /** A three-node NATS cluster, every stream at R3 (NATS_STREAM_REPLICAS=3). */
  natsNodes: 3,
};
/**
 * ha-async: the standby asynchronous, its replication stream passed through a proxy that holds every chunk the
 * primary sends for `replicationDelayMs` (a standby a few hundred ms behind, as across zones under load): the
 * commits of that window are acknowledged to clients and gone after the failover. What it loses is the measurement.
 */
PROFILES['ha-async'] = { ...PROFILES.ha, postgres: 'asynchronous', replicationDelayMs: 300 };
const profile = PROFILES[profileName];
if (!profile) {
  console.error(`unknown profile ${profileName} (full | fast | ha | ha-async)`);
  process.exit(2);
}
const seed = Number(process.env.FAULTS_SEED ?? 20261121);

// The first base whose ports are all free (the fast profile tries a few: `npm test` may overlap another run).
// Every port is below the kernel's ephemeral range (32768-60999), so an outgoing connection cannot hold one.
// Replica 0 keeps the ports of the single-replica layout; replica 1 takes the next free block.
// The reconciliation, added later, takes the next ports after the others' (ops 9314/9315, gRPC
// 28365/28366): each base's block stays within 16 ports, below the next base (+20).
const FIRST_SIX = ['ledger', 'transfer', 'pse-deposit', 'collect-key', 'receipt', 'webhook'];
const GRPC_SERVICES = [...FIRST_SIX, 'reconciliation'];
const portsAt = (b) => ({
  gateway: [8380 + b, 8381 + b],
  ops: {
    gateway: [9300 + b, 9307 + b],
    ...Object.fromEntries(FIRST_SIX.map((n, i) => [n, [9301 + b + i, 9308 + b + i]])),
    reconciliation: [9314 + b, 9315 + b],
  },
  grpc: {
    ...Object.fromEntries(FIRST_SIX.map((n, i) => [n, [28351 + b + i, 28357 + b + i]])),
    reconciliation: [28365 + b, 28366 + b],
  },
  /** The slow-ledger proxies: every ledger client dials these, each forwards to one ledger replica. */
  ledgerProxy: [28363 + b, 28364 + b],
  sandbox: 8390 + b,
  /** The companies' webhook endpoints (webhooks.mjs). */
  webhooks: 8396 + b,
  smtp: 2635 + b,
  nats: 4322 + b,
  /** ha profiles: the NATS cluster's nodes (client ports; the first is `nats`) and their route ports. */
  natsNodes: [4322 + b, 4323 + b, 4324 + b],
  natsRoutes: [6422 + b, 6423 + b, 6424 + b],
  redis: 6479 + b,
  /** ha profiles: the suite's own Postgres, primary and standby (they swap at each failover). */
  pg: [5462 + b, 5463 + b],
  /** ha-async: the delaying proxy in front of the primary that the standby's replication dials. */
  pgReplication: 5464 + b,
  /** ha profiles: what replica r of every service dials for Postgres: a proxy in front of each node (pg[0], pg[1]). */
  pgLinks: [
    [5465 + b, 5466 + b],
    [5467 + b, 5468 + b],
  ],
});
const portList = (p) => [
  ...p.gateway,
  ...Object.values(p.ops).flat(),
  ...Object.values(p.grpc).flat(),
  ...p.ledgerProxy,
  p.sandbox,
  p.webhooks,
  p.smtp,
  p.nats,
  p.redis,
  ...(profile.postgres ? p.pg : []),
  ...(profile.replicationDelayMs ? [p.pgReplication] : []),
  ...(profile.postgres ? p.pgLinks.flat() : []),
  ...(profile.natsNodes ? [...p.natsNodes.slice(1), ...p.natsRoutes] : []),
];
let ports = portsAt(profile.portBases[0]);
for (const b of profile.portBases) {
  const free = await Promise.all(portList(portsAt(b)).map(portFree));
  if (free.every(Boolean)) {
    ports = portsAt(b);
    break;
  }
}
/** The degradable links (link-proxy.mjs), served by a thread of their own. */
const links = await startLinkHost();
/** ha-async: the delaying proxy the standby's replication dials (made again at each rebuild: its upstream is the primary). */
let replicationProxy;
async function replicationVia(primaryPort) {
  if (!profile.replicationDelayMs) return {};
  if (replicationProxy) await replicationProxy.close();
  replicationProxy = await links.link(ports.pgReplication, primaryPort);
  replicationProxy.delayMs = profile.replicationDelayMs;
  return { via: ports.pgReplication };
}
/** ha profiles: where every node archives its WAL (the backups restore.mjs restores). */
const archiveDir = profile.postgres ? makeArchiveDir() : undefined;
/**
 * ha profiles: the primary and its standby, made now (before any process reads the URL). Every process, and
 * the suite itself, is given both hosts with target_session_attrs=read-write (docs/operations.md "Database failover").
 */
const pgPair = profile.postgres
  ? await (async () => {
      const primary = startPrimary(ports.pg[0], { archiveDir, ...(profile.postgres === 'synchronous' ? { synchronousStandby: 'faults_standby' } : {}) });
      try {
        return { primary, standby: startStandby(primary, ports.pg[1], 'faults_standby', { archiveDir, ...(await replicationVia(primary.port)) }) };
      } catch (err) {
        primary.destroy();
        throw err;
      }
    })()
  : undefined;
const PG_ADMIN = pgPair
  ? `postgresql://postgres@127.0.0.1:${ports.pg[0]},127.0.0.1:${ports.pg[1]}/postgres?target_session_attrs=read-write`
  : (process.env.TEST_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
const dbName = `wallet_faults_${profileName.replace(/-/g, '_')}_${process.pid}`;
const dbUrl = withDatabase(PG_ADMIN, dbName);
const namespace = `faults${profileName.replace(/-/g, '_')}${process.pid}`;
const work = join(tmpdir(), `wallet-faults-${profileName}-${process.pid}`);
const logDir = join(work, 'logs');
const gateways = ports.gateway.map((p) => `http://127.0.0.1:${p}`);
const sb = `http://127.0.0.1:${ports.sandbox}`;
const local = (list) => list.map((p) => `127.0.0.1:${p}`).join(',');
/** What the clients of a service dial: both replicas (round robin); the ledger through its proxies. */
const targetOf = (name) => (name === 'ledger' ? local(ports.ledgerProxy) : local(ports.grpc[name]));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Relative and wall-clock time (the services' logs carry ISO times: a fault is matched to them by the latter).
const log = (msg) => console.log(`[faults ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s ${new Date().toISOString().slice(11, 23)}] ${msg}`);
const t0 = Date.now();

// Deterministic choices (the timing of faults still varies from run to run).
let rngState = seed >>> 0;
function rand() {
  rngState = (rngState + 0x6d2b79f5) >>> 0;
  let t = rngState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const between = (lo, hi) => lo + Math.floor(rand() * (hi - lo));
/**
 * Which replica a fault hits: fixed by the seed for each (fault, service), then alternating from
 * round to round, so that the full profile hits replica 0 and replica 1 of every service.
 */
const replicaFor = (fault, name, round) => (createHash('sha256').update(`${seed}:${fault}:${name}`).digest()[0] + round) % REPLICAS;

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
    const ok = await new Promise((r) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.end();
        r(true);
      });
      s.once('error', () => r(false));
    });
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on ${port}`);
}
async function adminSql(sql, params = []) {
  const c = pgClientFor(PG_ADMIN);
  await c.connect();
  try {
    return await c.query(sql, params);
  } finally {
    await c.end();
  }
}

const infra = {};
/** The NATS processes of the run: `nats`, or (ha profiles) `nats-1`, `nats-2`, `nats-3`, a JetStream cluster. */
const natsServers = (profile.natsNodes ? ports.natsNodes : [ports.nats]).map((p) => `nats://127.0.0.1:${p}`);
const NATS_NODES = profile.natsNodes ? Array.from({ length: profile.natsNodes }, (_, i) => `nats-${i + 1}`) : ['nats'];
function natsArgs(name) {
  if (name === 'nats') return ['-js', '-a', '127.0.0.1', '-p', String(ports.nats), '-sd', join(work, 'nats')];
  const i = NATS_NODES.indexOf(name);
  const routes = ports.natsRoutes.filter((_, j) => j !== i).map((p) => `nats://127.0.0.1:${p}`);
  return [
    ...['-js', '-a', '127.0.0.1', '-p', String(ports.natsNodes[i]), '-sd', join(work, 'nats', name), '-n', name],
    ...['--cluster_name', 'wallet_faults', '--cluster', `nats://127.0.0.1:${ports.natsRoutes[i]}`, '--routes', routes.join(',')],
  ];
}
function startInfra(name) {
  if (stopping) throw new Error('the run is stopping');
  const out = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
  const child = name.startsWith('nats')
    ? spawn('/usr/sbin/nats-server', natsArgs(name), { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('/usr/bin/redis-server', ['--port', String(ports.redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  infra[name] = child;
  return waitPort(name === 'nats' ? ports.nats : name.startsWith('nats-') ? ports.natsNodes[NATS_NODES.indexOf(name)] : ports.redis);
}
/** Every NATS process up; a cluster also with a JetStream meta leader (before it, no stream can be made). */
async function startNats() {
  await Promise.all(NATS_NODES.map((n) => startInfra(n)));
  if (NATS_NODES.length === 1) return;
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      const nc = await natsConnect({ servers: natsServers });
      try {
        await (await jetstreamManager(nc)).getAccountInfo();
        return;
      } finally {
        await nc.close();
      }
    } catch (err) {
      if (Date.now() > until) throw new Error(`the NATS cluster has no JetStream leader after 30 s: ${err.message}`, { cause: err });
      await sleep(250);
    }
  }
}
async function stopInfra(name, signal = 'SIGTERM') {
  const c = infra[name];
  if (!c || c.exitCode !== null || c.signalCode !== null) return;
  const exited = new Promise((r) => c.once('exit', r));
  c.kill(signal);
  await exited;
}

// ---------------------------------------------------------------------------------------------
// The links the suite degrades (link-proxy.mjs): every ledger client dials a proxy in front of each
// ledger replica (slow replies, a hung link); in the ha profiles every replica r of every service
// reaches Postgres through its own pair of proxies (pgLinks[r], one per node), so one replica set
// can be cut off from the database while the other is not.
let proxies = [];
/** The companies' webhook endpoints (webhooks.mjs). */
let webhookReceiver;
/** The ledger links' counters, read at the end of the run. */
let ledgerLinks = [];
/** ha profiles: pgLinks[r][i], the proxy replica r dials for Postgres node i. */
let pgLinks = [];
/** ha profiles: replica r's database URL, through its own links (the sandbox, the provider, dials the nodes directly). */
const dbUrlOf = (r) =>
  pgPair && r !== undefined
    ? withDatabase(`postgresql://postgres@${local([ports.pgLinks[r][0]])},${local([ports.pgLinks[r][1]])}/postgres?target_session_attrs=read-write`, dbName)
    : dbUrl;

// ---------------------------------------------------------------------------------------------
// The product's processes, started as deploy/local/up.mjs and the bench do: two replicas of each
// service (`ledger/0`, `ledger/1`, …), each on its own gRPC and ops ports, and one sandbox.

const common = {
  DATABASE_URL: dbUrl,
  NATS_URL: natsServers.join(','),
  // ha profiles: every stream at R3 on the three-node cluster, as production runs it
  ...(profile.natsNodes ? { NATS_STREAM_REPLICAS: String(profile.natsNodes) } : {}),
  BUS_NAMESPACE: namespace,
  LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'warn',
  NODE_ENV: 'development',
};
const APPROVAL_TTL = 15; // multi-signature sends nobody signs expire within the run
// Small pools: the Postgres is shared (max_connections 100) with other people's tests: 2 per process.
const POOL = 2;
// Short graces so that the windows are wide: a step in flight for 1 s in a replica (stalled, or
// waiting on a slow ledger) is taken over by the sweeper of the other replica (or its own).
const sweep = { SWEEPER_INTERVAL_MS: '500', SWEEPER_GRACE_SECONDS: '1', PROVIDER_HTTP_TIMEOUT_MS: '1500', BATCH_FUNDING_LEASE_SECONDS: '5' };
const PREFIX = {
  ledger: 'LEDGER',
  transfer: 'TRANSFER',
  'pse-deposit': 'DEPOSIT',
  'collect-key': 'COLLECT_KEY',
  receipt: 'RECEIPT',
  webhook: 'WEBHOOK',
  reconciliation: 'RECONCILIATION',
  gateway: 'GATEWAY',
  sandbox: 'SANDBOX',
};
/** A process's key: `sandbox`, or `<service>/<replica>`. */
const keyOf = (name, r) => (name === 'sandbox' ? 'sandbox' : `${name}/${r}`);
const parseKey = (key) => {
  const [name, r] = key.split('/');
  return { name, r: r === undefined ? undefined : Number(r) };
};
const opsPortOf = (key) => {
  const { name, r } = parseKey(key);
  return name === 'sandbox' ? ports.sandbox : ports.ops[name][r];
};

function envOf(name, r) {
  const P = PREFIX[name];
  // A replica's provider callbacks go to "its" gateway (the provider has one URL per request, as behind a load balancer).
  const gw = gateways[r ?? 0];
  if (name === 'sandbox') {
    return {
      SANDBOX_HOST: '127.0.0.1',
      SANDBOX_PORT: ports.sandbox,
      SANDBOX_DB_POOL_MAX: POOL,
      SANDBOX_SMTP_PORT: ports.smtp,
      SANDBOX_PUBLIC_URL: sb,
      SANDBOX_BREB_CONFIRM_MS: 300,
      SANDBOX_ACH_CONFIRM_MS: 600,
      SANDBOX_CALLBACK_RETRY_BASE_MS: 200,
      SANDBOX_CALLBACK_RETRY_MAX_MS: 2000,
      SANDBOX_CALLBACK_TIMEOUT_MS: 3000,
    };
  }
  if (name === 'gateway') {
    return {
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: ports.gateway[r],
      GATEWAY_OPS_PORT: ports.ops.gateway[r],
      GATEWAY_DB_POOL_MAX: POOL,
      REDIS_URL: `redis://127.0.0.1:${ports.redis}`,
      RATE_LIMIT_PREFIX: namespace,
      LEDGER_GRPC_ADDR: targetOf('ledger'),
      TRANSFER_GRPC_ADDR: targetOf('transfer'),
      DEPOSIT_GRPC_ADDR: targetOf('pse-deposit'),
      COLLECT_KEY_GRPC_ADDR: targetOf('collect-key'),
      RECEIPT_GRPC_ADDR: targetOf('receipt'),
      WEBHOOK_GRPC_ADDR: targetOf('webhook'),
      RECONCILIATION_GRPC_ADDR: targetOf('reconciliation'),
    };
  }
  const own = { [`${P}_GRPC_HOST`]: '127.0.0.1', [`${P}_GRPC_PORT`]: ports.grpc[name][r], [`${P}_OPS_PORT`]: ports.ops[name][r], [`${P}_DB_POOL_MAX`]: POOL };
  switch (name) {
    case 'ledger':
      return own;
    case 'transfer':
      return {
        ...own,
        ...sweep,
        LEDGER_GRPC_ADDR: targetOf('ledger'),
        BREB_DIRECTORY_URL: sb,
        BREB_RAIL_URL: sb,
        ACH_RAIL_URL: sb,
        RAIL_CALLBACK_BASE_URL: `${gw}/webhooks/rails`,
        RAIL_CONFIRM_TIMEOUT_SECONDS: 5,
        RAIL_DISPATCH_RETRY_BASE_MS: 200,
        RAIL_DISPATCH_RETRY_MAX_MS: 2000,
        RAIL_DISPATCH_TIMEOUT_SECONDS: 120,
        APPROVAL_TTL_SECONDS: APPROVAL_TTL,
      };
    case 'pse-deposit':
      return {
        ...own,
        ...sweep,
        LEDGER_GRPC_ADDR: targetOf('ledger'),
        PSE_PROVIDER_URL: sb,
        PSE_CALLBACK_URL: `${gw}/webhooks/pse`,
        SMTP_URL: `smtp://127.0.0.1:${ports.smtp}`,
      };
    case 'collect-key':
      return { ...own, ...sweep, LEDGER_GRPC_ADDR: targetOf('ledger'), BREB_DIRECTORY_URL: sb, BREB_INCOMING_CALLBACK_URL: `${gw}/webhooks/breb/incoming` };
    case 'receipt':
      return own;
    case 'webhook':
      return { ...own, WEBHOOK_POLL_INTERVAL_MS: 500, WEBHOOK_RETRY_BASE_MS: 300, WEBHOOK_RETRY_MAX_DELAY_MS: 2000 };
    case 'reconciliation':
      return {
        ...own,
        LEDGER_GRPC_ADDR: targetOf('ledger'),
        TRANSFER_GRPC_ADDR: targetOf('transfer'),
        DEPOSIT_GRPC_ADDR: targetOf('pse-deposit'),
        COLLECT_KEY_GRPC_ADDR: targetOf('collect-key'),
        RECON_REPORTS_URL: `${sb}/sandbox/reports`,
        RECON_SCHEDULE: 'off',
        RECON_WORK_DIR: join(work, `recon-${r}`),
      };
    default:
      throw new Error(`unknown service ${name}`);
  }
}
const DIR = { sandbox: 'services/sandbox', gateway: 'gateway' };
const running = {}; // key → child process
const stopped = new Set(); // children under SIGSTOP right now (SIGCONT at cleanup)
let stopping = false; // set by cleanup: nothing is (re)started after it

/** Replica 0's first start applies the migrations; replica 1 and every restart never migrate. */
function startService(key, { restart = false } = {}) {
  if (stopping) throw new Error('the run is stopping');
  const { name, r } = parseKey(key);
  const out = createWriteStream(join(logDir, `${key.replace('/', '-')}.log`), { flags: 'a' });
  const env = {
    ...process.env,
    ...common,
    DATABASE_URL: dbUrlOf(r),
    OTEL_SERVICE_NAME: name,
    SERVICE_INSTANCE_ID: key.replace('/', '-'),
    ...Object.fromEntries(Object.entries(envOf(name, r)).map(([k, v]) => [k, String(v)])),
  };
  delete env.NODE_OPTIONS;
  if (restart || (r ?? 0) > 0) env[`${PREFIX[name]}_MIGRATE_ON_START`] = 'false';
  const child = spawn(process.execPath, [...NODE_FLAGS, '--import', '@wallet/platform/otel', 'dist/main.js'], {
    cwd: join(root, DIR[name] ?? `services/${name}`),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  running[key] = child;
  return child;
}
async function waitReady(key, timeoutMs = 60_000) {
  const url = `http://127.0.0.1:${opsPortOf(key)}/readyz`;
  const child = running[key];
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${key} exited (code ${child.exitCode}); see ${join(logDir, `${key.replace('/', '-')}.log`)}`);
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(1000) })).ok) return;
    } catch {
      /* not yet */
    }
    await sleep(150);
  }
  throw new Error(`${key} not ready after ${timeoutMs / 1000} s; see ${join(logDir, `${key.replace('/', '-')}.log`)}`);
}
async function kill9(key) {
  const c = running[key];
  const exited = c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : Promise.resolve();
  c.kill('SIGKILL');
  await exited;
}

// Postgres connections of the run's database (every replica's pool), sampled through the run.
const pgConnections = { peakRun: 0, peakServer: 0, maxConnections: 0, samples: 0 };
async function samplePgConnections() {
  try {
    const r = await dbConn.query(
      `select count(*) filter (where datname = $1)::int as run, count(*)::int as server, current_setting('max_connections')::int as max
        from pg_stat_activity where backend_type = 'client backend'`,
      [dbName],
    );
    const { run, server, max } = r.rows[0];
    pgConnections.peakRun = Math.max(pgConnections.peakRun, run);
    pgConnections.peakServer = Math.max(pgConnections.peakServer, server);
    pgConnections.maxConnections = max;
    pgConnections.samples++;
  } catch {
    /* the admin connection is busy or gone: next time */
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP clients: tolerate faults, record what they know.

const ops = {}; // kind → { ok, refused, error }
const totalErrors = () => Object.values(ops).reduce((a, o) => a + o.error, 0);
function count(kind, outcome) {
  (ops[kind] ??= { ok: 0, refused: 0, error: 0 })[outcome]++;
}
/** A URL starting with GW goes to the gateway replicas in turn (as a load balancer in front of them would). */
const GW = '@gateway';
let gwTurn = 0;
const gatewayCalls = gateways.map(() => 0);
/** When each call through a gateway failed (5xx, or no answer): what a hung link costs the clients, and for how long. */
const gatewayFailures = [];
async function call(method, url, opts = {}) {
  const r = await callOnce(method, url, opts);
  if (url.startsWith(GW) && (r.status === 0 || r.status >= 500)) gatewayFailures.push(Date.now());
  return r;
}
async function callOnce(method, url, { token, body, timeoutMs = 10_000, forwardedFor } = {}) {
  if (url.startsWith(GW)) {
    const i = gwTurn++ % gateways.length;
    gatewayCalls[i]++;
    url = gateways[i] + url.slice(GW.length);
  }
  const headers = {};
  if (forwardedFor) headers['x-forwarded-for'] = forwardedFor; // the gateway trusts loopback as a proxy
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, body: json, text };
  } catch (err) {
    return { status: 0, body: undefined, text: String(err?.cause?.code ?? err?.name ?? err) };
  }
}
const ADMIN = 'dev-admin-token';
async function admin(method, path, body, tries = 20) {
  for (let i = 0; ; i++) {
    const r = await call(method, GW + path, { token: ADMIN, body });
    if (r.status >= 200 && r.status < 300) return r.body;
    if (i >= tries || (r.status >= 400 && r.status < 500)) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    await sleep(500);
  }
}

const bogotaDate = (t) => new Date(t - 5 * 3600_000).toISOString().slice(0, 10);

/**
 * The providers' side after the storm (docs/reconciliation.md): every rail's settlement report of each Bogotá day
 * the run touched, reconciled by the reconciliation service through a gateway, as an operator would.
 * Every run must be RECONCILED, and every break must be about a transfer or deposit for which a money
 * exception already says what went wrong (a payout the rail made after we released it, an outcome
 * nobody could tell); a break about anything else is a difference nobody would have noticed.
 */
async function reconciliationCheck(db, days) {
  const r = await reconcileDays(db, days);
  return {
    name: `reconciliation: the four rails' reports of ${days.join(', ')} RECONCILED (${r.lines} lines); each of the ${r.breaks.length} breaks is about a resource with a money exception`,
    violations: [...r.failed, ...r.unexcused],
  };
}

/**
 * The four rails' reports of `days` reconciled through a gateway: the runs that did not end RECONCILED, the lines,
 * every break, and those no money exception of `db` (the database the product runs on) is about.
 */
async function reconcileDays(db, days) {
  const exc = await db.query('select resource_id from transfer.money_exceptions union all select resource_id from pse_deposit.money_exceptions');
  const excused = new Set(exc.rows.map((r) => r.resource_id));
  const failed = [];
  const breaks = [];
  let lines = 0;
  for (const date of days) {
    for (const rail of ['breb', 'ach', 'pse', 'breb-inbound']) {
      let run = await admin('POST', '/admin/reconciliations', { rail, date });
      const until = Date.now() + 120_000;
      while (run.status === 'RUNNING' && Date.now() < until) {
        await sleep(500);
        run = await admin('GET', `/admin/reconciliations/${run.id}`);
      }
      if (run.status !== 'RECONCILED') {
        failed.push(`${rail} ${date}: ${run.status} ${run.rejectReason ?? ''} ${run.detail ?? ''}`.trim());
        continue;
      }
      lines += run.report.lines;
      let cursor = null;
      do {
        const page = await admin('GET', `/admin/reconciliations/${run.id}/breaks?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        breaks.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
    }
  }
  const unexcused = breaks
    .filter((b) => !(b.ourId && excused.has(b.ourId)))
    .map((b) => `${b.key}: ${b.kind} (difference ${b.differenceCents}) with no money exception about it`);
  return { failed, breaks, lines, unexcused };
}

/** A Map that remembers when each key was set (a send's acceptance: what a failover may lose). */
class TimedMap extends Map {
  times = new Map();
  lastSetAt = 0;
  set(k, v) {
    this.lastSetAt = Date.now();
    this.times.set(k, this.lastSetAt);
    return super.set(k, v);
  }
}
const record = {
  accepted: new TimedMap(), // transfer id → { companyId, rail, amount, reference }
  refusedRefs: [], // { companyId, reference, status, error } — 4xx with a unique reference
  duplicatePairs: [], // { companyId, reference, ids: [..] }
  deposits: new Map(), // deposit id → { companyId, amount, paid: true|false|undefined }
  incoming: new Map(), // providerTransferId → { companyId, keyValue, amount }
  clientViolations: [],
  batches: [], // { companyId, id, items, executed: true|false|undefined } — bulk payouts (docs/batches.md)
};

const payer = {
  payerDocumentTypeId: 1,
  payerDocumentNumber: '1020304050',
  payerFirstName: 'Laura',
  payerLastName: 'Gómez Ruiz',
  payerEmail: 'laura@example.com',
  payerPhone: '3101234567',
};
const achDest = (i) => ({
  bankAccount: {
    bankId: 1,
    accountTypeId: 20,
    accountNumber: `1234567${String(8000 + i).padStart(4, '0')}`,
    documentTypeId: 1,
    documentNumber: `10203${String(10000 + i)}`,
    holderFirstName: 'Ana María',
    holderLastName: 'Pérez Gómez',
  },
});

async function provision(i) {
  const c = await admin('POST', '/admin/companies', {
    name: `Faults ${i} S.A.S.`,
    nit: `9009${String(i).padStart(5, '0')}-1`,
    taxRegime: i % 2 ? 'SIMPLE' : 'COMMON',
    wallets: ['BREB', 'ACH'],
  });
  await admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1_000_000 });
  const write = (await admin('POST', `/admin/companies/${c.id}/api-keys`, { scope: 'WRITE', label: 'faults-write' })).key;
  const read = (await admin('POST', `/admin/companies/${c.id}/api-keys`, { scope: 'READ', label: 'faults-read' })).key;
  for (const rail of ['BREB', 'ACH'])
    await admin('POST', `/admin/companies/${c.id}/wallets/${rail}/credit`, { amountCents: 20_000_000, reference: `faults-seed-${rail}` });
  const keys = [];
  for (let k = 0; k < 2; k++) {
    for (let t = 0; ; t++) {
      const r = await call('POST', `${GW}/breb/collect-keys`, { token: write, body: { externalId: `cliente-${k}`, name: `Cliente ${k}` } });
      if (r.status === 201 || r.status === 200) {
        keys.push(r.body.key.value);
        break;
      }
      if (t > 20) throw new Error(`collect key: ${r.status} ${r.text}`);
      await sleep(500);
    }
  }
  // its webhook endpoint: every transfer and deposit event (webhooks.mjs checks order and completeness)
  const path = `/hooks/${i}`;
  for (let t = 0; ; t++) {
    const r = await call('POST', `${GW}/webhooks/endpoints`, { token: write, body: { url: `http://127.0.0.1:${ports.webhooks}${path}`, events: SUBSCRIBED } });
    if (r.status === 201) {
      webhookReceiver.secrets.set(path, r.body.secret);
      webhookReceiver.endpoints.set(path, r.body.id);
      break;
    }
    if (t > 20) throw new Error(`webhook endpoint: ${r.status} ${r.text}`);
    await sleep(500);
  }
  const dests = [];
  for (const keyValue of [`31${String(20_000_000 + i * 7919).slice(0, 8)}`, `@faults${i}dest`]) {
    for (let t = 0; ; t++) {
      const r = await call('POST', `${GW}/transfers/resolve-key`, { token: write, body: { keyValue } });
      if (r.status === 200) {
        dests.push({
          destination: { brebKey: { type: r.body.keyType, value: r.body.keyValue } },
          targetName: r.body.recipient.fullName,
          targetDocument: r.body.recipient.idValue,
        });
        break;
      }
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
  const body =
    rail === 'BREB'
      ? { amount, ...pick(co.dests), ...(reference ? { reference } : {}) }
      : { amount, destination: achDest(co.index), description: 'Pago proveedor', ...(reference ? { reference } : {}) };
  const r = await call('POST', `${GW}/transfers/send`, { token: co.write, body });
  if (r.status === 201 || r.status === 200) {
    count(kind, 'ok');
    record.accepted.set(r.body.id, { companyId: co.id, rail, amount, reference });
  } else if (r.status >= 400 && r.status < 500) {
    count(kind, 'refused');
    if (reference && r.status !== 429) record.refusedRefs.push({ companyId: co.id, reference, status: r.status, error: r.body?.error });
  } else count(kind, 'error');
}

async function duplicateSendOp(co) {
  const reference = `dup-${randomUUID()}`;
  const body = { amount: amountFor('ok'), ...pick(co.dests), reference };
  const rs = await Promise.all([0, 1, 2].map(() => call('POST', `${GW}/transfers/send`, { token: co.write, body })));
  const ids = new Set();
  for (const r of rs) {
    if (r.status === 201 || r.status === 200) {
      count('send BREB, same reference ×3', 'ok');
      ids.add(r.body.id);
      record.accepted.set(r.body.id, { companyId: co.id, rail: 'BREB', amount: body.amount, reference });
    } else if (r.status >= 400 && r.status < 500) count('send BREB, same reference ×3', 'refused');
    else count('send BREB, same reference ×3', 'error');
  }
  record.duplicatePairs.push({ companyId: co.id, reference, ids: [...ids] });
  if (ids.size > 1)
    record.clientViolations.push(`reference ${reference} of company ${co.id} answered with ${ids.size} different transfers: ${[...ids].join(', ')}`);
}

async function insufficientOp(co) {
  const reference = `nsf-${randomUUID()}`;
  const rail = rand() < 0.5 ? 'BREB' : 'ACH';
  const body = rail === 'BREB' ? { amount: 900_000_001, ...pick(co.dests), reference } : { amount: 900_000_001, destination: achDest(co.index), reference };
  const r = await call('POST', `${GW}/transfers/send`, { token: co.write, body });
  if (r.status >= 400 && r.status < 500) {
    count('send, insufficient funds', 'refused');
    if (r.status !== 429) record.refusedRefs.push({ companyId: co.id, reference, status: r.status, error: r.body?.error });
  } else if (r.status === 201 || r.status === 200) {
    count('send, insufficient funds', 'ok');
    record.clientViolations.push(`send of 900000001 with a 20000000 wallet was accepted (${r.body.id})`);
    record.accepted.set(r.body.id, { companyId: co.id, rail, amount: body.amount, reference });
  } else count('send, insufficient funds', 'error');
}

/**
 * A small bulk payout (docs/batches.md): 2-6 items on both rails (one may be an amount the rail fails),
 * validated then executed; a retry of the execute now and then. Its items become ordinary transfers,
 * checked with every other; the batch must end final (checked after the settle).
 */
async function batchOp(co) {
  const n = between(2, 6);
  // Item references unique in the whole run: the checks then also catch an item executed twice (two transfers of one reference).
  const items = Array.from({ length: n }, () => {
    const amount = amountFor(rand() < 0.15 ? 'fail' : 'ok');
    const reference = `bi-${randomUUID()}`;
    return rand() < 0.6 ? { amount, ...pick(co.dests), reference } : { amount, destination: achDest(co.index), reference };
  });
  const created = await call('POST', `${GW}/transfers/batches`, { token: co.write, body: { reference: `fb-${randomUUID()}`, items }, timeoutMs: 30_000 });
  if (created.status !== 201) {
    count('bulk payout', created.status >= 400 && created.status < 500 ? 'refused' : 'error');
    return;
  }
  const entry = { companyId: co.id, id: created.body.id, items: n, executed: undefined };
  record.batches.push(entry);
  if (created.body.status !== 'VALIDATED') {
    count('bulk payout', 'refused');
    return;
  }
  const exec = () => call('POST', `${GW}/transfers/batches/${created.body.id}/execute`, { token: co.write, timeoutMs: 30_000 });
  const rs = rand() < 0.3 ? await Promise.all([exec(), exec()]) : [await exec()];
  const ok = rs.some((r) => r.status === 202 || r.status === 200);
  if (ok) entry.executed = true;
  count('bulk payout', ok ? 'ok' : rs.every((r) => r.status >= 400 && r.status < 500) ? 'refused' : 'error');
}

/** After the settle: every executed batch is final, and its final state agrees with its items' transfers. */
async function batchesCheck(db) {
  const violations = [];
  const executed = record.batches.filter((b) => b.executed);
  for (const b of record.batches) {
    const row = (await db.query('select state from transfer.batches where id = $1::uuid', [b.id])).rows[0];
    if (!row) {
      violations.push(`batch ${b.id} answered 201 but is not stored`);
      continue;
    }
    if (['FUNDING', 'EXECUTING', 'AWAITING_APPROVAL'].includes(row.state)) violations.push(`batch ${b.id} is still ${row.state}`);
    const t = (
      await db.query(
        `select count(*) filter (where t.state = 'COMPLETED')::int as completed, count(*) filter (where t.state in ('FAILED', 'EXPIRED'))::int as failed,
        count(*) filter (where t.state not in ('COMPLETED', 'FAILED', 'EXPIRED', 'REJECTED'))::int as live, count(*)::int as n
        from transfer.batch_items i join transfer.transfers t on t.id = i.transfer_id where i.batch_id = $1::uuid and i.status = 'EXECUTED'`,
        [b.id],
      )
    ).rows[0];
    const expect = t.n === 0 ? null : t.completed === t.n ? 'COMPLETED' : t.completed === 0 ? 'FAILED' : 'PARTIALLY_FAILED';
    if (t.live > 0) violations.push(`batch ${b.id}: ${t.live} items still live`);
    if (['COMPLETED', 'PARTIALLY_FAILED', 'FAILED'].includes(row.state) && expect && row.state !== expect)
      violations.push(`batch ${b.id} is ${row.state} but its items say ${expect}`);
    const extra = (
      await db.query(
        `select count(*)::int as n from transfer.transfers t where t.batch_id = $1::uuid and t.state <> 'REJECTED'
        and not exists (select 1 from transfer.batch_items i where i.batch_id = t.batch_id and i.transfer_id = t.id)`,
        [b.id],
      )
    ).rows[0].n;
    if (extra > 0) violations.push(`batch ${b.id}: ${extra} accepted transfers that no item points at (a second execution)`);
  }
  return {
    name: `bulk payouts: each of the ${executed.length} executed batches (of ${record.batches.length}) final and agreeing with its items; no item executed twice`,
    violations,
  };
}

async function pseOp(co) {
  const amount = between(20_000, 400_000);
  const r = await call('POST', `${GW}/deposits/pse`, { token: co.write, body: { amountCents: amount, ...payer } });
  if (r.status !== 201 && r.status !== 200) {
    count('PSE deposit created', r.status >= 400 && r.status < 500 ? 'refused' : 'error');
    return;
  }
  count('PSE deposit created', 'ok');
  const id = r.body.id;
  record.deposits.set(id, { companyId: co.id, amount });
  const outcome = rand() < 0.85 ? 'APPROVED' : 'REJECTED';
  const p = await call('POST', `${sb}/sandbox/pse/${id}/pay`, { body: { outcome, payerBank: 'Bancolombia' } });
  const kind = `PSE ${outcome === 'APPROVED' ? 'paid' : 'rejected'} at the provider`;
  if (p.status === 200) {
    count(kind, 'ok');
    record.deposits.get(id).paid = p.body.status === 'PAID';
  } else count(kind, p.status >= 400 && p.status < 500 ? 'refused' : 'error');
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
  const r = await call('POST', `${sb}/sandbox/breb/incoming`, {
    body: { keyValue, amountCents: amount, payerName: 'Pedro Pérez', payerDocument: 'CC 79123456', payerBank: 'Nequi' },
  });
  if (r.status === 202) {
    count('inbound Bre-B payment', 'ok');
    record.incoming.set(r.body.providerTransferId, { companyId: co.id, keyValue, amount });
  } else count('inbound Bre-B payment', r.status >= 400 && r.status < 500 ? 'refused' : 'error');
}

async function readOp(co) {
  const path = pick(['/wallets/balance', '/wallets/transactions?limit=20', '/deposits?limit=20']);
  const r = await call('GET', GW + path, { token: co.read });
  count(`read ${path.split('?')[0]}`, r.status === 200 ? 'ok' : r.status >= 400 && r.status < 500 ? 'refused' : 'error');
}

// Multi-signature (threshold 2): sends wait for two dashboard users' TOTP signatures; the signer
// signs the newest pending one once per 30 s step (a code is accepted once), the rest expire.
async function provisionMultiSig(i) {
  const c = await admin('POST', '/admin/companies', {
    name: `Faults Firmas ${i} S.A.S.`,
    nit: `9008${String(i).padStart(5, '0')}-2`,
    taxRegime: 'COMMON',
    multiSigThreshold: 2,
    wallets: ['BREB', 'ACH'],
  });
  await admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1_000_000 });
  const write = (await admin('POST', `/admin/companies/${c.id}/api-keys`, { scope: 'WRITE', label: 'faults-write' })).key;
  await admin('POST', `/admin/companies/${c.id}/wallets/BREB/credit`, { amountCents: 20_000_000, reference: 'faults-seed-BREB' });
  const users = [];
  for (const role of ['ADMIN', 'OPERATOR']) {
    const email = `${role.toLowerCase()}.${c.id.slice(0, 8)}@faults.co`;
    const password = `Clave-${randomUUID()}`;
    const u = await admin('POST', `/admin/companies/${c.id}/users`, { email, password, role });
    const login = await call('POST', `${GW}/auth/login`, { body: { email, password }, forwardedFor: '10.77.0.2' });
    if (login.status !== 200) throw new Error(`login: ${login.status} ${login.text}`);
    users.push({
      email,
      password,
      token: login.body.token,
      totp: new TOTP({ secret: Secret.fromBase32(u.totpSecret), digits: 6, period: 30, algorithm: 'SHA1' }),
    });
  }
  const r = await call('POST', `${GW}/transfers/resolve-key`, { token: write, body: { keyValue: '3007770001' } });
  if (r.status !== 200) throw new Error(`resolve-key: ${r.status} ${r.text}`);
  return {
    id: c.id,
    write,
    users,
    dest: {
      destination: { brebKey: { type: r.body.keyType, value: r.body.keyValue } },
      targetName: r.body.recipient.fullName,
      targetDocument: r.body.recipient.idValue,
    },
    awaiting: [],
  };
}
async function multiSigSendOp(ms) {
  const amount = amountFor(rand() < 0.15 ? 'fail' : 'ok');
  const r = await call('POST', `${GW}/transfers/send`, { token: ms.write, body: { amount, ...ms.dest, reference: `ms-${randomUUID()}` } });
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
      const r = await call('POST', `${GW}/dashboard/approvals/${target.approvalId}/sign`, {
        token: u.token,
        body: { totpCode: u.totp.generate() },
        forwardedFor: '10.77.0.2',
      });
      if (r.status === 200) signed++;
      else log(`signing ${target.approvalId} as ${u.email.split('.')[0]}: ${r.status} ${r.body?.error ?? r.text.slice(0, 80)}`);
    }
    count('approval signed by both users', signed === 2 ? 'ok' : 'error');
  }
}

async function workload(companies, stop, ms) {
  const signing = signer(ms, stop);
  await Promise.all(
    Array.from({ length: profile.workers }, async () => {
      while (!stop.done) {
        const co = pick(companies);
        const x = rand();
        const errorsBefore = totalErrors();
        if (x < 0.25) await sendOp(co, 'BREB');
        else if (x < 0.4) await sendOp(co, 'ACH');
        else if (x < 0.45) await sendOp(co, pick(['BREB', 'ACH']), { fail: true });
        else if (x < 0.5) await duplicateSendOp(co);
        else if (x < 0.53) await insufficientOp(co);
        else if (x < 0.65) await pseOp(co);
        else if (x < 0.77) await incomingOp(co);
        else if (x < 0.8) await multiSigSendOp(ms);
        else if (x < 0.83) await batchOp(co);
        else await readOp(co);
        if (totalErrors() > errorsBefore) await sleep(250); // a fault is on: do not spin
      }
    }),
  );
  await signing;
}

// ---------------------------------------------------------------------------------------------
// Faults.

const faults = {}; // kind → count
/** Per service: kills and stalls by replica, e.g. { ledger: { kill: [1, 0], stall: [0, 1] } }. */
const byService = {};
const faultLog = [];
const injected = (kind) => {
  faults[kind] = (faults[kind] ?? 0) + 1;
};
const perReplica = (name, what, r) => {
  const s = (byService[name] ??= { kill: Array(REPLICAS).fill(0), stall: Array(REPLICAS).fill(0) });
  s[what][r ?? 0]++;
};
const stallTotals = { count: 0, ms: 0 };
const slowTotals = { windows: 0, ms: 0, delays: [] };
/** ha profiles: each failover, with its recovery times. */
const failovers = [];
let natsTurn = 0;
/** The suite's own connection to the run's server (connected again after a failover or a cut). */
const dbConn = {
  client: undefined,
  async query(sql, params = []) {
    try {
      if (!this.client) {
        const c = pgClientFor(PG_ADMIN);
        c.on('error', () => undefined); // lost: the next query connects again
        await c.connect();
        this.client = c;
      }
      return await this.client.query(sql, params);
    } catch (err) {
      this.client?.end().catch(() => {});
      this.client = undefined;
      throw err;
    }
  },
  async end() {
    await this.client?.end().catch(() => {});
    this.client = undefined;
  },
};

/** ha profiles: the base backup (restore.mjs) and what restoring it showed. */
let backup;
let restores;
/** ha profiles: the partitions (hung links), each with what it cost the clients. */
const hangs = [];
const hangTurn = { link: 0, pg: 0 };
/**
 * A partition of the given links for `ms` (a draw from `profile.hangMs` unless given), healed by letting the held bytes go on (even turns) or by
 * resetting every connection that lived through it (odd turns). Measures the gateway calls that failed (5xx or
 * no answer) from its start until 10 s after it healed, and when the last of them failed.
 */
async function hangWindow(what, links, turn, ms = between(...profile.hangMs)) {
  const reset = turn % 2 === 1;
  const from = Date.now();
  const failedBefore = gatewayFailures.length;
  for (const l of links) l.hang();
  injected(`${what} hung (traffic dropped both ways, nothing closed)`);
  await sleep(ms);
  for (const l of links) l.heal({ reset });
  const healedAt = Date.now();
  await sleep(10_000);
  const failed = gatewayFailures.slice(failedBefore).filter((t) => t >= from);
  const h = {
    what,
    at: new Date(from).toISOString(),
    ms,
    healedBy: reset ? 'reset' : 'resumed',
    failedCalls: failed.length,
    lastFailureMs: failed.length ? Math.max(...failed) - from : null,
    lastFailureAfterHealMs: failed.length ? Math.max(0, Math.max(...failed) - healedAt) : null,
  };
  hangs.push(h);
  return `${ms} ms, then ${h.healedBy}; ${h.failedCalls} gateway calls failed, the last ${h.lastFailureMs ?? '-'} ms after it started`;
}

const FAULTS = {
  async kill(name, r) {
    const key = keyOf(name, r);
    await kill9(key);
    injected(`kill -9 ${key}`);
    perReplica(name, 'kill', r);
    await sleep(between(100, 600));
    for (let attempt = 1; ; attempt++) {
      startService(key, { restart: true });
      try {
        await waitReady(key);
        break;
      } catch (err) {
        if (attempt >= 3 || running[key].exitCode === null) throw err; // exited at start (e.g. its port briefly taken): again
        log(`${key} did not come back (${err.message}); starting it again`);
        await sleep(1000);
      }
    }
  },
  async stall(name, r) {
    // A GC pause or CPU throttling: the replica is frozen (its connections stay open, its work in
    // flight and its leases stand still) for longer than the grace, then goes on where it was.
    const key = keyOf(name, r);
    const c = running[key];
    const ms = between(...profile.stallMs);
    stopped.add(c);
    c.kill('SIGSTOP');
    injected(`stall ${key} (SIGSTOP)`);
    perReplica(name, 'stall', r);
    stallTotals.count++;
    stallTotals.ms += ms;
    await sleep(ms);
    c.kill('SIGCONT');
    stopped.delete(c);
    return `${ms} ms`;
  },
  async slowLedger() {
    // Every ledger reply (both replicas) arrives late for a few seconds: the calls are applied on
    // time, their answers come after the grace, so sweepers take the steps over meanwhile.
    const delay = between(...profile.slowDelayMs);
    const ms = between(...profile.slowMs);
    for (const p of proxies) p.delayMs = delay;
    injected('slow ledger (replies delayed past the grace)');
    slowTotals.windows++;
    slowTotals.ms += ms;
    slowTotals.delays.push(delay);
    await sleep(ms);
    for (const p of proxies) p.delayMs = 0;
    await sleep(delay); // the last delayed replies
    return `replies +${delay} ms for ${ms} ms`;
  },
  async natsRestart() {
    // a cluster: a rolling restart, one node after the other (each back before the next goes)
    for (const n of NATS_NODES) {
      await stopInfra(n);
      await sleep(800);
      await startInfra(n);
      if (NATS_NODES.length > 1) await sleep(1500); // it rejoins and catches its streams up
    }
    injected(NATS_NODES.length > 1 ? 'NATS cluster restarted node by node' : 'NATS restarted');
  },
  async natsNodeKill() {
    // one node of three lost at once (kill -9), its streams' replicas served by the other two, then back
    const n = NATS_NODES[natsTurn++ % NATS_NODES.length];
    await stopInfra(n, 'SIGKILL');
    injected(`NATS node killed (kill -9 ${n})`);
    await sleep(3000 * profile.hold + 1000);
    await startInfra(n);
    return n;
  },
  async natsNodePause() {
    // one node frozen (SIGSTOP): its connections hang without closing, its stream leaderships time out
    const n = NATS_NODES[natsTurn++ % NATS_NODES.length];
    const c = infra[n];
    stopped.add(c);
    c.kill('SIGSTOP');
    injected(`NATS node paused (SIGSTOP ${n})`);
    await sleep(5000);
    c.kill('SIGCONT');
    stopped.delete(c);
    return `${n} for 5 s`;
  },
  async linkHang() {
    // The link from every ledger client to one ledger replica drops everything both ways, without closing,
    // for longer than the calls' deadlines: the calls in flight and those sent to it meanwhile wait until
    // their deadlines; the clients' keep-alives declare the connection dead and send to the other replica.
    return hangWindow('link to ledger', [proxies[hangTurn.link % proxies.length]], hangTurn.link++);
  },
  async linkHangLong() {
    // The same, longer than the clients' keep-alive (a ping every 10 s, dead after 5 s unanswered) and never
    // healed by letting bytes through: the clients must find out by themselves and go to the other replica.
    return hangWindow('link to ledger (long)', [proxies[hangTurn.link % proxies.length]], 1, profile.longHangMs);
  },
  async pgLinkHang() {
    // Replica r of every service cut off from Postgres without a close (the other replicas still reach it):
    // its transactions hold their locks while their statements wait, its leases lapse, the other replica's
    // sweepers take its work over.
    const r = hangTurn.pg % REPLICAS;
    return hangWindow(`replica ${r}'s links to Postgres`, pgLinks[r], hangTurn.pg++);
  },
  async pgFailover() {
    // The primary crashes (no shutdown checkpoint, every connection cut) and its standby is promoted, as
    // CloudNativePG or a managed Postgres fails over; the product's processes were given both hosts.
    const { primary, standby } = pgPair;
    const crashed = Date.now();
    const acceptedBefore = record.accepted.size;
    primary.stop('immediate');
    standby.promote();
    const promotedMs = Date.now() - crashed;
    injected(`Postgres failover (primary crashed, ${profile.postgres} standby promoted)`);
    // recovered: the first send accepted (its 201) after the crash
    const until = Date.now() + 60_000;
    while (record.accepted.lastSetAt < crashed + promotedMs && Date.now() < until) await sleep(50);
    const firstSendMs = record.accepted.lastSetAt >= crashed + promotedMs ? record.accepted.lastSetAt - crashed : null;
    // A fresh standby of the new primary in the old one's place (a base backup), so the next failover has one;
    // synchronous again once it streams (until then the new primary commits alone, as after any failover).
    primary.destroy();
    const rebuiltAt = Date.now();
    const fresh = startStandby(standby, primary.port, 'faults_standby', { archiveDir, ...(await replicationVia(standby.port)) });
    if (profile.postgres === 'synchronous') {
      await adminSql(`alter system set synchronous_standby_names = 'faults_standby'`);
      await adminSql('select pg_reload_conf()');
    }
    pgPair.primary = standby;
    pgPair.standby = fresh;
    const f = { at: new Date(crashed).toISOString(), promotedMs, firstSendMs, acceptedBefore, rebuildMs: Date.now() - rebuiltAt, newPrimaryPort: standby.port };
    failovers.push(f);
    return `promoted in ${promotedMs} ms, first send accepted ${firstSendMs ?? 'not within 60 s'} ms after the crash; standby rebuilt in ${f.rebuildMs} ms`;
  },
  async pgCut() {
    const r = await dbConn.query(
      'select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()) t',
      [dbName],
    );
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
    stopped.add(c);
    c.kill('SIGSTOP');
    injected('provider time-out (sandbox frozen with SIGSTOP > PROVIDER_HTTP_TIMEOUT_MS)');
    await sleep(Math.max(2500, 3500 * profile.hold));
    c.kill('SIGCONT');
    stopped.delete(c);
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

/**
 * The plan: per round, a kill -9 of a replica of each killable service (and of the sandbox), a
 * stall of a replica of each product service and one slow-ledger window, interleaved with the
 * other faults (each at least once). Faults run one at a time.
 */
function schedule() {
  const killable = profile.killOnly ?? [...PRODUCT, 'sandbox'];
  const stallable = profile.stallOnly ?? PRODUCT;
  const others = profile.others ?? [
    'natsRestart',
    'callbacksDuplicated',
    'pgCut',
    'callbacksDelayed',
    'redisStop',
    'providerTimeout',
    'providerOutage',
    'callbacksDuplicated',
  ];
  const plan = [];
  let o = 0;
  for (let round = 0; round < profile.rounds; round++) {
    const kills = killable.map((n) => ['kill', n, n === 'sandbox' ? undefined : replicaFor('kill', n, round)]);
    const stalls = stallable.map((n) => ['stall', n, replicaFor('stall', n, round)]);
    const steps = Math.max(kills.length, stalls.length);
    for (let i = 0; i < steps; i++) {
      if (kills[i]) plan.push(kills[i]);
      if (kills[i] || o < others.length) plan.push([others[o++ % others.length]]);
      if (stalls[i]) plan.push(stalls[i]);
      if (i === Math.floor(steps / 2)) plan.push(['slowLedger']);
    }
  }
  while (o < others.length) plan.push([others[o++]]);
  return plan;
}

async function injectFaults(plan) {
  for (const [f, a, r] of plan) {
    const started = Date.now();
    const what = `${f}${a ? ` ${keyOf(a, r)}` : ''}`;
    const detail = await FAULTS[f](a, r);
    faultLog.push(`${new Date(started).toISOString()} ${what} (${Date.now() - started} ms${detail ? `; ${detail}` : ''})`);
    log(
      `fault ${what} from ${new Date(started).toISOString().slice(11, 23)} done in ${Date.now() - started} ms${detail ? ` (${detail})` : ''}; ${record.accepted.size} sends accepted so far`,
    );
    await sleep(profile.gapMs);
  }
}

// ---------------------------------------------------------------------------------------------

async function settle(db) {
  const until = Date.now() + profile.settleSeconds * 1000;
  let last = '';
  for (;;) {
    const outboxes = (await db.query(`select table_schema from information_schema.tables where table_name = 'outbox'`)).rows.map((r) => r.table_schema);
    const pendingOutbox = outboxes.length
      ? (await db.query(outboxes.map((s) => `select count(*)::int as n from "${s}".outbox where published_at is null`).join(' union all '))).rows.reduce(
          (a, r) => a + r.n,
          0,
        )
      : 0;
    const q = async (sql) => (await db.query(sql)).rows[0].n;
    const state = {
      liveTransfers: await q(
        `select count(*)::int as n from transfer.transfers where state in ('RECEIVED','RESERVED','AWAITING_APPROVAL','EXECUTING','DISPATCHED')`,
      ),
      liveBatches: await q(`select count(*)::int as n from transfer.batches where state in ('FUNDING','EXECUTING')`),
      providerPending: await q(`select count(*)::int as n from sandbox.transfers where status = 'PENDING'`),
      callbacksPending: await q(`select count(*)::int as n from sandbox.callbacks where state in ('pending','sending')`),
      depositSteps: await q(`select count(*)::int as n from pse_deposit.deposits where pending_step is not null`),
      paymentSteps: await q(`select count(*)::int as n from collect_key.payments where pending_step is not null`),
      pendingOutbox,
      consumersBehind: await consumersBehind(common.NATS_URL).catch(() => 1),
    };
    const busy = Object.values(state).some((n) => n > 0);
    const line = JSON.stringify(state);
    if (line !== last) {
      log(`settling: ${line}`);
      last = line;
    }
    if (!busy) return { settled: true, state };
    if (Date.now() > until) return { settled: false, state };
    await sleep(1000);
  }
}

async function main() {
  mkdirSync(logDir, { recursive: true });
  for (let r = 0; r < REPLICAS; r++) mkdirSync(join(work, `recon-${r}`), { recursive: true });
  // gRPC ports sit in Linux's ephemeral range: an outgoing connection may hold one for a moment.
  let busy = [];
  for (let i = 0; i < 20; i++) {
    busy = [];
    // (the ha profiles' Postgres already listens on its ports: the suite started it)
    for (const p of portList(ports)) if (!(pgPair && [...ports.pg, ports.pgReplication].includes(p)) && !(await portFree(p))) busy.push(p);
    if (!busy.length) break;
    await sleep(500);
  }
  if (busy.length) throw new Error(`ports in use (another fault run?): ${busy.join(', ')}`);
  log(`profile ${profileName}, seed ${seed}, database ${dbName}, logs in ${logDir}`);
  log(
    `gateways ${gateways.join(' ')}; gRPC ${GRPC_SERVICES.map((n) => `${n} ${ports.grpc[n].join('/')}`).join(', ')}; ledger proxies ${ports.ledgerProxy.join('/')}`,
  );
  await adminSql(`drop database if exists "${dbName}" with (force)`);
  await adminSql(`create database "${dbName}"`);
  const sampler = setInterval(() => {
    void samplePgConnections();
  }, 1000);
  try {
    await startNats();
    await startInfra('redis');
    proxies = await Promise.all(ports.ledgerProxy.map((p, r) => links.link(p, ports.grpc.ledger[r])));
    webhookReceiver = await startWebhookReceiver(ports.webhooks);
    if (pgPair) pgLinks = await Promise.all(ports.pgLinks.map((set) => Promise.all(set.map((p, i) => links.link(p, ports.pg[i])))));

    // Replica 0 of each service first (it applies the migrations), then replica 1.
    const up = async (keys) => {
      for (const k of keys) startService(k);
      await Promise.all(keys.map((k) => waitReady(k)));
    };
    const back = GRPC_SERVICES.filter((n) => n !== 'ledger');
    await up(['sandbox', 'ledger/0']);
    await up(['ledger/1', ...back.map((n) => `${n}/0`)]);
    await up([...back.map((n) => `${n}/1`), 'gateway/0']);
    await up(['gateway/1']);
    log(`all processes ready: ${Object.keys(running).length} (${REPLICAS} replicas of ${PRODUCT.length} services + the sandbox)`);

    const companies = [];
    for (let i = 0; i < profile.companies; i += 4)
      companies.push(...(await Promise.all(Array.from({ length: Math.min(4, profile.companies - i) }, (_, j) => provision(i + j)))));
    const ms = await provisionMultiSig(profile.companies);
    log(`${companies.length} companies provisioned (both wallets credited, 2 collect keys each) + 1 multi-signature company`);
    if (pgPair) {
      backup = baseBackup(pgPair.primary);
      log(`base backup of the primary taken (${backup.dir}); every node archives its WAL to ${archiveDir}`);
    }

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
    const db = pgClientFor(dbUrl);
    await db.connect();
    const settled = await settle(db);

    const ledger = policyClient(ledgerV1.LedgerServiceClient, local(ports.grpc.ledger), 'ledger', ledgerAccess, 30_000);
    const checks = await runChecks({ db, ledger, record, natsUrl: common.NATS_URL });
    const days = [...new Set([bogotaDate(started), bogotaDate(Date.now())])];
    checks.push(await reconciliationCheck(db, days));
    checks.push(await batchesCheck(db));
    checks.push(await webhookOrderCheck(db, webhookReceiver));
    const observed = await observations(db);
    ledgerLinks = await Promise.all(proxies.map((p) => p.stats()));
    const pgLinkStats = await Promise.all(pgLinks.map((set) => Promise.all(set.map((p) => p.stats()))));
    observed.push(
      ['HTTP calls per gateway replica', gatewayCalls.map((n, i) => `gateway/${i} ${n}`).join(', ')],
      ['ledger connections through the slow-ledger proxies', ledgerLinks.map((p, i) => `ledger/${i} ${p.connections}`).join(', ')],
      [
        'ledger reply chunks delayed by the proxies (while slow)',
        ledgerLinks.map((p, i) => `ledger/${i} ${p.delayedChunks} (${p.delayedBytes} bytes)`).join(', '),
      ],
      ...(pgLinks.length
        ? [
            [
              "Postgres connections through the replicas' links (held by a partition)",
              pgLinkStats
                .map((set, r) => `replica ${r} ${set.reduce((a, x) => a + x.connections, 0)} (${set.reduce((a, x) => a + x.heldConnections, 0)})`)
                .join(', '),
            ],
          ]
        : []),
    );
    const self = await sabotageSelfTest({ db, record, ledger });
    ledger.close();
    log(`self-test: ${self.tried - self.missed.length}/${self.tried} planted violations caught (rolled back)`);
    await db.end();
    if (backup) {
      // Last (the live cluster does not come back): the whole cluster lost, the product on restored copies. The
      // point in time: when half the run's sends had been accepted (a restore that loses the later half).
      const times = [...record.accepted.times.values()].sort((a, b) => a - b);
      const drill = await restoreDrill({
        backup,
        archiveDir,
        pair: pgPair,
        port: ports.pg[0],
        liveUrl: dbUrl,
        dbName,
        targetTime: new Date(times[Math.floor(times.length / 2)] ?? Date.now()),
        days,
        reconcile: reconcileDays,
        ready: () => Promise.all(Object.keys(running).map((k) => waitReady(k, 90_000))),
        log,
      });
      checks.push(...drill.checks);
      restores = drill.figures;
    }
    checks.unshift({
      name: `everything settled within ${profile.settleSeconds} s (no live transfer, callbacks delivered, outboxes drained, consumers caught up)`,
      violations: settled.settled ? [] : [`not settled: ${JSON.stringify(settled.state)}`],
    });
    const clientCheck = { name: 'client-observed: same reference → one transfer; insufficient funds refused', violations: record.clientViolations };
    checks.push(clientCheck);
    checks.push({
      name: `self-test: each SQL check fires on a planted violation (${self.tried} planted, rolled back)`,
      violations: self.missed,
      selfTest: true,
    });
    return { companies: companies.length, loadSeconds, checks, observed };
  } finally {
    clearInterval(sampler);
    await samplePgConnections();
  }
}

function summary(result, seconds) {
  const lines = [];
  lines.push(`\n## Fault suite (${profileName}), seed ${seed}, ${REPLICAS} replicas of ${PRODUCT.join(', ')}\n`);
  lines.push('| operation | ok | refused (4xx) | error (5xx / transport) |', '|---|---:|---:|---:|');
  const tot = { ok: 0, refused: 0, error: 0 };
  for (const [k, v] of Object.entries(ops).sort()) {
    lines.push(`| ${k} | ${v.ok} | ${v.refused} | ${v.error} |`);
    tot.ok += v.ok;
    tot.refused += v.refused;
    tot.error += v.error;
  }
  lines.push(`| **total** | **${tot.ok}** | **${tot.refused}** | **${tot.error}** |`);
  const sum = (prefix) =>
    Object.entries(faults)
      .filter(([k]) => k.startsWith(prefix))
      .reduce((a, [, n]) => a + n, 0);
  const kills = sum('kill');
  const stalls = sum('stall');
  lines.push('', '| fault injected | count |', '|---|---:|');
  for (const [k, v] of Object.entries(faults).sort()) lines.push(`| ${k} | ${v} |`);
  lines.push(
    `| **kill -9 in total** | **${kills}** |`,
    `| **stalls in total** (SIGSTOP ${profile.stallMs[0] / 1000}-${profile.stallMs[1] / 1000} s, ${(stallTotals.ms / 1000).toFixed(1)} s frozen in all) | **${stalls}** |`,
  );
  lines.push(
    `| **slow-ledger windows** (replies +${slowTotals.delays.join(', +')} ms, ${(slowTotals.ms / 1000).toFixed(1)} s in all) | **${slowTotals.windows}** |`,
  );
  lines.push('', '| service | kill -9 replica 0 | kill -9 replica 1 | stall replica 0 | stall replica 1 |', '|---|---:|---:|---:|---:|');
  for (const name of [...PRODUCT, 'sandbox']) {
    const b = byService[name];
    if (!b) continue;
    lines.push(
      name === 'sandbox' ? `| sandbox (one process) | ${b.kill[0]} | – | – | – |` : `| ${name} | ${b.kill[0]} | ${b.kill[1]} | ${b.stall[0]} | ${b.stall[1]} |`,
    );
  }
  if (failovers.length) {
    lines.push(
      '',
      `| Postgres failover (${profile.postgres} standby) | promoted in | first send accepted after the crash | sends accepted before | standby rebuilt in |`,
      '|---|---:|---:|---:|---:|',
    );
    for (const f of failovers)
      lines.push(
        `| ${f.at} → port ${f.newPrimaryPort} | ${f.promotedMs} ms | ${f.firstSendMs ?? 'none within 60 s'} ms | ${f.acceptedBefore} | ${f.rebuildMs} ms |`,
      );
    const lost = (result?.checks ?? []).flatMap((c) => c.violations.filter((v) => /unknown to the transfer service/.test(v)));
    lines.push(
      '',
      `acknowledged then lost: ${lost.length} sends accepted (201/200) and unknown to the transfer service after the failovers` +
        (profile.replicationDelayMs ? ` (the standby's stream held ${profile.replicationDelayMs} ms behind the primary)` : ''),
    );
  }
  if (hangs.length) {
    lines.push(
      '',
      '| partition (hung link, traffic dropped both ways) | for | healed by | gateway calls failed | last failure after it started | last failure after it healed |',
      '|---|---:|---|---:|---:|---:|',
    );
    for (const h of hangs)
      lines.push(
        `| ${h.at} ${h.what} | ${h.ms} ms | ${h.healedBy} | ${h.failedCalls} | ${h.lastFailureMs ?? '–'} ms | ${h.lastFailureAfterHealMs ?? '–'} ms |`,
      );
  }
  const violations = result ? result.checks.reduce((a, c) => a + c.violations.length, 0) : NaN;
  if (result) {
    lines.push('', '| invariant check | violations |', '|---|---:|');
    for (const c of result.checks) lines.push(`| ${c.name} | ${c.violations.length} |`);
    lines.push('', '| observed during the run | |', '|---|---|', ...result.observed.map(([k, v]) => `| ${k} | ${v} |`));
    lines.push(
      `| Postgres connections to the run's database (peak, sampled each second) | ${pgConnections.peakRun} (whole server peak ${pgConnections.peakServer} of max_connections ${pgConnections.maxConnections}) |`,
    );
    lines.push(
      '',
      `accepted sends ${record.accepted.size}, PSE deposits ${record.deposits.size} (paid per client ${[...record.deposits.values()].filter((d) => d.paid).length}), inbound Bre-B ${record.incoming.size}; companies ${result.companies}`,
    );
    lines.push(
      `**${result.checks.length} invariant checks, ${violations} violations**; ${tot.ok + tot.refused + tot.error} operations, ${kills} kills, ${stalls} stalls, ${slowTotals.windows} slow-ledger windows; workload ${result.loadSeconds.toFixed(0)} s, whole run ${seconds.toFixed(0)} s`,
    );
    for (const c of result.checks) for (const v of c.violations.slice(0, 20)) lines.push(`  VIOLATION [${c.name}] ${v}`);
  }
  return { text: lines.join('\n'), kills, stalls, violations, tot };
}

async function cleanup(keepDb) {
  stopping = true;
  for (const c of stopped) {
    try {
      c.kill('SIGCONT');
    } catch {
      /* gone */
    }
  }
  stopped.clear();
  for (const p of [...proxies, ...pgLinks.flat()]) {
    p.delayMs = 0;
    if (p.hung) p.heal({ reset: true });
  }
  await Promise.all(
    Object.values(running).map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    }),
  );
  for (const p of [...proxies, ...pgLinks.flat()]) await p.close();
  await webhookReceiver?.close();
  for (const n of NATS_NODES) await stopInfra(n).catch(() => {});
  await stopInfra('redis').catch(() => {});
  await dbConn.end();
  if (replicationProxy) await replicationProxy.close();
  await links.terminate();
  if (!keepDb) await adminSql(`drop database if exists "${dbName}" with (force)`).catch(() => {});
  if (!keepDb && pgPair) for (const c of [pgPair.primary, pgPair.standby]) c.destroy();
  for (const dir of [backup?.dir, archiveDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  rmSync(keepDb || process.env.FAULTS_KEEP_LOGS === '1' ? join(work, 'nats') : work, { recursive: true, force: true });
}

process.on('SIGINT', () => {
  cleanup(false).finally(() => process.exit(130));
});
// Last resort: no child outlives the runner.
process.on('exit', () => {
  for (const c of stopped) {
    try {
      c.kill('SIGCONT');
    } catch {
      /* gone */
    }
  }
  for (const c of [...Object.values(running), ...Object.values(infra)]) {
    if (c.exitCode === null && c.signalCode !== 'SIGKILL') {
      try {
        c.kill('SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
});
let result, failure;
try {
  result = await main();
} catch (err) {
  failure = err;
  console.error(`[faults] failed: ${err.stack ?? err}`);
}
const seconds = (Date.now() - t0) / 1000;
const s = summary(result, seconds);
console.log(s.text);
const ok = !failure && s.violations === 0;
const keep = !ok && process.env.FAULTS_KEEP === '1';
await cleanup(!ok);
if (!ok && !keep) await adminSql(`drop database if exists "${dbName}" with (force)`).catch(() => {});
if (!keep && pgPair) for (const c of [pgPair.primary, pgPair.standby]) c.destroy();
if (keep)
  console.log(`[faults] kept database ${dbName}${pgPair ? ` (Postgres ${pgPair.primary.data}, port ${pgPair.primary.port})` : ''} and logs in ${logDir}`);
if (jsonOut) {
  writeFileSync(
    jsonOut,
    JSON.stringify(
      {
        profile: profileName,
        seed,
        ok,
        failure: failure ? String(failure.stack ?? failure) : undefined,
        seconds,
        loadSeconds: result?.loadSeconds,
        replicas: REPLICAS,
        operations: s.tot,
        ops,
        faults,
        byService,
        kills: s.kills,
        stalls: s.stalls,
        stallMs: stallTotals.ms,
        slowLedger: { windows: slowTotals.windows, ms: slowTotals.ms, delaysMs: slowTotals.delays, delayedChunks: ledgerLinks.map((p) => p.delayedChunks) },
        gatewayCalls,
        pgConnections,
        failovers,
        hangs,
        restores,
        faultLog,
        checks: result?.checks ?? [],
        violations: s.violations,
        accepted: record.accepted.size,
        deposits: record.deposits.size,
        incoming: record.incoming.size,
        observed: result?.observed,
        logDir,
      },
      null,
      2,
    ),
  );
}
console.log(ok ? '[faults] all invariants held' : `[faults] FAILED (logs: ${logDir})`);
process.exit(ok ? 0 : 1);
