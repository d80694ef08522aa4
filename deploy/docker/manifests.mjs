// The build stage of deploy/docker/<process>.Dockerfile: the manifests the prune stage installs from.
//   node deploy/docker/manifests.mjs @wallet/<process> /manifests
// Copies package-lock.json, the root package.json with `workspaces` cut down to the process and
// the workspaces it depends on (its @wallet/* dependencies, recursively), and those workspaces'
// package.json files. `npm ci --omit=dev` on that installs exactly the locked versions of the
// process's production dependencies and nothing else: with every workspace listed, npm installs
// the production dependencies of all of them (`-w` does not narrow `npm ci`), so each image carried
// the sandbox's mail server, the receipt's PDF fonts and the tests' PDF parser.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [name, out] = process.argv.slice(2);
if (!name || !out) {
  console.error('usage: node deploy/docker/manifests.mjs @wallet/<process> <out-dir>');
  process.exit(2);
}

const root = JSON.parse(readFileSync('package.json', 'utf8'));
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
// Workspace name → its directory, from the lockfile (the same list npm ci checks against).
const dirs = new Map(
  Object.entries(lock.packages)
    .filter(([k, v]) => v.link && k.startsWith('node_modules/'))
    .map(([k, v]) => [k.slice('node_modules/'.length), v.resolved]),
);
if (!dirs.has(name)) {
  console.error(`${name} is not a workspace of this repository`);
  process.exit(2);
}

const keep = new Set();
const visit = (ws) => {
  if (keep.has(ws)) return;
  keep.add(ws);
  const pkg = JSON.parse(readFileSync(join(dirs.get(ws), 'package.json'), 'utf8'));
  for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) if (dirs.has(dep)) visit(dep);
};
visit(name);

mkdirSync(out, { recursive: true });
copyFileSync('package-lock.json', join(out, 'package-lock.json'));
const kept = [...keep].map((ws) => dirs.get(ws)).sort();
writeFileSync(join(out, 'package.json'), `${JSON.stringify({ ...root, workspaces: kept }, null, 2)}\n`);
for (const dir of kept) {
  mkdirSync(join(out, dir), { recursive: true });
  copyFileSync(join(dir, 'package.json'), join(out, dir, 'package.json'));
}
console.log(`[manifests] ${name}: workspaces ${kept.join(', ')}`);
