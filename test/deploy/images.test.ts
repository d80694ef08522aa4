// The container images and the compose file, the parts the real build does not cover:
// `npm run test:images` (test/images/run.mjs) builds every image and runs the compose file with
// them, so the stages, the start command, the non-root user and the health checks are proven there.
// Here: the default base image and the npm ci-only install (the real build uses a stand-in base),
// the exposed ports against each process's config defaults (the real run uses the host network),
// the build context, and the compose file's shape (every process, hardening, variables the
// processes read, JetStream fsyncing every write).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { REPO } from './support/helm.js';

interface Instruction {
  op: string;
  args: string;
  stage: number;
}

/** Dockerfile instructions with continuation lines joined and comments dropped. */
function parseDockerfile(text: string): { instructions: Instruction[]; stages: { from: string; name?: string }[] } {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!current && (line.startsWith('#') || line === '')) continue;
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      current += line.slice(0, -1) + ' ';
      continue;
    }
    logical.push(current + line);
    current = '';
  }
  const instructions: Instruction[] = [];
  const stages: { from: string; name?: string }[] = [];
  for (const l of logical) {
    const m = /^([A-Za-z]+)\s+([\s\S]*)$/.exec(l);
    if (!m) throw new Error(`bad Dockerfile line: ${l}`);
    const op = m[1]!.toUpperCase();
    if (op === 'FROM') {
      const f = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(m[2]!.trim());
      stages.push({ from: f![1]!, name: f![2] });
    }
    instructions.push({ op, args: m[2]!.trim(), stage: stages.length - 1 });
  }
  return { instructions, stages };
}

const processesModule = join(REPO, 'deploy', 'local', 'processes.mjs');
let localProcesses: { name: string; dir: string; migrate: string; main: string }[];

/** Every process of the product: the local runner's list plus the webhook service (being added to it). */
function expectedProcesses() {
  const list = [...localProcesses];
  if (!list.some((p) => p.name === 'webhook') && existsSync(join(REPO, 'services', 'webhook', 'package.json'))) {
    list.push({ name: 'webhook', dir: 'services/webhook', migrate: 'dist/cli/migrate.js', main: 'dist/main.js' });
  }
  return list;
}

const dockerDir = join(REPO, 'deploy', 'docker');
const readConfigSources = (dir: string) =>
  ['src/config.ts']
    .map((f) => join(REPO, dir, f))
    .filter(existsSync)
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n') +
  readFileSync(join(REPO, 'services', 'platform', 'src', 'config', 'config.ts'), 'utf8') +
  // The mesh credentials (MESH_TLS_DIR, WALLET_DEV_PKI_DIR) are read by the platform's mesh config.
  readFileSync(join(REPO, 'services', 'platform', 'src', 'mesh', 'config.ts'), 'utf8');

beforeAll(async () => {
  ({ processes: localProcesses } = await import(processesModule));
});

