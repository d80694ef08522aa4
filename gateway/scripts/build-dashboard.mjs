// Builds the /dashboard page and the operators' /admin/conciliaciones page (gateway/dashboard) into dist/dashboard: esbuild bundles the
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

// Each page: its HTML, the path its assets are served under, and the bundles it references.
const PAGES = [
  { html: 'index.html', prefix: '/dashboard/assets/', files: ['dashboard.js', 'dashboard.css'] },
  { html: 'conciliaciones.html', prefix: '/admin/conciliaciones/assets/', files: ['conciliaciones.js', 'dashboard.css'] },
];

const result = await build({
  entryPoints: [
    { in: join(src, 'src', 'main.ts'), out: 'dashboard' },
    { in: join(src, 'src', 'conciliaciones.ts'), out: 'conciliaciones' },
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
const hashes = new Map();
for (const file of result.outputFiles) {
  writeFileSync(file.path, file.contents);
  hashes.set(file.path.slice(out.length + 1), createHash('sha256').update(file.contents).digest('hex').slice(0, 12));
}
for (const page of PAGES) {
  let html = readFileSync(join(src, page.html), 'utf8');
  for (const name of page.files) {
    const ref = `${page.prefix}${name}"`;
    if (!hashes.has(name)) throw new Error(`no bundle ${name} for ${page.html}`);
    if (!html.includes(ref)) throw new Error(`${page.html} does not reference ${name}`);
    html = html.replace(ref, `${page.prefix}${name}?v=${hashes.get(name)}"`);
  }
  if (/<script>|<style|\sstyle=/i.test(html)) throw new Error(`${page.html} must not hold inline scripts or styles (CSP)`);
  writeFileSync(join(out, page.html), html);
}
console.log(`dashboard: ${result.outputFiles.map((f) => `${f.path.slice(out.length + 1)} ${f.contents.length} B`).join(', ')}`);
