// npm run fuzz:contract: the contract fuzzer's heavier run (test/e2e/contract-fuzz.test.ts with a
// larger count) against the whole stack in one Jest process on the real servers (loopback only;
// bounded by the count). Prints the report (requests sent, document-valid, accepted, rate, 5xx,
// off-document, refusals by operation and field path with one request each), then the verdict
// against the contract's bar: ≥ 99% of document-valid requests accepted, 0 5xx, 0 off-document.
//
//   node test/contract/run.mjs [count]      (or CONTRACT_FUZZ_RUNS; default 3000)
//   CONTRACT_FUZZ_SEED (default: a new one each run, printed), CONTRACT_FUZZ_CONCURRENCY (6),
//   CONTRACT_FUZZ_REPORT (default .tools/contract-fuzz/report-<seed>.json: the whole report as JSON)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const runs = Number(process.argv[2] ?? process.env.CONTRACT_FUZZ_RUNS ?? 3000);
const seed = Number(process.env.CONTRACT_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
if (!Number.isInteger(runs) || runs < 1) throw new Error(`count: a positive integer, not ${process.argv[2]}`);
const reportFile = process.env.CONTRACT_FUZZ_REPORT ?? join(root, '.tools', 'contract-fuzz', `report-${seed}.json`);
mkdirSync(dirname(reportFile), { recursive: true });

console.log(`[fuzz:contract] ${runs} requests, seed ${seed} (CONTRACT_FUZZ_SEED=${seed} repeats the draw), report → ${reportFile}`);
const r = spawnSync(
  process.execPath,
  [
    '--experimental-vm-modules',
    '--experimental-async-context-frame',
    join(root, 'node_modules/jest/bin/jest.js'),
    'e2e/contract-fuzz.test.ts',
    '--testTimeout=3600000',
  ],
  {
    cwd: join(root, 'test'),
    stdio: 'inherit',
    env: { ...process.env, NODE_NO_WARNINGS: '1', CONTRACT_FUZZ_RUNS: String(runs), CONTRACT_FUZZ_SEED: String(seed), CONTRACT_FUZZ_REPORT: reportFile },
  },
);
if (!existsSync(reportFile)) {
  console.error(`[fuzz:contract] no report: the run did not get as far as fuzzing (jest exited ${r.status})`);
  process.exit(1);
}
const report = JSON.parse(readFileSync(reportFile, 'utf8'));
const rate = report.documentValid ? report.accepted / report.documentValid : 0;
const verdict = [
  [`accepted ${report.accepted} of ${report.documentValid} document-valid requests (${(rate * 100).toFixed(2)}%) ≥ 99%`, rate >= 0.99],
  [`5xx or no answer: ${report.serverErrors.length} = 0`, report.serverErrors.length === 0],
  [`answers off the document: ${report.offDocument.length} = 0`, report.offDocument.length === 0],
];
console.log(
  `\n[fuzz:contract] seed ${seed}: sent ${report.sent}, drawn ${report.drawn} (${report.notDocumentValid} not document-valid, not sent), 429 ${report.rateLimited}, ${(report.elapsedMs / 1000).toFixed(1)} s`,
);
for (const [line, ok] of verdict) console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${line}`);
process.exit(verdict.every(([, ok]) => ok) ? 0 : 1);
