// The set-up that `npm test` and `npm run up` share (test/scripts/setup.sh runs it under Node 22),
// so that either works as the first command on a fresh clone. Steps, in this order:
//   deps     `npm ci` (the committed lockfile exactly: never rewrites it), skipped while node_modules
//            was installed from this very package-lock.json (a stamp holds the lockfile's hash)
//   servers  PostgreSQL, Redis and NATS (JetStream) at DATABASE_URL, REDIS_URL, NATS_URL: one that
//            is installed but stopped is started; one that is missing is installed from Debian's
//            packages where this is Debian and we are root, then started
//   browser  Debian's chromium for the browser tests (CHROMIUM_PATH, default /usr/bin/chromium)
//   promtool Debian's promtool (package prometheus) for the alert rules' tests (test/deploy/alerts.test.ts);
//            where it cannot be installed those tests are skipped with a loud message, so this step never fails
//   pdfsig   poppler's pdfsig (Debian package poppler-utils), the independent verifier of the receipts'
//            PAdES signatures (services/receipt's signing tests, test/e2e/receipts.test.ts); never fails either
// Each step is printed before it is taken. Where one cannot be taken, it stops before any test
// with one message that names the ways out.
// Usage: node test/scripts/setup.mjs [deps] [servers] [browser] [promtool] [pdfsig]   (default: deps servers)
// WALLET_NO_APT=1 never installs Debian packages (it stops with the message instead);
// WALLET_SERVERS_DIR is where servers started here keep their data, logs and pid files.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const say = (msg) => console.log(`[setup] ${msg}`);
const DEFAULT_CHROMIUM = '/usr/bin/chromium';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** What this machine allows: starting servers as their owner and installing Debian packages. */
export function machine(env = process.env) {
  const isRoot = process.getuid?.() === 0;
  const debian = existsSync('/etc/debian_version') && which('apt-get', env) !== undefined;
  return { isRoot, debian, canApt: isRoot && debian && env.WALLET_NO_APT !== '1' };
}

