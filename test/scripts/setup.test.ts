// The set-up that `npm test` and `npm run up` run first (test/scripts/setup.mjs): what it does for
// a server that does not answer, a real stopped Redis and NATS on ports of this test's own that it
// starts (and this test stops, by pid), and the one message when Chromium or a server is missing.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@wallet/platform/testing';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'setup.mjs');

function setup(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SCRIPT, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.once('exit', (code) => resolve({ code, out, err }));
  });
}

const reachable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

describe('setup (npm test and npm run up)', () => {
  let setupModule: any;
  beforeAll(async () => {
    setupModule = await import(SCRIPT);
  });

  it('starts a server that is installed, installs one that is not where it may, else stops', () => {
    const local = { host: '127.0.0.1', variable: 'REDIS_URL' };
    expect(setupModule.plan(local, { installed: true, canApt: false })).toEqual({ action: 'start' });
    expect(setupModule.plan(local, { installed: true, canApt: true })).toEqual({ action: 'start' });
    expect(setupModule.plan(local, { installed: false, canApt: true })).toEqual({ action: 'install' });
    expect(setupModule.plan(local, { installed: false, canApt: false })).toMatchObject({ action: 'stop', reason: expect.stringContaining('not installed') });
    // A server on another host is not this script's to start.
    expect(setupModule.plan({ host: 'db.internal', variable: 'DATABASE_URL' }, { installed: true, canApt: true })).toMatchObject({
      action: 'stop',
      reason: expect.stringContaining('DATABASE_URL'),
    });
  });

  it('names both ways out when a server cannot be had: the packages, or compose', () => {
    const msg: string = setupModule.serversMessage([
      { name: 'Redis', host: '127.0.0.1', port: 6379, variable: 'REDIS_URL', pkg: 'redis-server', reason: 'not installed' },
      { name: 'NATS (JetStream)', host: '127.0.0.1', port: 4222, variable: 'NATS_URL', pkg: 'nats-server', reason: 'not installed' },
    ]);
    expect(msg).toContain('Redis at 127.0.0.1:6379 (REDIS_URL): not installed');
    expect(msg).toContain('sudo apt-get install redis-server nats-server');
    expect(msg).toContain('docker compose -f deploy/compose.yaml up -d postgres redis nats');
  });

  it('Debian packages are installed only as root on Debian, and never with WALLET_NO_APT=1', () => {
    expect(setupModule.machine({ ...process.env, WALLET_NO_APT: '1' }).canApt).toBe(false);
    const m = setupModule.machine(process.env);
    expect(m.canApt).toBe(m.isRoot && m.debian && process.env.WALLET_NO_APT !== '1');
  });

  it('starts a stopped Redis and NATS itself, saying so before it does', async () => {
    const [redisPort, natsPort] = [await freePort(), await freePort()];
    const dir = mkdtempSync(join(tmpdir(), 'wallet-setup-'));
    const pids: number[] = [];
    try {
      expect(await reachable(redisPort)).toBe(false);
      const r = await setup(['servers'], {
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        NATS_URL: `nats://127.0.0.1:${natsPort}`,
        WALLET_SERVERS_DIR: dir,
        WALLET_NO_APT: '1',
      });
      for (const [name, file] of [
        ['redis', 'redis.pid'],
        ['nats', 'nats.pid'],
      ] as const) {
        const port = name === 'redis' ? redisPort : natsPort;
        try {
          pids.push(Number(readFileSync(join(dir, `${name}-${port}`, file), 'utf8').trim()));
        } catch {
          /* not started */
        }
      }
      expect(r).toMatchObject({ code: 0, err: '' });
      const lines = r.out.trim().split('\n');
      expect(lines).toEqual([
        expect.stringMatching(/^\[setup\] PostgreSQL: up at /),
        expect.stringMatching(
          new RegExp(`^\\[setup\\] Redis: not running at 127\\.0\\.0\\.1:${redisPort}: starting it: \\S*redis-server --daemonize yes .*--port ${redisPort} `),
        ),
        `[setup] Redis: up at 127.0.0.1:${redisPort}`,
        expect.stringMatching(
          new RegExp(
            `^\\[setup\\] NATS \\(JetStream\\): not running at 127\\.0\\.0\\.1:${natsPort}: starting it: \\S*nats-server -a 127\\.0\\.0\\.1 -p ${natsPort} -js `,
          ),
        ),
        `[setup] NATS (JetStream): up at 127.0.0.1:${natsPort}`,
      ]);
      expect(await reachable(redisPort)).toBe(true);
      expect(await reachable(natsPort)).toBe(true);
      expect(pids).toHaveLength(2);
    } finally {
      for (const pid of pids)
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          /* gone */
        }
      for (let i = 0; i < 40 && ((await reachable(redisPort)) || (await reachable(natsPort))); i++) await new Promise((r) => setTimeout(r, 100));
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('stops before any test with one message when Chromium is missing and cannot be installed', async () => {
    const r = await setup(['browser'], { CHROMIUM_PATH: '/nonexistent/chromium', WALLET_NO_APT: '1' });
    expect(r.code).toBe(1);
    expect(r.err).toContain('there is none at /nonexistent/chromium');
    expect(r.err).toContain('sudo apt-get install chromium');
    expect(r.err).toContain('CHROMIUM_PATH');
  });

  it('finds promtool, and without it (none on PATH, no apt) goes on with a loud message: the promtool tests skip', async () => {
    const found = await setup(['promtool'], {});
    expect(found.code).toBe(0);
    const missing = await setup(['promtool'], { PATH: '/nonexistent', WALLET_NO_APT: '1' });
    expect(missing.code).toBe(0);
    expect(missing.err).toContain('No promtool');
    expect(missing.err).toContain('sudo apt-get install --no-install-recommends prometheus');
    expect(found.out + found.err).toMatch(/promtool: \/|No promtool/);
  });

  it('finds pdfsig, and without it (none on PATH, no apt) goes on with a loud message: the receipt signature tests skip', async () => {
    const found = await setup(['pdfsig'], {});
    expect(found.code).toBe(0);
    const missing = await setup(['pdfsig'], { PATH: '/nonexistent', WALLET_NO_APT: '1' });
    expect(missing.code).toBe(0);
    expect(missing.err).toContain('No pdfsig');
    expect(missing.err).toContain('will be SKIPPED');
    expect(missing.err).toContain('sudo apt-get install --no-install-recommends poppler-utils');
    expect(found.out + found.err).toMatch(/pdfsig: \/|No pdfsig/);
  });
});
