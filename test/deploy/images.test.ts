// The container images and the compose file, checked statically (no Docker engine runs here):
// one multi-stage Dockerfile per process (non-root, read-only friendly, npm ci --omit=dev, health
// check, the same start command as deploy/local/processes.mjs), a compose file that parses and runs
// every process with Postgres, Redis and NATS (JetStream, sync_interval: always), and every
// variable the compose file sets is one the process reads.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { REPO } from './support/helm.js';

interface Instruction { op: string; args: string; stage: number }

/** Dockerfile instructions with continuation lines joined and comments dropped. */
function parseDockerfile(text: string): { instructions: Instruction[]; stages: { from: string; name?: string }[] } {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!current && (line.startsWith('#') || line === '')) continue;
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) { current += line.slice(0, -1) + ' '; continue; }
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
let NODE_FLAGS: string[];

/** Every process of the product: the local runner's list plus the webhook service (being added to it). */
function expectedProcesses() {
  const list = [...localProcesses];
  if (!list.some((p) => p.name === 'webhook') && existsSync(join(REPO, 'services', 'webhook', 'package.json'))) {
    list.push({ name: 'webhook', dir: 'services/webhook', migrate: 'dist/cli/migrate.js', main: 'dist/main.js' });
  }
  return list;
}

const dockerDir = join(REPO, 'deploy', 'docker');
const readConfigSources = (dir: string) => ['src/config.ts'].map((f) => join(REPO, dir, f)).filter(existsSync).map((f) => readFileSync(f, 'utf8')).join('\n')
  + readFileSync(join(REPO, 'services', 'platform', 'src', 'config', 'config.ts'), 'utf8');

beforeAll(async () => {
  ({ processes: localProcesses, NODE_FLAGS } = await import(processesModule));
});

