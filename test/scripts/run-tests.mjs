// npm test: the house rules first (`npm run lint`, `npm run format:check`: docs/architecture.md
// "Rules the code keeps"), then every workspace's Jest suite in dependency order on the real servers;
// prints one summary table (a row per check and per workspace) and the closing line "N passed, N failed".
// Usage: node test/scripts/run-tests.mjs [lint|format|workspace-dir ...]   (default: all)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const all = [
  'services/platform',
  'services/ledger',
  'services/sandbox',
  'services/transfer',
  'services/pse-deposit',
  'services/collect-key',
  'services/receipt',
  'services/webhook',
  'services/reconciliation',
  'services/invariants',
  'sdk',
  'gateway',
  'test',
];
const checks = { lint: ['run', 'lint'], format: ['run', 'format:check'] };
const args = process.argv.slice(2);
const selectedChecks = args.length ? args.filter((a) => a in checks) : Object.keys(checks);
const selected = args.length ? args.filter((a) => !(a in checks)) : all;
const tmp = mkdtempSync(join(tmpdir(), 'wallet-tests-'));
const rows = [];
let passed = 0,
  failed = 0,
  skipped = 0,
  broken = false;
const failedChecks = [];

for (const name of selectedChecks) {
  console.log(`\n[tests] ${name}: npm ${checks[name].join(' ')}`);
  const started = Date.now();
  // Prettier's check names every file it would change: the first few are enough here.
  const r = spawnSync('npm', ['--silent', ...checks[name]], { cwd: root, stdio: name === 'format' ? ['ignore', 'pipe', 'pipe'] : 'inherit', encoding: 'utf8' });
  if (name === 'format') {
    const lines = `${r.stdout ?? ''}${r.stderr ?? ''}`.split('\n').filter(Boolean);
    console.log(lines.slice(0, 20).join('\n') + (lines.length > 20 ? `\n… ${lines.length - 20} more lines (npm run format:check)` : ''));
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (r.status !== 0) {
    failedChecks.push(name);
    broken = true;
  }
  rows.push([name, '–', '–', '–', secs, r.status === 0 ? 'ok' : `failed (npm run ${checks[name].at(-1)})`]);
}

for (const ws of selected) {
  const cwd = join(root, ws);
  if (!existsSync(join(cwd, 'jest.config.cjs'))) {
    console.log(`\n[tests] ${ws}: no jest config, skipped`);
    continue;
  }
  const out = join(tmp, `${ws.replace(/\//g, '_')}.json`);
  console.log(`\n[tests] ${ws}`);
  const started = Date.now();
  const r = spawnSync(
    process.execPath,
    ['--experimental-vm-modules', '--experimental-async-context-frame', join(root, 'node_modules/jest/bin/jest.js'), '--json', `--outputFile=${out}`],
    { cwd, stdio: 'inherit', env: { ...process.env, NODE_NO_WARNINGS: '1' } },
  );
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (!existsSync(out)) {
    rows.push([ws, 0, 0, 0, secs, `runner exited ${r.status}`]);
    broken = true;
    continue;
  }
  const j = JSON.parse(readFileSync(out, 'utf8'));
  passed += j.numPassedTests;
  failed += j.numFailedTests;
  skipped += j.numPendingTests + (j.numTodoTests ?? 0);
  const suiteFailures = j.numFailedTestSuites;
  if (r.status !== 0 && j.numFailedTests === 0) broken = true; // a suite failed to load or run
  rows.push([ws, j.numPassedTests, j.numFailedTests, j.numPendingTests, secs, r.status === 0 ? 'ok' : `${suiteFailures} suite(s) failed`]);
}
rmSync(tmp, { recursive: true, force: true });

console.log('\n| workspace | passed | failed | skipped | seconds | result |\n|---|---:|---:|---:|---:|---|');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
console.log(
  `\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}${failedChecks.length ? `; checks failed: ${failedChecks.join(', ')}` : ''}`,
);
process.exit(failed > 0 || broken ? 1 : 0);