describe('Dockerfiles (deploy/docker)', () => {
  it('has one Dockerfile per process, and no other', () => {
    const files = readdirSync(dockerDir)
      .filter((f) => f.endsWith('.Dockerfile'))
      .sort();
    expect(files).toEqual(
      expectedProcesses()
        .map((p) => `${p.name}.Dockerfile`)
        .sort(),
    );
    expect(files.length).toBeGreaterThanOrEqual(8);
  });

  // Built and run for real by `npm run test:images` (test/images/run.mjs): the stages, the start
  // command, the user, the working directory and the health check are checked there, on the images.
  // What that build cannot see is checked here: it builds on a stand-in base and proves nothing of
  // the default base image or of an install that would have fallen back.
  it('builds on Node 22 slim by default and installs only with npm ci, exactly as locked', () => {
    for (const p of expectedProcesses()) {
      const text = readFileSync(join(dockerDir, `${p.name}.Dockerfile`), 'utf8');
      const { instructions, stages } = parseDockerfile(text);
      const pkg = JSON.parse(readFileSync(join(REPO, p.dir, 'package.json'), 'utf8')).name as string;
      const arg = instructions.find((i) => i.op === 'ARG' && i.args.startsWith('NODE_IMAGE='));
      expect([p.name, arg?.args, stages.every((s) => s.from === '${NODE_IMAGE}')]).toEqual([
        p.name,
        expect.stringMatching(/^NODE_IMAGE=node:22[.\d]*-(bookworm|trixie)-slim/),
        true,
      ]);
      // No fallback that would not be reproducible; no `# syntax=` frontend image to pull (air-gapped
      // builds fail on it).
      expect([p.name, /\bnpm (install|i)\b/.test(text), /^#\s*syntax=/m.test(text)]).toEqual([p.name, false, false]);
      expect([p.name, text]).toEqual([p.name, expect.stringMatching(new RegExp(`npm ci --omit=dev[^\\n]*-w ${pkg.replace('/', '\\/')}`))]);
    }
  });

  it('exposes the ports each process listens on by default (its config.ts)', () => {
    for (const p of expectedProcesses()) {
      const { instructions } = parseDockerfile(readFileSync(join(dockerDir, `${p.name}.Dockerfile`), 'utf8'));
      const exposed = instructions
        .filter((i) => i.op === 'EXPOSE')
        .flatMap((i) => i.args.split(/\s+/))
        .map(Number);
      const config = readFileSync(join(REPO, p.dir, 'src', 'config.ts'), 'utf8');
      const variables = new Map([...config.matchAll(/([A-Z_]+_PORT): env\.port\((\d+)\)/g)].map((m) => [m[1]!, Number(m[2])]));
      // The gateway's admin listener (production, or where GATEWAY_ADMIN_PORT is set).
      const admin = /DEFAULT_ADMIN_PORT = (\d+)/.exec(config);
      const defaults = [...variables.values(), ...(admin ? [Number(admin[1])] : [])];
      expect([p.name, exposed.sort()]).toEqual([p.name, defaults.sort()]);
    }
  });

  it('keeps the build context small and free of local state (.dockerignore)', () => {
    const ignore = readFileSync(join(REPO, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    expect(ignore).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', '.git', '.tools', '.env']));
  });
});

describe('compose file (deploy/compose.yaml)', () => {
  const compose = parse(readFileSync(join(REPO, 'deploy', 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, any> };

  it('runs every process, built from its Dockerfile, hardened like the chart', () => {
    for (const p of expectedProcesses()) {
      const s = compose.services[p.name];
      expect([p.name, s?.build?.dockerfile]).toEqual([p.name, `deploy/docker/${p.name}.Dockerfile`]);
      expect([p.name, s.build.context]).toEqual([p.name, '..']);
      expect([p.name, s.read_only, s.user, s.cap_drop]).toEqual([p.name, true, '1000:1000', ['ALL']]);
    }
    // Only the gateway, the sandbox's pay page and the three servers (for npm test and npm run up
    // on this machine) are published, and only on loopback.
    const published = Object.entries(compose.services)
      .filter(([, s]) => s.ports)
      .map(([n, s]) => [n, s.ports]);
    expect(published).toEqual([
      ['postgres', ['127.0.0.1:${POSTGRES_PORT:-5432}:5432']],
      ['redis', ['127.0.0.1:${REDIS_PORT:-6379}:6379']],
      ['nats', ['127.0.0.1:${NATS_PORT:-4222}:4222']],
      ['sandbox', ['127.0.0.1:8090:8090']],
      ['gateway', ['127.0.0.1:8080:8080']],
    ]);
  });

  it('brings Postgres, Redis and NATS with JetStream fsyncing every write', () => {
    expect(compose.services.postgres.image).toMatch(/^postgres:1[5-9]/);
    expect(compose.services.redis.image).toMatch(/^redis:/);
    const nats = compose.services.nats;
    expect(nats.image).toMatch(/^nats:2\.(1[0-9])/); // sync_interval needs NATS ≥ 2.10
    const mount = (nats.volumes as string[]).find((v) => v.includes('nats.conf'))!;
    const [hostPath, containerPath] = mount.split(':');
    expect(nats.command).toEqual(['-c', containerPath]);
    const conf = readFileSync(join(REPO, 'deploy', hostPath!), 'utf8').replace(/#.*$/gm, '');
    expect(conf).toMatch(/jetstream\s*\{[^}]*sync_interval:\s*always[^}]*\}/);
    expect(conf).toMatch(/jetstream\s*\{[^}]*store_dir:/);
    for (const s of ['postgres', 'redis', 'nats']) expect(compose.services[s].healthcheck).toBeDefined();
  });

  it('sets only variables the processes read, and points them at the compose services', () => {
    // The reconciliation landed in slices: the gateway reads RECONCILIATION_GRPC_ADDR once its slice is merged;
    // until then that one variable waits here (checked as soon as gateway/src/config.ts has it).
    const pending = new Set(readConfigSources('gateway').includes('RECONCILIATION_GRPC_ADDR:') ? [] : ['gateway RECONCILIATION_GRPC_ADDR']);
    // OTEL_* variables are read by the OpenTelemetry SDK itself.
    for (const p of expectedProcesses()) {
      const env = compose.services[p.name].environment as Record<string, string>;
      const source = readConfigSources(p.dir);
      for (const k of Object.keys(env)) {
        if (k.startsWith('OTEL_') || pending.has(`${p.name} ${k}`)) continue;
        expect([p.name, k, source.includes(`${k}:`) || source.includes(`env.${k}`)]).toEqual([p.name, k, true]);
      }
      expect(env.DATABASE_URL).toMatch(/@postgres:5432\//);
      expect(env.NATS_URL).toBe('nats://nats:4222');
      for (const [k, v] of Object.entries(env)) {
        if (/_ADDR$/.test(k)) expect(compose.services[String(v).split(':')[0]!]).toBeDefined();
        if (/_URL$/.test(k) && /^https?:\/\/(?!127\.)/.test(String(v))) expect(compose.services[new URL(String(v)).hostname]).toBeDefined();
      }
      // Each process waits for what it needs to be healthy.
      for (const dep of Object.values(compose.services[p.name].depends_on ?? {})) expect(dep).toEqual({ condition: 'service_healthy' });
    }
    expect(compose.services.gateway.environment.REDIS_URL).toBe('redis://redis:6379');
    // The reconciliation reaches the four services it reads from and the sandbox's reports, and the gateway reaches it.
    expect(compose.services.reconciliation.environment).toMatchObject({
      LEDGER_GRPC_ADDR: 'ledger:50051',
      TRANSFER_GRPC_ADDR: 'transfer:50052',
      DEPOSIT_GRPC_ADDR: 'pse-deposit:50053',
      COLLECT_KEY_GRPC_ADDR: 'collect-key:50054',
      RECON_REPORTS_URL: 'http://sandbox:8090/sandbox/reports',
    });
    expect(Object.keys(compose.services.reconciliation.depends_on).sort()).toEqual([
      'collect-key',
      'ledger',
      'nats',
      'postgres',
      'pse-deposit',
      'sandbox',
      'transfer',
    ]);
    expect(compose.services.gateway.environment.RECONCILIATION_GRPC_ADDR).toBe('reconciliation:50057');
    expect(compose.services.gateway.depends_on.reconciliation).toEqual({ condition: 'service_healthy' });
  });
});
