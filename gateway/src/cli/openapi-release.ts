import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { API_VERSIONS } from '../api-versions.js';
import { breakingChanges, contractOf } from '../openapi/breaking-changes.js';
import { readRelease, releasedVersions, RELEASES_DIR, writeRelease } from '../openapi/releases.js';
import { servedDocument } from '../openapi/served-document.js';

// `npm run openapi:release -- <YYYY-MM-DD> [--replace]`: writes the contract of the document the
// gateway serves today as the snapshot of that version (gateway/openapi/releases/<version>.json), the
// baseline the breaking-change check compares with. The version must be listed in src/api-versions.ts.
// `--replace` overwrites an existing snapshot (only before the version is in clients' hands).
const args = process.argv.slice(2);
const version = args.find((a) => !a.startsWith('--'));
const replace = args.includes('--replace');
const fail = (message: string): never => {
  process.stderr.write(`openapi:release: ${message}\n`);
  process.exit(1);
};

if (!version || !/^\d{4}-\d{2}-\d{2}$/.test(version)) fail('usage: npm run openapi:release -- <YYYY-MM-DD> [--replace]');
const v = version!;
if (!API_VERSIONS.some((x) => x.version === v)) fail(`${v} is not in gateway/src/api-versions.ts (add the version entry first)`);
const older = releasedVersions().filter((r) => r < v);
const newer = releasedVersions().filter((r) => r > v);
if (newer.length) fail(`${newer.join(', ')} already released after ${v}: a snapshot is cut for the newest version only`);
if (existsSync(join(RELEASES_DIR, `${v}.json`)) && !replace) fail(`${v} already has a snapshot; pass --replace to overwrite it`);

const served = await servedDocument();
if (older.length) {
  // What this release breaks for clients of the previous one, for the changelog: every id must be announced by the entry.
  const prev = older[older.length - 1]!;
  const changes = breakingChanges(readRelease(prev), contractOf(served));
  const announced = new Set(API_VERSIONS.find((x) => x.version === v)!.breaking);
  const unannounced = changes.filter((c) => !announced.has(c.id));
  if (unannounced.length) fail(`breaking changes since ${prev} that ${v} does not announce:\n${unannounced.map((c) => `  ${c.id}`).join('\n')}`);
  process.stdout.write(`${changes.length} breaking change(s) since ${prev}, all announced by ${v}\n`);
}
const file = writeRelease(v, served);
process.stdout.write(`wrote ${file}\n`);