/** An executable on PATH or in the sbin directories (Debian puts nats-server in /usr/sbin). */
export function which(cmd, env = process.env) {
  const dirs = [...(env.PATH ?? '').split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin'].filter(Boolean);
  for (const d of dirs) {
    try {
      accessSync(join(d, cmd), constants.X_OK);
      return join(d, cmd);
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** The three servers, each at the address its variable gives (the defaults are the tests'). */
export function servers(env = process.env) {
  const at = (variable, fallback) => {
    let u;
    try {
      u = new URL(env[variable] ?? fallback);
    } catch {
      u = new URL(fallback);
    }
    return { host: u.hostname || '127.0.0.1', port: Number(u.port || new URL(fallback).port) };
  };
  const dataDir = (key, port) =>
    join(
      env.WALLET_SERVERS_DIR ?? (process.getuid?.() === 0 ? '/var/lib/wallet-servers' : join(homedir(), '.local', 'state', 'wallet-servers')),
      `${key}-${port}`,
    );
  return [
    {
      key: 'postgres',
      name: 'PostgreSQL',
      variable: 'DATABASE_URL',
      pkg: 'postgresql',
      ...at('DATABASE_URL', 'postgresql://postgres@127.0.0.1:5432/postgres'),
      // Debian's layout: clusters under /etc/postgresql/<version>/<name>, run by pg_ctlcluster.
      installed: () => which('pg_ctlcluster', env) !== undefined && postgresClusters().length > 0,
      start: () => {
        const [version, name] = postgresClusters()[0];
        return { argv: ['pg_ctlcluster', '--skip-systemctl-redirect', version, name, 'start'] };
      },
    },
    {
      key: 'redis',
      name: 'Redis',
      variable: 'REDIS_URL',
      pkg: 'redis-server',
      ...at('REDIS_URL', 'redis://127.0.0.1:6379'),
      installed: () => which('redis-server', env) !== undefined,
      start(port) {
        const dir = dataDir('redis', port);
        return {
          dir,
          argv: [
            which('redis-server', env),
            '--daemonize',
            'yes',
            '--bind',
            '127.0.0.1',
            '-::1',
            '--port',
            String(port),
            '--save',
            '',
            '--appendonly',
            'no',
            '--dir',
            dir,
            '--logfile',
            join(dir, 'redis.log'),
            '--pidfile',
            join(dir, 'redis.pid'),
          ],
        };
      },
    },
    {
      key: 'nats',
      name: 'NATS (JetStream)',
      variable: 'NATS_URL',
      pkg: 'nats-server',
      ...at('NATS_URL', 'nats://127.0.0.1:4222'),
      installed: () => which('nats-server', env) !== undefined,
      start(port) {
        const dir = dataDir('nats', port);
        // nats-server does not daemonize itself: it is started detached, in a session of its own.
        return {
          dir,
          detached: true,
          argv: [
            which('nats-server', env),
            '-a',
            '127.0.0.1',
            '-p',
            String(port),
            '-js',
            '-sd',
            join(dir, 'jetstream'),
            '-l',
            join(dir, 'nats.log'),
            '-P',
            join(dir, 'nats.pid'),
          ],
        };
      },
    },
  ];
}

function postgresClusters() {
  try {
    return readdirSync('/etc/postgresql')
      .sort()
      .flatMap((v) =>
        readdirSync(join('/etc/postgresql', v))
          .filter((c) => existsSync(join('/etc/postgresql', v, c, 'postgresql.conf')))
          .map((c) => [v, c]),
      );
  } catch {
    return [];
  }
}

/**
 * What to do for one server that does not answer: 'start' it (installed), 'install' it from
 * Debian's packages and then start it, or 'stop' (with the reason) when neither can be done here.
 */
export function plan(server, { installed, canApt }) {
  if (!LOOPBACK.has(server.host))
    return { action: 'stop', reason: `${server.host} is not this machine: start it there, or point ${server.variable} at one that runs` };
  if (installed) return { action: 'start' };
  if (canApt) return { action: 'install' };
  return { action: 'stop', reason: 'not installed (packages are installed here only as root on Debian)' };
}

export function reachable(host, port, timeoutMs = 1500) {
  return new Promise((resolve) => {
    const s = net.connect({ host: host.replace(/^\[|\]$/g, ''), port, timeout: timeoutMs });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(false));
  });
}

async function waitUntilReachable(host, port, seconds) {
  for (let i = 0; i < seconds * 4; i++) {
    if (await reachable(host, port, 500)) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

const shellWord = (w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);
const show = (argv) => argv.map(shellWord).join(' ');

/** Runs a command to its end; its output is shown only when it fails. */
function run(argv, opts = {}) {
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  if (r.status === 0) return true;
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`.trim().split('\n').slice(-20).join('\n');
  console.error(`[setup] \`${show(argv)}\` failed (exit ${r.status ?? r.signal ?? 'none'})${out ? `:\n${out}` : ''}`);
  return false;
}

let aptUpdated = false;
function aptInstall(pkg, options = []) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    say('apt-get update');
    if (!run(['apt-get', 'update', '-qq'], { env })) return false;
    aptUpdated = true;
  }
  say(`apt-get install -y ${pkg}`);
  return run(['apt-get', 'install', '-y', '-qq', ...options, pkg], { env });
}

// ---- steps ------------------------------------------------------------------------------------

/** Installs the dependencies unless node_modules was installed from this very lockfile. */
export function deps() {
  const lockfile = join(root, 'package-lock.json');
  const stamp = join(root, 'node_modules', '.wallet-lockfile-sha256');
  const hash = () => createHash('sha256').update(readFileSync(lockfile)).digest('hex');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === hash()) {
    say('dependencies: node_modules matches package-lock.json');
    return true;
  }
  say(existsSync(join(root, 'node_modules')) ? 'dependencies: node_modules is not from this package-lock.json' : 'dependencies: no node_modules');
  // The npm that runs this script (npm test, npm run up), else the one on PATH.
  const npm = process.env.npm_execpath?.endsWith('.js') ? [process.execPath, process.env.npm_execpath] : ['npm'];
  // npm ci, never npm install: the install must not rewrite package-lock.json (a fresh clone stays
  // clean), and a lockfile that does not match the package.json files is an error to fix, not to
  // paper over (test/deploy/lockfile.test.ts).
  say('npm ci --no-audit --no-fund');
  if (spawnSync(npm[0], [...npm.slice(1), 'ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' }).status !== 0) {
    console.error(
      [
        "[setup] npm ci failed (see npm's output above).",
        'If it says the lockfile and package.json are out of sync, update package-lock.json with',
        '`npm install --package-lock-only` and commit it (deploy/README.md, "Lockfile").',
      ].join('\n'),
    );
    return false;
  }
  writeFileSync(stamp, `${hash()}\n`);
  return true;
}

/** Makes PostgreSQL, Redis and NATS answer, starting or installing them where it can. */
export async function ensureServers(env = process.env) {
  const m = machine(env);
  const failed = [];
  for (const s of servers(env)) {
    if (await reachable(s.host, s.port)) {
      say(`${s.name}: up at ${s.host}:${s.port}`);
      continue;
    }
    let p = plan(s, { installed: s.installed(), canApt: m.canApt });
    if (p.action === 'install') {
      say(`${s.name}: not running at ${s.host}:${s.port} and not installed: installing Debian's package ${s.pkg}`);
      if (!aptInstall(s.pkg)) {
        failed.push({ ...s, reason: `apt-get install ${s.pkg} failed` });
        continue;
      }
      if (s.key === 'postgres') trustLoopback();
      // A package's own scripts may have started it already.
      if (await waitUntilReachable(s.host, s.port, 2)) {
        say(`${s.name}: up at ${s.host}:${s.port}`);
        continue;
      }
      p = s.installed() ? { action: 'start' } : { action: 'stop', reason: `installed ${s.pkg}, but cannot find how to start it` };
    }
    if (p.action === 'stop') {
      failed.push({ ...s, reason: p.reason });
      continue;
    }
    const how = s.start(s.port);
    say(`${s.name}: not running at ${s.host}:${s.port}: starting it: ${show(how.argv)}`);
    if (how.dir) mkdirSync(how.dir, { recursive: true });
    if (how.detached) {
      const child = spawn(how.argv[0], how.argv.slice(1), { detached: true, stdio: 'ignore' });
      child.once('error', () => undefined);
      child.unref();
    } else if (!run(how.argv)) {
      failed.push({ ...s, reason: 'its start command failed (above)' });
      continue;
    }
    if (await waitUntilReachable(s.host, s.port, 30)) say(`${s.name}: up at ${s.host}:${s.port}`);
    else failed.push({ ...s, reason: `started, but nothing answers at ${s.host}:${s.port} after 30 s${how.dir ? ` (log in ${how.dir})` : ''}` });
  }
  if (failed.length === 0) return true;
  console.error(serversMessage(failed));
  return false;
}

/** The one message for servers that could not be started: each with its reason, and both ways out. */
export function serversMessage(failed) {
  return [
    '',
    '[setup] These servers are needed and could not be started here:',
    ...failed.map((f) => `  - ${f.name} at ${f.host}:${f.port} (${f.variable}): ${f.reason}`),
    '',
    "Either install them from Debian's (or Ubuntu's) packages and run this command again:",
    `    sudo apt-get install ${failed.map((f) => f.pkg).join(' ')}`,
    'or run all three in Docker, then this command again with the compose database:',
    '    docker compose -f deploy/compose.yaml up -d postgres redis nats',
    '    export DATABASE_URL=postgresql://wallet:wallet@127.0.0.1:5432/wallet TEST_DATABASE_ADMIN_URL=postgresql://wallet:wallet@127.0.0.1:5432/wallet',
    '(DATABASE_URL, REDIS_URL and NATS_URL also point at servers that run elsewhere.)',
    '',
  ].join('\n');
}

/**
 * A PostgreSQL this script has just installed only takes passwords on TCP; the tests connect as
 * postgres@127.0.0.1 without one, as on the machines the project runs on.
 */
function trustLoopback() {
  for (const [version, name] of postgresClusters()) {
    const hba = join('/etc/postgresql', version, name, 'pg_hba.conf');
    const text = readFileSync(hba, 'utf8');
    if (/^host\s+all\s+all\s+127\.0\.0\.1\/32\s+trust/m.test(text)) continue;
    say(`PostgreSQL ${version}/${name}: trusting loopback connections (${hba})`);
    writeFileSync(hba, `host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n${text}`);
    spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, name, 'reload'], { stdio: 'ignore' });
  }
}

