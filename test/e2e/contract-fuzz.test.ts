import { writeFileSync } from 'node:fs';
import { startFuzzStack, type FuzzStack } from '../contract/setup.js';
import { formatReport, refusalKeys, runContractFuzz, type FuzzReport } from '../contract/fuzzer.js';
import { KNOWN_REFUSALS } from '../contract/known-refusals.js';

/**
 * The contract fuzzer at a small count (test/contract/run.mjs runs it heavier): requests drawn from
 * the served OpenAPI document, only document-valid ones sent, to the whole client API and the admin
 * API. Every answer must be one the document declares, none a 5xx, and a 400 only where the known
 * refusals list says the document is still looser than the server.
 *
 * CONTRACT_FUZZ_RUNS (default 154: 2 per operation), CONTRACT_FUZZ_SEED (default 38: the same requests each run),
 * CONTRACT_FUZZ_REPORT (a file for the whole report as JSON).
 */
const RUNS = Number(process.env.CONTRACT_FUZZ_RUNS ?? 154);
const SEED = Number(process.env.CONTRACT_FUZZ_SEED ?? 38);

describe('contract fuzz: requests drawn from the served document', () => {
  let fs: FuzzStack;
  let report: FuzzReport;

  beforeAll(async () => {
    fs = await startFuzzStack();
    report = await runContractFuzz(fs.target, {
      runs: RUNS,
      seed: SEED,
      concurrency: Number(process.env.CONTRACT_FUZZ_CONCURRENCY ?? 6),
      log: RUNS > 1000 ? (line) => process.stdout.write(`${line}\n`) : undefined,
    });
    process.stdout.write(`${formatReport(report, { examples: true })}\n`);
    if (process.env.CONTRACT_FUZZ_REPORT) writeFileSync(process.env.CONTRACT_FUZZ_REPORT, JSON.stringify({ ...report, serverLogs: fs.stack.logs() }, null, 1));
  }, 3_600_000);
  afterAll(async () => {
    await fs?.stop();
  });

  it('sends what it drew, and the document allows what it drew', () => {
    expect(report.sent).toBeGreaterThan(RUNS * 0.9);
    // The converter's misses are not sent; they must stay rare or the fuzzer tests little.
    expect(report.notDocumentValid).toBeLessThan(report.drawn * 0.05);
  });

  it('no answer is a 5xx (or none at all)', () => {
    expect(report.serverErrors.map((f) => `${f.operationId} → ${f.status} ${f.body}`)).toEqual([]);
  });

  it('every answer is one the document declares', () => {
    expect(report.offDocument.map((f) => `${f.operationId} → ${f.status}: ${f.problems.join('; ')}`)).toEqual([]);
  });

  it('a document-valid request is refused with 400 only where the known-refusals list says so', () => {
    const seen = new Set(report.refused.flatMap(refusalKeys));
    const unknown = [...seen].filter((k) => !KNOWN_REFUSALS.includes(k)).sort();
    // Entries this run did not reach may be fixed already (or just not drawn at this count): said, not failed.
    const unreached = KNOWN_REFUSALS.filter((k) => !seen.has(k));
    if (unreached.length) process.stdout.write(`known refusals this run did not meet (fixed? then delete them): ${unreached.join(', ')}\n`);
    expect(unknown).toEqual([]);
  });
});
