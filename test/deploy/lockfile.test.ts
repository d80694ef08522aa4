// The committed package-lock.json installs everywhere and as it is: every platform's optional
// binaries are in it (npm ci on a Mac or in an arm64 image gets its swc, turbo and buf), and the
// install that `npm run up` and `npm test` take first (test/scripts/setup.mjs deps: npm ci) works
// on a fresh copy of this tree and leaves `git status` clean.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO } from './support/helm.js';

const lockfileModule = join(REPO, 'test', 'scripts', 'lockfile.mjs');
let missingOptional: (lock: unknown) => { from: string; name: string }[];
let platformPackages: (lock: unknown) => Map<string, string[]>;
const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, any> };

beforeAll(async () => {
  ({ missingOptional, platformPackages } = await import(lockfileModule));
});

describe('package-lock.json', () => {
  it('lists every optional dependency, so every platform gets its binaries', () => {
    expect(missingOptional(lock)).toEqual([]);
    // Not vacuous: the packages with per-platform binaries that the build needs are found, with
    // the platforms people build on.
    const platform = platformPackages(lock);
    for (const owner of ['node_modules/@swc/core', 'node_modules/turbo', 'node_modules/@bufbuild/buf']) {
      const names = platform.get(owner) ?? [];
      expect([
        owner,
        names.some((n) => /darwin-arm64/.test(n)),
        names.some((n) => /linux-(x64|64)/.test(n)),
        names.some((n) => /win(32|dows)-(x64|64)/.test(n)),
      ]).toEqual([owner, true, true, true]);
    }
  });

  it('the check fails on a lockfile that lacks one platform package', () => {
    for (const key of ['node_modules/@swc/core-darwin-arm64', 'node_modules/@turbo/windows-64', 'node_modules/@bufbuild/buf-linux-armv7']) {
      const broken = structuredClone(lock);
      delete broken.packages[key];
      expect(missingOptional(broken)).toEqual([expect.objectContaining({ name: key.replace('node_modules/', '') })]);
    }
  });
});

describe('the install step of npm run up and npm test (setup.mjs deps)', () => {
  let dir: string | undefined;
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installs a fresh copy of this tree with npm ci and leaves git status clean', () => {
    // The tree as it is now (committed or not, ignored files left out), as a fresh clone sees it.
    dir = mkdtempSync(join(tmpdir(), 'wallet-install-'));
    const files = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' })
      .stdout.split('\0')
      .filter((f) => f && existsSync(join(REPO, f)));
    for (const f of files) {
      mkdirSync(dirname(join(dir, f)), { recursive: true });
      copyFileSync(join(REPO, f), join(dir, f));
    }
    const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, encoding: 'utf8' });
    git('init', '-q');
    git('add', '-A');
    expect(git('commit', '-q', '-m', 'tree').status).toBe(0);

    // Node 22 from this repository's .tools (no second download), the rest exactly as up.sh does it.
    const r = spawnSync('bash', ['-c', 'source test/scripts/setup.sh deps'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, WALLET_TOOLS_DIR: join(REPO, '.tools'), npm_execpath: '' },
      timeout: 240_000,
    });
    const out = `${r.stdout}${r.stderr}`;
    expect([r.status, out]).toEqual([0, expect.stringContaining('npm ci')]);
    expect(out).not.toMatch(/\[setup\] npm install/);
    expect(existsSync(join(dir, 'node_modules', '.bin', 'turbo'))).toBe(true);
    expect(git('status', '--porcelain').stdout).toBe('');
  }, 300_000);
});