/** Debian's chromium for the browser tests, installed where this machine allows. */
export function ensureChromium(env = process.env) {
  const path = env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM;
  if (existsSync(path)) {
    say(`Chromium: ${path}`);
    return true;
  }
  const { canApt } = machine(env);
  if (canApt && path === DEFAULT_CHROMIUM) {
    say(`Chromium: not at ${path}: installing Debian's package chromium for the browser tests`);
    if (aptInstall('chromium') && existsSync(path)) {
      say(`Chromium: ${path}`);
      return true;
    }
  }
  console.error(
    [
      '',
      `[setup] The browser tests (test/e2e/*-browser.test.ts) need Chromium, and there is none at ${path}.`,
      "Install Debian's (or Ubuntu's) chromium and run this command again:",
      '    sudo apt-get install chromium',
      'or point CHROMIUM_PATH at a Chromium or Chrome binary.',
      '',
    ].join('\n'),
  );
  return false;
}

/** Debian's promtool for the alert rules' tests, installed where this machine allows; never fatal. */
export function ensurePromtool(env = process.env) {
  const found = which('promtool', env);
  if (found) {
    say(`promtool: ${found}`);
    return true;
  }
  if (machine(env).canApt) {
    // The package also brings the Prometheus server (not started here: no service manager runs it); not its recommends (node exporter).
    say("promtool: not found: installing Debian's package prometheus for the alert rules' tests");
    if (aptInstall('prometheus', ['--no-install-recommends']) && which('promtool', env)) {
      say(`promtool: ${which('promtool', env)}`);
      return true;
    }
  }
  console.error(
    [
      '',
      "[setup] ***** No promtool: the alert rules' promtool tests (test/deploy/alerts.test.ts) will be SKIPPED. *****",
      "Install Debian's (or Ubuntu's) package prometheus, which ships promtool:",
      '    sudo apt-get install --no-install-recommends prometheus',
      '',
    ].join('\n'),
  );
  return true;
}

