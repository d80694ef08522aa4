// Summarises a V8 .cpuprofile (from BENCH_PROFILE=<process>): the top functions by self time and
// the self time per package/file group, and the functions of the product's own code by total time
// (self + callees: where a request's CPU goes). Usage: node test/bench/profile-top.mjs <file.cpuprofile> [N]
import { readFileSync } from 'node:fs';

const [file, nArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node test/bench/profile-top.mjs <file.cpuprofile> [N]');
  process.exit(2);
}
const N = Number(nArg ?? 30);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = prof.timeDeltas;
for (let i = 0; i < prof.samples.length; i++) self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + (dt[i] ?? 0));
const idleIds = new Set(prof.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
const all = [...self.values()].reduce((a, b) => a + b, 0);
// Percentages are of the busy time (samples outside `(idle)`).
const total = [...self].filter(([id]) => !idleIds.has(id)).reduce((a, [, t]) => a + t, 0);
const short = (url) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, 'nm:')
    .replace(/^\/work\/main\//, '');
const group = (url) => {
  if (!url) return '(native/VM)';
  if (url.startsWith('node:internal/deps/undici')) return 'node core: fetch (bundled undici)';
  if (url.startsWith('node:internal/http2') || url.startsWith('node:http2')) return 'node core: http2 (gRPC)';
  if (url.startsWith('node:')) return 'node core';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  return short(url).split('/').slice(0, 2).join('/');
};
const fn = new Map(),
  grp = new Map();
for (const [id, t] of self) {
  if (idleIds.has(id)) continue;
  const n = byId.get(id);
  const cf = n.callFrame;
  const key = `${cf.functionName || '(anonymous)'}  ${short(cf.url)}:${cf.lineNumber + 1}`;
  fn.set(key, (fn.get(key) ?? 0) + t);
  const g = cf.url ? group(cf.url) : cf.functionName.startsWith('(') ? cf.functionName : '(native/VM)';
  grp.set(g, (grp.get(g) ?? 0) + t);
}
const pc = (t) => `${((t / total) * 100).toFixed(1).padStart(5)}%`;
console.log(`sampled ${(all / 1e6).toFixed(2)} s, busy ${(total / 1e6).toFixed(2)} s; percentages of the busy time`);
console.log('\nself time by package / file group:');
for (const [k, t] of [...grp].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${pc(t)}  ${k}`);
console.log(`\ntop ${N} functions by self time:`);
for (const [k, t] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, N)) console.log(`${pc(t)}  ${k}`);

// Total (inclusive) time of the product's own functions: each busy sample counts once for every
// distinct product function on its stack.
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const own = (url) => url && !url.includes('/node_modules/') && !url.startsWith('node:') && /\/(services|gateway|proto)\//.test(url);
const inclusive = new Map();
for (const [id, t] of self) {
  if (idleIds.has(id)) continue;
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const cf = byId.get(cur).callFrame;
    if (!own(cf.url)) continue;
    const key = `${cf.functionName || '(anonymous)'}  ${short(cf.url)}:${cf.lineNumber + 1}`;
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + t);
  }
}
console.log(`\ntop ${N} product functions by total time (self + callees; synchronous stacks only):`);
for (const [k, t] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, N)) console.log(`${pc(t)}  ${k}`);