describe('Dockerfiles (deploy/docker)', () => {
  it('has one Dockerfile per process, and no other', () => {
    const files = readdirSync(dockerDir).filter((f) => f.endsWith('.Dockerfile')).sort();
    expect(files).toEqual(expectedProcesses().map((p) => `${p.name}.Dockerfile`).sort());
    expect(files.length).toBeGreaterThanOrEqual(8);
  });

  it('builds each process in stages and runs it slim, non-root, with a health check and the local start command', () => {
    for (const p of expectedProcesses()) {
      const file = join(dockerDir, `${p.name}.Dockerfile`);
      const text = readFileSync(file, 'utf8');
      const { instructions, stages } = parseDockerfile(text);
      const where = p.name;
      // Installs exactly as locked, with no fallback that would not be; no frontend image to pull
      // (`# syntax=` makes every build fetch one from a public registry: air-gapped builds fail).
      expect([where, /npm install/.test(text), /^#\s*syntax=/m.test(text)]).toEqual([where, false, false]);
      const pkg = JSON.parse(readFileSync(join(REPO, p.dir, 'package.json'), 'utf8')).name as string;
      const last = stages.length - 1;
      const final = instructions.filter((i) => i.stage === last);
      const all = instructions.map((i) => `${i.op} ${i.args}`).join('\n');

      // Multi-stage, on Node 22 (engines: >=22.17), slim runtime.
      expect([where, stages.length >= 3]).toEqual([where, true]);
      const arg = instructions.find((i) => i.op === 'ARG' && i.args.startsWith('NODE_IMAGE='));
      expect([where, arg?.args]).toEqual([where, expect.stringMatching(/^NODE_IMAGE=node:22[.\d]*-(bookworm|trixie)-slim/)]);
      expect([where, stages[last]!.from]).toEqual([where, '${NODE_IMAGE}']);
      // Build: full install, turbo builds only this workspace and its dependencies.
      expect([where, all]).toEqual([where, expect.stringContaining(`turbo run build --filter=${pkg}...`)]);
      // Prune: production dependencies only, with npm ci.
      expect([where, all]).toEqual([where, expect.stringMatching(new RegExp(`npm ci --omit=dev[^\\n]*-w ${pkg.replace('/', '\\/')}`))]);
      expect([where, all]).toEqual([where, expect.stringContaining(`COPY --from=build /repo/${p.dir}/dist ${p.dir}/dist`)]);
      // Runtime: non-root numeric user, files owned by root (nothing writable), no package manager run.
      const user = final.filter((i) => i.op === 'USER').pop();
      expect([where, user?.args]).toEqual([where, expect.stringMatching(/^[1-9]\d*(:[1-9]\d*)?$/)]);
      expect([where, final.some((i) => i.op === 'RUN')]).toEqual([where, false]);
      expect([where, final.find((i) => i.op === 'COPY')?.args]).toEqual([where, expect.stringContaining('--chown=root:root')]);
      expect([where, final.find((i) => i.op === 'WORKDIR')?.args]).toEqual([where, `/app/${p.dir}`]);
      // Health check on /healthz of the port the process serves it on, read from its variable.
      const hc = final.find((i) => i.op === 'HEALTHCHECK');
      expect([where, hc?.args]).toEqual([where, expect.stringMatching(/127\.0\.0\.1:' \+ \(process\.env\.[A-Z_]+_PORT \|\| \d+\) \+ '\/healthz/)]);
      // Start: exactly the local runner's command (flags, OTel preload, entry point).
      const cmd = JSON.parse(final.find((i) => i.op === 'CMD')!.args);
      expect([where, cmd]).toEqual([where, ['node', ...NODE_FLAGS, '--import', '@wallet/platform/otel', p.main]]);
      expect([where, existsSync(join(REPO, p.dir, 'src', p.main.replace(/^dist\//, '').replace(/\.js$/, '.ts')))]).toEqual([where, true]);
      expect([where, existsSync(join(REPO, p.dir, 'src', 'cli', 'migrate.ts'))]).toEqual([where, true]);
    }
  });

  it('exposes the ports each process listens on by default (its config.ts)', () => {
    for (const p of expectedProcesses()) {
      const { instructions } = parseDockerfile(readFileSync(join(dockerDir, `${p.name}.Dockerfile`), 'utf8'));
      const exposed = instructions.filter((i) => i.op === 'EXPOSE').flatMap((i) => i.args.split(/\s+/)).map(Number);
      const config = readFileSync(join(REPO, p.dir, 'src', 'config.ts'), 'utf8');
      const variables = new Map([...config.matchAll(/([A-Z_]+_PORT): env\.port\((\d+)\)/g)].map((m) => [m[1]!, Number(m[2])]));
      // The gateway's admin listener (production, or where GATEWAY_ADMIN_PORT is set).
      const admin = /DEFAULT_ADMIN_PORT = (\d+)/.exec(config);
      const defaults = [...variables.values(), ...(admin ? [Number(admin[1])] : [])];
      expect([p.name, exposed.sort()]).toEqual([p.name, defaults.sort()]);
      // The health check asks the port the process reads from its variable, with the same default.
      const [, hcVariable, hcPort] = /process\.env\.([A-Z_]+_PORT) \|\| (\d+)\) \+ '\/healthz/.exec(instructions.find((i) => i.op === 'HEALTHCHECK')!.args)!;
      expect([p.name, variables.get(hcVariable!)]).toEqual([p.name, Number(hcPort)]);
    }
  });

  it('keeps the build context small and free of local state (.dockerignore)', () => {
    const ignore = readFileSync(join(REPO, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
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
    const published = Object.entries(compose.services).filter(([, s]) => s.ports).map(([n, s]) => [n, s.ports]);
    expect(published).toEqual([
      ['postgres', ['127.0.0.1:${POSTGRES_PORT:-5432}:5432']], ['redis', ['127.0.0.1:${REDIS_PORT:-6379}:6379']],
      ['nats', ['127.0.0.1:${NATS_PORT:-4222}:4222']], ['sandbox', ['127.0.0.1:8090:8090']], ['gateway', ['127.0.0.1:8080:8080']],
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
    // OTEL_* variables are read by the OpenTelemetry SDK itself.
    for (const p of expectedProcesses()) {
      const env = compose.services[p.name].environment as Record<string, string>;
      const source = readConfigSources(p.dir);
      for (const k of Object.keys(env)) {
        if (k.startsWith('OTEL_')) continue;
        expect([p.name, k, source.includes(`${k}:`)]).toEqual([p.name, k, true]);
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
  });
});
