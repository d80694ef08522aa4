// package-lock.json must list every platform's optional binaries (@swc/core-darwin-arm64,
// @turbo/windows-64, @bufbuild/buf-linux-armv7…), not only this machine's: otherwise `npm ci` on
// another platform installs a package without its binary, or stops with "Missing: … from lock file".
// npm does not add such entries to an existing lockfile (it trusts the lockfile's tree), so a
// lockfile written while the registry did not serve them stays incomplete.
//
//   node test/scripts/lockfile.mjs check      lists optional dependencies the lockfile lacks (exit 1 if any)
//   node test/scripts/lockfile.mjs complete   completes it: drops the entries of the packages whose optional
//                                             dependencies are missing and lets `npm install --package-lock-only`
//                                             resolve them again (with their platform packages); every
//                                             other entry stays as it was, and a version that moved is an error
//
// A full regeneration (no lockfile at all) is not an option: the registry's newest versions no
// longer resolve together (ERESOLVE in @opentelemetry/*), so the locked versions are kept.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LOCKFILE = join(root, 'package-lock.json');

/** Where Node would find `name` from the package at `from` (a lockfile key), or undefined. */
export function resolveFrom(packages, from, name) {
  let dir = from;
  for (;;) {
    const key = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (packages[key]) return key;
    if (!dir) return undefined;
    const i = dir.lastIndexOf('/node_modules/');
    // A workspace ("services/ledger") looks in its own node_modules, then the root's.
    dir = i < 0 ? '' : dir.slice(0, i);
  }
}

/** Optional dependencies (the platform binaries among them) that no lockfile entry provides. */
export function missingOptional(lock) {
  const packages = lock.packages ?? {};
  const missing = [];
  for (const [from, entry] of Object.entries(packages)) {
    for (const name of Object.keys(entry.optionalDependencies ?? {})) {
      if (!resolveFrom(packages, from, name)) missing.push({ from: from || '(root)', name });
    }
  }
  return missing;
}

/** Packages that have per-platform optional packages (entries with `os` or `cpu`), with those packages. */
export function platformPackages(lock) {
  const packages = lock.packages ?? {};
  const out = new Map();
  for (const [from, entry] of Object.entries(packages)) {
    const platform = Object.keys(entry.optionalDependencies ?? {}).filter((name) => {
      const at = resolveFrom(packages, from, name);
      return at && (packages[at].os || packages[at].cpu);
    });
    if (platform.length) out.set(from, platform);
  }
  return out;
}

const readLock = () => JSON.parse(readFileSync(LOCKFILE, 'utf8'));
const versions = (lock) => Object.fromEntries(Object.entries(lock.packages).map(([k, v]) => [k, v.version]));

function complete() {
  const before = readLock();
  const missing = missingOptional(before);
  if (missing.length === 0) {
    console.log('[lockfile] complete: every optional dependency has an entry');
    return 0;
  }
  const owners = [...new Set(missing.map((m) => (m.from === '(root)' ? '' : m.from)))];
  if (owners.includes('')) {
    console.error('[lockfile] the root package lacks optional dependencies: run npm install');
    return 1;
  }
  const lock = structuredClone(before);
  for (const owner of owners) {
    // The owner and the optional packages it already has are resolved again, together.
    for (const name of Object.keys(lock.packages[owner].optionalDependencies)) {
      const at = resolveFrom(lock.packages, owner, name);
      if (at) delete lock.packages[at];
    }
    delete lock.packages[owner];
    console.log(`[lockfile] resolving ${owner.replace(/^.*node_modules\//, '')}@${before.packages[owner].version} again with its optional packages`);
  }
  writeFileSync(LOCKFILE, `${JSON.stringify(lock, null, 2)}\n`);
  const npm = process.env.npm_execpath?.endsWith('.js') ? [process.execPath, process.env.npm_execpath] : ['npm'];
  const args = ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'];
  console.log(`[lockfile] npm ${args.join(' ')}`);
  const r = spawnSync(npm[0], [...npm.slice(1), ...args], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    writeFileSync(LOCKFILE, `${JSON.stringify(before, null, 2)}\n`);
    console.error('[lockfile] npm failed: lockfile restored');
    return 1;
  }
  const after = readLock();
  const was = versions(before);
  const moved = Object.entries(versions(after)).filter(([k, v]) => was[k] !== undefined && was[k] !== v);
  for (const [k, v] of moved) console.error(`[lockfile] ${k} moved from ${was[k]} to ${v}`);
  const still = missingOptional(after);
  for (const m of still) console.error(`[lockfile] still missing: ${m.name} (optional dependency of ${m.from})`);
  const added = Object.keys(after.packages).filter((k) => !(k in before.packages));
  console.log(`[lockfile] added ${added.length} entries${added.length ? `: ${added.map((k) => k.replace(/^.*node_modules\//, '')).join(', ')}` : ''}`);
  return moved.length || still.length ? 1 : 0;
}

function check() {
  const missing = missingOptional(readLock());
  for (const m of missing) console.error(`[lockfile] missing: ${m.name} (optional dependency of ${m.from})`);
  if (missing.length) console.error('[lockfile] run: node test/scripts/lockfile.mjs complete');
  else console.log('[lockfile] complete: every optional dependency has an entry');
  return missing.length ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const cmd = process.argv[2];
  if (cmd === 'complete') process.exit(complete());
  if (cmd === 'check') process.exit(check());
  console.error('usage: node test/scripts/lockfile.mjs check|complete');
  process.exit(2);
}
