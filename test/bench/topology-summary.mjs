// The table of interleaved runs of the sends phase under different topologies (issue 44, docs/scaling.md):
// BENCH_PG_SPLIT, BENCH_REPLICAS, BENCH_PG_BY_SERVICE. Reads the bench's logs (its report is printed there),
// groups them by their `topology:` line (none: one cluster, one replica each) and prints, per topology, each
// run's sends/s and the means of p50/p99, CPU µs per send by process group, cores busy (all groups), the
// Postgres statements per send, and Postgres by service (statements, backend CPU µs per send) when measured.
// Usage: node test/bench/topology-summary.mjs [--min-busy 1.8] <log>…
//   --min-busy C: only the runs whose own processes kept at least C cores busy (the others shared the machine with
//   other work: their sends/s and CPU per send are not the product's alone).
import { readFileSync } from 'node:fs';

const ROW = 'POST /transfers/send → 201, 100 companies';
const cells = (line) =>
  line
    .split('|')
    .slice(1, -1)
    .map((s) => s.trim());

/** A short name of a run's topology, from its report's `topology:` line (the per-service roles are not a topology). */
function topologyOf(line) {
  const parts = (line ?? '')
    .replace(/^- topology: /, '')
    .split('; ')
    .filter((p) => p && !p.startsWith('each process as its own'))
    .map((p) => p.replace(/ on a second cluster .*$/, ' on a 2nd cluster'));
  return parts.length ? parts.join('; ') : 'one cluster, one replica each';
}

/** One run's figures, from its log. */
function parse(file) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const m = lines.find((l) => l.includes(`${ROW}:`) && l.includes('/s p50'))?.match(/: (\d+(?:\.\d+)?)\/s p50 ([\d.]+) p99 ([\d.]+)/);
  if (!m) return undefined;
  const table = (head) => {
    const i = lines.findIndex((l) => l.startsWith(head));
    if (i < 0) return undefined;
    const names = cells(lines[i]).slice(1);
    const row = lines.slice(i).find((l) => l.startsWith(`| ${ROW} |`));
    return Object.fromEntries(names.map((n, k) => [n, Number(cells(row)[k + 1].replace(/[^\d.]/g, ''))]));
  };
  const cpu = table('| CPU µs per op');
  const cores = table('| cores busy');
  const st = text.match(new RegExp(`Postgres per operation: ${ROW.replace(/[/→]/g, '.')}\\n\\n([\\d.]+) statements`));
  const byService = {};
  const at = lines.findIndex((l) => l === `### Postgres by service: ${ROW}`);
  if (at >= 0) {
    const head = cells(lines[at + 4]);
    for (const l of lines.slice(at + 6)) {
      if (!l.startsWith('|') || l.startsWith('| **total')) break;
      const c = cells(l);
      // By service whichever cluster holds it (the clusters' totals are the CPU groups `postgres`, `postgres 2`).
      const b = (byService[c[0]] ??= { statements: 0, cpu: 0 });
      b.statements += Number(c[head.indexOf('statements')]);
      b.cpu += Number(c[head.indexOf('backend CPU µs')]);
    }
  }
  // Commits, WAL bytes and fsyncs per send, by cluster (the line under the by-service table).
  const wal = {};
  const walLine = at >= 0 ? lines.slice(at).find((l) => l.startsWith('Per operation, by cluster')) : undefined;
  for (const m of walLine?.matchAll(/(postgres(?: \d)?) ([\d.]+) commits, ([\d,]+) WAL bytes, ([\d.]+) WAL fsyncs(?:, ([\d.]+) full-page images)?/g) ?? [])
    wal[m[1]] = { commits: Number(m[2]), bytes: Number(m[3].replace(/,/g, '')), syncs: Number(m[4]), fpi: m[5] === undefined ? NaN : Number(m[5]) };
  return {
    file,
    wal,
    topology: topologyOf(lines.find((l) => l.startsWith('- topology: '))),
    start: lines.find((l) => l.startsWith('start '))?.slice(6) ?? '',
    rate: Number(m[1]),
    p50: Number(m[2]),
    p99: Number(m[3]),
    cpu,
    busy: Object.entries(cores ?? {}).reduce((a, [, v]) => a + v, 0),
    statements: st ? Number(st[1]) : NaN,
    byService,
    ok: /all COMPLETED/.test(text) && /ledger invariants after the run: ok/.test(text),
  };
}

const args = process.argv.slice(2);
const minBusyAt = args.indexOf('--min-busy');
const minBusy = minBusyAt >= 0 ? Number(args.splice(minBusyAt, 2)[1]) : 0;
const runs = args
  .map((f) => {
    const r = parse(f);
    if (!r) console.error(`[topology-summary] ${f}: no sends row (the run failed?)`);
    else if (r.busy < minBusy) console.error(`[topology-summary] ${f}: left out (${r.busy.toFixed(2)} cores busy < ${minBusy})`);
    return r && r.busy >= minBusy ? r : undefined;
  })
  .filter(Boolean);
/** The mean of the runs that have the figure (NaN: a run without it, e.g. a cluster it did not have). */
const mean = (xs) => {
  const v = xs.filter(Number.isFinite);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : NaN;
};
const fmt = (x, d = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : '');
const topologies = [...new Set(runs.map((r) => r.topology))];
const side = Object.fromEntries(topologies.map((t) => [t, runs.filter((r) => r.topology === t)]));
const row = (label, f, d = 0, each = false) =>
  console.log(
    `| ${label} | ${topologies
      .map((t) => {
        const xs = side[t].map(f);
        return `${fmt(mean(xs), d)}${each ? ` (${xs.map((x) => fmt(x, d)).join(', ')})` : ''}`;
      })
      .join(' | ')} |`,
  );
console.log(`| | ${topologies.join(' | ')} |\n|---|${topologies.map(() => '---:').join('|')}|`);
row('runs', (r) => side[r.topology].length);
row('sends/s (each run)', (r) => r.rate, 0, true);
row('p50 of the 201, ms', (r) => r.p50);
row('p99 of the 201, ms', (r) => r.p99);
row('cores busy, all measured groups (of 2)', (r) => r.busy, 2, true);
row('runs with every accepted send COMPLETED and the invariants ok', (r) => side[r.topology].filter((x) => x.ok).length);
const groups = [...new Set(runs.flatMap((r) => Object.keys(r.cpu)))].filter((n) => !n.includes('÷'));
for (const g of groups) row(`CPU µs per send: ${g}`, (r) => r.cpu[g] ?? NaN);
row('Postgres statements per send', (r) => r.statements, 1);
const services = [...new Set(runs.flatMap((r) => Object.keys(r.byService)))];
for (const s of services) row(`Postgres, ${s}: statements per send`, (r) => r.byService[s]?.statements ?? NaN, 2);
for (const s of services) row(`Postgres, ${s}: backend CPU µs per send`, (r) => r.byService[s]?.cpu ?? NaN);
const clusters = [...new Set(runs.flatMap((r) => Object.keys(r.wal)))];
for (const c of clusters) {
  row(`${c}: commits per send`, (r) => r.wal[c]?.commits ?? NaN, 2);
  row(`${c}: WAL bytes per send`, (r) => r.wal[c]?.bytes ?? NaN);
  row(`${c}: WAL fsyncs per send`, (r) => r.wal[c]?.syncs ?? NaN, 2);
  row(`${c}: full-page images per send`, (r) => r.wal[c]?.fpi ?? NaN, 2);
}
console.log(`\nruns: ${runs.map((r) => `${r.file} (${r.start})`).join('; ')}`);