/** poppler's pdfsig, which verifies the receipts' PAdES signatures in the tests, installed where this machine allows; never fatal. */
export function ensurePdfsig(env = process.env) {
  const found = which('pdfsig', env);
  if (found) {
    say(`pdfsig: ${found}`);
    return true;
  }
  if (machine(env).canApt) {
    say("pdfsig: not found: installing Debian's package poppler-utils for the receipts' signature tests");
    if (aptInstall('poppler-utils', ['--no-install-recommends']) && which('pdfsig', env)) {
      say(`pdfsig: ${which('pdfsig', env)}`);
      return true;
    }
  }
  console.error(
    [
      '',
      "[setup] ***** No pdfsig: the receipts' signature tests (services/receipt, test/e2e/receipts.test.ts) will be SKIPPED. *****",
      "Install Debian's (or Ubuntu's) package poppler-utils, which ships pdfsig:",
      '    sudo apt-get install --no-install-recommends poppler-utils',
      '',
    ].join('\n'),
  );
  return true;
}

async function main(argv) {
  const steps = argv.length ? argv : ['deps', 'servers'];
  const unknown = steps.filter((s) => !['deps', 'servers', 'browser', 'promtool', 'pdfsig'].includes(s));
  if (unknown.length) {
    console.error(`[setup] unknown step(s): ${unknown.join(', ')} (deps, servers, browser, promtool, pdfsig)`);
    return 2;
  }
  if (steps.includes('deps') && !deps()) return 1;
  if (steps.includes('servers') && !(await ensureServers())) return 1;
  if (steps.includes('browser') && !ensureChromium()) return 1;
  if (steps.includes('promtool')) ensurePromtool();
  if (steps.includes('pdfsig')) ensurePdfsig();
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exit(await main(process.argv.slice(2)));
