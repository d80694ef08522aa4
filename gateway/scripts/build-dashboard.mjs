// Builds the /dashboard page (gateway/dashboard) into dist/dashboard: esbuild bundles the
// TypeScript and the CSS from npm packages at build time, so nothing is fetched at run time.
// Output names are fixed (the route serves an allow-list of them); index.html gets a content hash
// as a query string on each asset, so a new build is never hidden behind a cached old file.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'dashboard');
// `--out DIR` builds elsewhere (the route's spec builds into a temp directory).
const outArg = process.argv.indexOf('--out');
const out = outArg > 0 && process.argv[outArg + 1] ? resolve(process.argv[outArg + 1]) : join(root, 'dist', 'dashboard');

const result = await build({
  entryPoints: [
    { in: join(src, 'src', 'main.ts'), out: 'dashboard' },
    { in: join(src, 'styles.css'), out: 'dashboard' },
  ],
  outdir: out,
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['chrome109', 'firefox115', 'safari16'],
  legalComments: 'none',
  charset: 'utf8',
  write: false,
  logLevel: 'warning',
});

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
let html = readFileSync(join(src, 'index.html'), 'utf8');
for (const file of result.outputFiles) {
  writeFileSync(file.path, file.contents);
  const name = file.path.slice(out.length + 1);
  const ref = `/dashboard/assets/${name}"`;
  if (!html.includes(ref)) throw new Error(`index.html does not reference ${name}`);
  const hash = createHash('sha256').update(file.contents).digest('hex').slice(0, 12);
  html = html.replace(ref, `/dashboard/assets/${name}?v=${hash}"`);
}
if (/<script>|<style|\sstyle=/i.test(html)) throw new Error('index.html must not hold inline scripts or styles (CSP)');
writeFileSync(join(out, 'index.html'), html);
console.log(`dashboard: ${result.outputFiles.map((f) => `${f.path.slice(out.length + 1)} ${f.contents.length} B`).join(', ')}`);
