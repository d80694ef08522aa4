// deploy/compose.yaml run as a set of `docker run` commands on the host network.
//
// Why not `docker compose up`: compose connects the containers through a bridge network of private
// addresses, and this check may only send traffic to loopback (and no Compose v2 can be installed
// offline here; Debian's docker-compose is v1). So every service runs with `--network host`, and the
// file is translated, not copied:
//   - every port a service listens on moves to a free loopback port of this run (processes: their
//     *_PORT variables; PostgreSQL: PGPORT; Redis: --port; NATS: -p/-m), and every address in the
//     environment (`ledger:50051`, `http://sandbox:8090`, `postgresql://…@postgres:5432/…`) follows;
//   - each service name resolves to 127.0.0.1 in every container (--add-host);
//   - the rest is taken as written: image, environment, command, user, read_only, tmpfs, cap_drop,
//     security_opt, volumes (named ones created for the run), health checks, depends_on conditions
//     (started in dependency order, waiting for service_healthy), stop_grace_period.
// Images of the servers are replaced by the stand-ins where the real ones could not be pulled.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { isAbsolute, join } from 'node:path';
import { parse } from 'yaml';
import { dockerBin, dockerEnv } from './engine.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `${VAR}`, `${VAR:-default}` and `$$` as compose interpolates them. */
export function interpolate(value, env) {
  if (typeof value === 'string') {
    return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g, (m, name, def) => {
      if (m === '$$') return '$';
      const v = env[name];
      return v === undefined || v === '' ? (def ?? '') : v;
    });
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  return value;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** The ports a process listens on by default: its config.ts `X_PORT: env.port(N)` declarations. */
function processPorts(repo, dir) {
  const text = readFileSync(join(repo, dir, 'src', 'config.ts'), 'utf8');
  return [...text.matchAll(/([A-Z_]+_PORT): env\.port\((\d+)\)/g)].map((m) => ({ variable: m[1], port: Number(m[2]) }));
}

/**
 * The plan: one entry per compose service, in start order, with its `docker run` arguments, the
 * port map and what to wait for. `images`: compose image name → image to run instead.
 */
export async function planStack({ repo, composeFile, project, images, processes, env = process.env }) {
  const compose = interpolate(parse(readFileSync(composeFile, 'utf8'), { merge: true }), env);
  const baseDir = join(composeFile, '..');
  const names = Object.keys(compose.services);
  const dirOf = Object.fromEntries(processes.map((p) => [p.name, p.dir]));

  // Every port of every service → a free one of this run.
  const ports = {}; // service → { [old]: new }
  const variables = {}; // service → { VAR: new }
  for (const name of names) {
    ports[name] = {};
    variables[name] = {};
    const listen = dirOf[name]
      ? processPorts(repo, dirOf[name])
      : ({ postgres: [{ port: 5432 }], redis: [{ port: 6379 }], nats: [{ port: 4222 }, { port: 8222 }] }[name] ?? []);
    for (const l of listen) {
      const p = await freePort();
      ports[name][l.port] = p;
      if (l.variable) variables[name][l.variable] = String(p);
    }
  }
  // Published host ports (`127.0.0.1:8090:8090`) → the service's new port for that container port.
  const published = {};
  for (const name of names) {
    for (const spec of compose.services[name].ports ?? []) {
      const parts = String(spec).split(':');
      const [hostPort, containerPort] = parts.slice(-2).map(Number);
      if (ports[name][containerPort]) published[hostPort] = ports[name][containerPort];
    }
  }
  const rewrite = (service, text) =>
    String(text).replace(/\b([a-z][a-z0-9-]*|127\.0\.0\.1|localhost):(\d{2,5})\b/g, (m, host, port) => {
      if (names.includes(host) && ports[host][port]) return `${host}:${ports[host][port]}`;
      if ((host === '127.0.0.1' || host === 'localhost') && ports[service][port]) return `${host}:${ports[service][port]}`;
      if ((host === '127.0.0.1' || host === 'localhost') && published[port]) return `${host}:${published[port]}`;
      return m;
    });

  const volumes = new Map(); // volume name → docker volume create options
  const order = [];
  const seen = new Set();
  const visit = (name, path = []) => {
    if (seen.has(name)) return;
    if (path.includes(name)) throw new Error(`depends_on cycle: ${[...path, name].join(' → ')}`);
    for (const dep of Object.keys(compose.services[name].depends_on ?? {})) visit(dep, [...path, name]);
    seen.add(name);
    order.push(name);
  };
  for (const name of names) visit(name);

  const plan = [];
  for (const name of order) {
    const s = compose.services[name];
    const container = `${project}-${name}`;
    const image = images[s.image] ?? s.image;
    const args = ['run', '-d', '--name', container, '--network', 'host', '--label', `wallet.images.project=${project}`];
    for (const other of names) args.push('--add-host', `${other}:127.0.0.1`);
    const environment = { ...(s.environment ?? {}) };
    for (const [k, v] of Object.entries(environment)) environment[k] = rewrite(name, v);
    Object.assign(environment, variables[name]);
    let command = s.command ? [...s.command] : undefined;
    const healthcheck = s.healthcheck ? { ...s.healthcheck, test: s.healthcheck.test.map((t) => rewrite(name, t)) } : undefined;
    // The servers: their own way of moving a port.
    if (name === 'postgres') environment.PGPORT = String(ports.postgres[5432]);
    if (name === 'redis') {
      command = [...(command ?? ['redis-server']), '--port', String(ports.redis[6379]), '--bind', '127.0.0.1'];
      if (healthcheck) healthcheck.test = healthcheck.test.flatMap((t) => (t === 'redis-cli' ? ['redis-cli', '-p', String(ports.redis[6379])] : [t]));
    }
    if (name === 'nats') command = [...(command ?? []), '-a', '127.0.0.1', '-p', String(ports.nats[4222]), '-m', String(ports.nats[8222])];
    for (const [k, v] of Object.entries(environment)) args.push('-e', `${k}=${v}`);
    if (s.user) args.push('--user', String(s.user));
    if (s.read_only) args.push('--read-only');
    for (const t of s.tmpfs ?? []) args.push('--tmpfs', t);
    for (const c of s.cap_drop ?? []) args.push('--cap-drop', c);
    for (const o of s.security_opt ?? []) args.push('--security-opt', o);
    if (s.restart) args.push('--restart', s.restart);
    if (s.stop_grace_period) args.push('--stop-timeout', String(parseInt(s.stop_grace_period, 10)));
    for (const v of s.volumes ?? []) {
      const [source, target, mode] = String(v).split(':');
      if (source.startsWith('.') || isAbsolute(source)) {
        args.push('-v', `${isAbsolute(source) ? source : join(baseDir, source)}:${target}${mode ? `:${mode}` : ''}`);
      } else {
        const volume = `${project}_${source}`;
        volumes.set(volume, compose.volumes?.[source] ?? {});
        args.push('-v', `${volume}:${target}${mode ? `:${mode}` : ''}`);
      }
    }
    if (healthcheck) {
      const [kind, ...rest] = healthcheck.test;
      const cmd = kind === 'CMD-SHELL' ? rest.join(' ') : rest.map((w) => (/^[\w@%+=:,./?&-]+$/.test(w) ? w : `'${w}'`)).join(' ');
      args.push('--health-cmd', cmd);
      if (healthcheck.interval) args.push('--health-interval', healthcheck.interval);
      if (healthcheck.timeout) args.push('--health-timeout', healthcheck.timeout);
      if (healthcheck.retries) args.push('--health-retries', String(healthcheck.retries));
    }
    args.push(image, ...(command ?? []));
    plan.push({ name, container, image, args, ports: ports[name], depends: s.depends_on ?? {}, published: s.ports ?? [] });
  }
  return { plan, volumes, ports, published };
}

function docker(host, args, opts = {}) {
  return spawnSync(dockerBin(), args, { env: dockerEnv(host), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
}

function state(host, container) {
  const r = docker(host, [
    'inspect',
    '--format',
    '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}} {{.State.ExitCode}}',
    container,
  ]);
  if (r.status !== 0) return { status: 'missing' };
  const [status, health, exit] = r.stdout.trim().split(' ');
  return { status, health, exit: Number(exit) };
}

export function logsOf(host, container, lines = 40) {
  const r = docker(host, ['logs', '--tail', String(lines), container]);
  return `${r.stdout ?? ''}${r.stderr ?? ''}`;
}

/** Runs the plan: volumes, then each service once what it depends on is in the state it asks for. */
export async function startStack({ host, stack, project, say, timeoutMs = 180_000 }) {
  for (const [volume, spec] of stack.volumes) {
    const opts = Object.entries(spec?.driver_opts ?? {}).flatMap(([k, v]) => ['--opt', `${k}=${v}`]);
    const r = docker(host, [
      'volume',
      'create',
      '--label',
      `wallet.images.project=${project}`,
      ...(spec?.driver ? ['--driver', spec.driver] : []),
      ...opts,
      volume,
    ]);
    if (r.status !== 0) throw new Error(`docker volume create ${volume}: ${r.stderr}`);
  }
  const started = {};
  for (const svc of stack.plan) {
    for (const [dep, { condition } = {}] of Object.entries(svc.depends)) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const s = state(host, `${project}-${dep}`);
        if (
          condition === 'service_healthy'
            ? s.health === 'healthy'
            : condition === 'service_completed_successfully'
              ? s.status === 'exited' && s.exit === 0
              : s.status === 'running'
        )
          break;
        if (s.status === 'exited' && condition !== 'service_completed_successfully') {
          throw new Error(`${dep} exited (code ${s.exit}) before ${svc.name} could start:\n${logsOf(host, `${project}-${dep}`)}`);
        }
        if (Date.now() > until)
          throw new Error(`${dep} not ${condition ?? 'started'} after ${timeoutMs / 1000} s (${s.status}/${s.health}):\n${logsOf(host, `${project}-${dep}`)}`);
        await sleep(500);
      }
    }
    const r = docker(host, svc.args);
    if (r.status !== 0) throw new Error(`docker run ${svc.name}: ${r.stderr}`);
    started[svc.name] = Date.now();
    say(
      `started ${svc.name} (${svc.image}) on ${
        Object.entries(svc.ports)
          .map(([a, b]) => `${a}→${b}`)
          .join(', ') || 'no ports'
      }`,
    );
  }
  // Everything with a health check (the processes' images have one) healthy.
  const until = Date.now() + timeoutMs;
  for (const svc of stack.plan) {
    for (;;) {
      const s = state(host, svc.container);
      if (s.health === 'healthy' || s.health === 'none') break;
      if (s.status !== 'running' || Date.now() > until) throw new Error(`${svc.name} is ${s.status}/${s.health}:\n${logsOf(host, svc.container)}`);
      await sleep(500);
    }
  }
}

/** Stops and removes every container and volume of the project (by label), whatever state they are in. */
export function stopStack({ host, project, say }) {
  const ids = docker(host, ['ps', '-aq', '--filter', `label=wallet.images.project=${project}`])
    .stdout.trim()
    .split('\n')
    .filter(Boolean);
  if (ids.length) {
    docker(host, ['stop', '-t', '30', ...ids]);
    docker(host, ['rm', '-f', '-v', ...ids]);
  }
  const vols = docker(host, ['volume', 'ls', '-q', '--filter', `label=wallet.images.project=${project}`])
    .stdout.trim()
    .split('\n')
    .filter(Boolean);
  if (vols.length) docker(host, ['volume', 'rm', '-f', ...vols]);
  say(`stopped and removed ${ids.length} containers and ${vols.length} volumes of ${project}`);
}
