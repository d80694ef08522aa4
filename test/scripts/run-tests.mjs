// npm test: the house rules first (`npm run lint`, `npm run format:check`: docs/architecture.md
// "Rules the code keeps"), then every workspace's Jest suite on the real servers: the end-to-end
// workspace `test` beside the others, which run in dependency order (TEST_LANES=1: all in a row);
// prints one summary table (a row per check and per workspace) and the closing line "N passed, N failed".
// Usage: node test/scripts/run-tests.mjs [lint|format|workspace-dir ...]   (default: all)
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
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
const slowest = [];

/** Runs `cmd args` to completion: streamed live, or into `logFile` (printed whole once it ends) when given. */
function run(cmd, argv, opts, logFile) {
  return new Promise((resolve) => {
    const out = logFile ? openSync(logFile, 'w') : undefined;
    const child = spawn(cmd, argv, { ...opts, stdio: ['ignore', out ?? 'inherit', out ?? 'inherit'] });
    child.on('close', (status) => {
      if (out !== undefined) closeSync(out);
      resolve(status ?? 1);
    });
  });
}

// The house rules: both at once (each is one process over the whole tree).
await Promise.all(
  selectedChecks.map(async (name) => {
    const log = join(tmp, `${name}.log`);
    const started = Date.now();
    const status = await run('npm', ['--silent', ...checks[name]], { cwd: root }, log);
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    // Prettier's check names every file it would change: the first few are enough here.
    const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    console.log(
      `\n[tests] ${name}: npm ${checks[name].join(' ')}\n` +
        lines.slice(0, 20).join('\n') +
        (lines.length > 20 ? `\n… ${lines.length - 20} more lines (npm run ${checks[name].at(-1)})` : ''),
    );
    if (status !== 0) {
      failedChecks.push(name);
      broken = true;
    }
    rows.push([name, '–', '–', '–', secs, status === 0 ? 'ok' : `failed (npm run ${checks[name].at(-1)})`]);
  }),
);

/** One workspace's Jest suite; its row in the table. `logFile`: run quietly, print the log when it ends. */
async function runWorkspace(ws, logFile) {
  const cwd = join(root, ws);
  if (!existsSync(join(cwd, 'jest.config.cjs'))) {
    console.log(`\n[tests] ${ws}: no jest config, skipped`);
    return;
  }
  const out = join(tmp, `${ws.replace(/\//g, '_')}.json`);
  console.log(`\n[tests] ${ws}${logFile ? ' (in the background; its log follows when it ends)' : ''}`);
  const started = Date.now();
  const status = await run(
    process.execPath,
    ['--experimental-vm-modules', '--experimental-async-context-frame', join(root, 'node_modules/jest/bin/jest.js'), '--json', `--outputFile=${out}`],
    { cwd, env: { ...process.env, NODE_NO_WARNINGS: '1' } },
    logFile,
  );
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (logFile) console.log(`\n[tests] ${ws} ended (${secs} s):\n${readFileSync(logFile, 'utf8')}`);
  if (!existsSync(out)) {
    rows.push([ws, 0, 0, 0, secs, `runner exited ${status}`]);
    broken = true;
    return;
  }
  const j = JSON.parse(readFileSync(out, 'utf8'));
  passed += j.numPassedTests;
  failed += j.numFailedTests;
  skipped += j.numPendingTests + (j.numTodoTests ?? 0);
  const suiteFailures = j.numFailedTestSuites;
  if (status !== 0 && j.numFailedTests === 0) broken = true; // a suite failed to load or run
  rows.push([ws, j.numPassedTests, j.numFailedTests, j.numPendingTests, secs, status === 0 ? 'ok' : `${suiteFailures} suite(s) failed`]);
  // Where the time went: the slowest files of the workspace (a suite's speed is watched, not asserted).
  const files = j.testResults
    .map((t) => ({ file: t.name.slice(cwd.length + 1), secs: (t.endTime - t.startTime) / 1000 }))
    .sort((a, b) => b.secs - a.secs)
    .slice(0, 8);
  slowest.push(...files.map((f) => ({ ...f, file: `${ws}/${f.file}` })));
}

/**
 * Two lanes hold about twice the database connections of one (every stack and harness has its own
 * pools): TEST_LANES=1, or a server that allows fewer than 250 connections, runs the workspaces in a row.
 */
async function twoLanes() {
  if (process.env.TEST_LANES) return Number(process.env.TEST_LANES) > 1;
  try {
    const { default: pg } = await import('pg');
    const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' });
    await c.connect();
    try {
      const max = Number((await c.query('show max_connections')).rows[0].max_connections);
      if (max < 250) console.log(`\n[tests] PostgreSQL allows ${max} connections (< 250): the workspaces run one after another`);
      return max >= 250;
    } finally {
      await c.end();
    }
  } catch {
    return false;
  }
}

// Two lanes: the end-to-end workspace `test`, the longest, runs beside the others, which run one
// after another in dependency order. Every suite keeps its own databases and bus namespaces
// (services/platform testing), so the lanes share nothing but the servers.
const started = Date.now();
const beside = selected.includes('test') && selected.length > 1 && (await twoLanes()) ? 'test' : undefined;
await Promise.all([
  beside && runWorkspace(beside, join(tmp, `${beside}.log`)),
  (async () => {
    for (const ws of selected) if (ws !== beside) await runWorkspace(ws);
  })(),
]);
rmSync(tmp, { recursive: true, force: true });

const order = [...selectedChecks, ...selected];
rows.sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
console.log('\n| workspace | passed | failed | skipped | seconds | result |\n|---|---:|---:|---:|---:|---|');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
slowest.sort((a, b) => b.secs - a.secs);
console.log(
  `\nThe slowest test files (seconds, in this run):\n${slowest
    .slice(0, 25)
    .map((f) => `  ${f.secs.toFixed(1).padStart(7)}  ${f.file}`)
    .join('\n')}`,
);
console.log(
  `\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}${failedChecks.length ? `; checks failed: ${failedChecks.join(', ')}` : ''}` +
    ` (${((Date.now() - started) / 1000).toFixed(0)} s for the workspaces${beside ? `, ${beside} beside the others` : ''})`,
);
process.exit(failed > 0 || broken ? 1 : 0);
