// The table of an interleaved A/B (test/bench/ab.sh): for each side, the mean of its runs' sends/s,
// p50/p99 of the 201, CPU µs per send by process and Postgres statements per send, with the change.
// Usage: node test/bench/ab-summary.mjs [reports dir]   (reads ab-base-N.log and ab-new-N.log)
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), 'reports');
const ROW = 'POST /transfers/send → 201, 100 companies';

/** One run's figures, from the bench's log (its report is printed there too). */
function parse(text) {
  const line = text.split('\n').find((l) => l.includes(`${ROW}:`) && l.includes('/s p50'));
  const m = line?.match(/: (\d+(?:\.\d+)?)\/s p50 ([\d.]+) p99 ([\d.]+)/);
  if (!m) return undefined;
  const lines = text.split('\n');
  const head = lines.findIndex((l) => l.startsWith('| CPU µs per op'));
  const names = lines[head]
    .split('|')
    .slice(2, -1)
    .map((s) => s.trim());
  const row = lines.slice(head).find((l) => l.startsWith(`| ${ROW} |`));
  const cells = row
    .split('|')
    .slice(2, -1)
    .map((s) => Number(s.trim().replace(/[^\d.]/g, '')));
  const cpu = Object.fromEntries(names.map((n, i) => [n, cells[i]]));
  const st = text.match(new RegExp(`Postgres per operation: ${ROW.replace(/[/→]/g, '.')}\\n\\n([\\d.]+) statements`));
  return { rate: Number(m[1]), p50: Number(m[2]), p99: Number(m[3]), cpu, statements: st ? Number(st[1]) : NaN };
}

const runs = { base: [], new: [] };
for (const f of readdirSync(dir)
  .filter((n) => /^ab-(base|new)-\d+\.log$/.test(n))
  .sort()) {
  const r = parse(readFileSync(join(dir, f), 'utf8'));
  if (r) runs[f.split('-')[1]].push(r);
  else console.error(`[ab-summary] ${f}: no sends row (the run failed?)`);
}
if (!runs.base.length || !runs.new.length) {
  console.error('[ab-summary] need runs of both sides');
  process.exit(1);
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const fmt = (x, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const change = (a, b) => `${b >= a ? '+' : '−'}${fmt(Math.abs((b / a - 1) * 100))}%`;
/** One line of the table: the mean of each side (with each run's figure when `each`) and the change. */
const row = (label, f, d = 0, each = false) => {
  const side = (rs) => `${fmt(mean(rs.map(f)), d)}${each ? ` (${rs.map(f).join(', ')})` : ''}`;
  console.log(`| ${label} | ${side(runs.base)} | ${side(runs.new)} | ${change(mean(runs.base.map(f)), mean(runs.new.map(f)))} |`);
};
console.log(`| | base | this tree | change |\n|---|---:|---:|---:|`);
row('sends/s (runs)', (r) => r.rate, 0, true);
row('p50 of the 201, ms', (r) => r.p50);
row('p99 of the 201, ms', (r) => r.p99);
row('CPU per send, total', (r) => r.cpu.total);
for (const p of Object.keys(runs.new[0].cpu).filter((n) => n !== 'total' && !n.includes('÷'))) row(p, (r) => r.cpu[p] ?? 0);
row('Postgres statements per send', (r) => r.statements, 1);
