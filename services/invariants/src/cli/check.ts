import { pgClientFor } from '@wallet/platform';
import { CHECK_NAMES, checkInvariants, formatReport, pushLedgerCheck, selfTest, type CheckName, type CheckRun } from '../index.js';

/**
 * `npm run ledger:check` — the cross-service money invariants of an installation, read through each
 * service's read-only role in one snapshot. Prints one line per invariant (holds, deposits, inbound,
 * journal, exceptions, clearing, corrections) with counts, then the open money exceptions with their age. clearing
 * compares each clearing account with the providers' reports (the reconciliation); without the
 * reconciliation installed it says "not checked (no reconciliation)".
 *
 *   npm run ledger:check                       the report; exit 1 on a violation
 *   npm run ledger:check -- --break holds      plant a violation of that check in a transaction that is
 *                                              rolled back, print the report over it (exit 1)
 *   npm run ledger:check -- --self-test        break every check in turn; exit 0 only if each is caught
 *                                              (clearing is skipped, and said so, without the reconciliation;
 *                                              --break clearing then exits 2)
 *   --rail none|auto                           the rails' side from the sandbox when installed (auto)
 *   --owed-horizon <seconds>                   a money step owed longer than this (no open exception
 *                                              parking it) is a violation (default 900)
 *   --incremental                              the journal check reads only what was sealed since the
 *                                              ledger's verified cut (docs/ledger-check.md); the other
 *                                              checks are whole either way
 *   --json                                     the report as JSON
 *   --pushgateway <url>                        also push the result to this Prometheus Pushgateway
 *                                              (or INVARIANTS_PUSHGATEWAY_URL), group job=<--push-job>
 *                                              (or INVARIANTS_PUSHGATEWAY_JOB, default wallet-ledger-check):
 *                                              the chart's CronJob, which the alert rules read (src/export.ts)
 *
 * DATABASE_URL (or INVARIANTS_DATABASE_URL): a login allowed to SET ROLE to the wallet_<schema>_reader
 * roles. --break and --self-test also write (then roll back): development and staging only.
 * Exit codes: 0 held, 1 violated (or a self-test check not caught), 2 the check could not run,
 * 3 the check ran (and held or not: said on stdout) but its result could not be pushed.
 */
const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const value = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const url = process.env.INVARIANTS_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const rail = value('rail') === 'none' ? 'none' : 'auto';
const broken = value('break');
const horizonArg = value('owed-horizon');
const owedHorizonSeconds = horizonArg === undefined ? undefined : Number(horizonArg);
if (owedHorizonSeconds !== undefined && !(Number.isInteger(owedHorizonSeconds) && owedHorizonSeconds > 0)) {
  process.stderr.write('--owed-horizon takes a whole number of seconds above 0\n');
  process.exit(2);
}
if (broken !== undefined && !CHECK_NAMES.includes(broken as CheckName)) {
  process.stderr.write(`--break takes one of ${CHECK_NAMES.join(', ')}\n`);
  process.exit(2);
}

const pushgateway = value('pushgateway') ?? (process.env.INVARIANTS_PUSHGATEWAY_URL || undefined);
const pushJob = value('push-job') ?? (process.env.INVARIANTS_PUSHGATEWAY_JOB || 'wallet-ledger-check');
const reportMode = !flag('self-test') && broken === undefined;
if (value('pushgateway') !== undefined && !reportMode) {
  process.stderr.write('--pushgateway reports a real check only: not with --break or --self-test\n');
  process.exit(2);
}
const started = performance.now();
let run: CheckRun | undefined;

const client = pgClientFor(url, { application_name: 'ledger-check' });
try {
  await client.connect();
  if (flag('self-test')) {
    const results = await selfTest(client, { rail });
    for (const r of results)
      process.stdout.write(`self-test ${r.check.padEnd(10)} ${r.skipped ? `skipped (${r.skipped})` : r.caught ? 'caught' : 'NOT CAUGHT'}: ${r.what}\n`);
    const planted = results.filter((r) => !r.skipped);
    const missed = planted.filter((r) => !r.caught);
    const skipped =
      results.length - planted.length
        ? ` (${results.length - planted.length} skipped: ${results
            .filter((r) => r.skipped)
            .map((r) => r.check)
            .join(', ')})`
        : '';
    process.stdout.write(
      missed.length
        ? `self-test: ${missed.length} of ${planted.length} planted violations NOT caught${skipped}\n`
        : `self-test: all ${planted.length} planted violations caught (rolled back)${skipped}\n`,
    );
    process.exitCode = missed.length ? 1 : 0;
  } else if (broken) {
    const [r] = await selfTest(client, { rail, checks: [broken as CheckName], fullReport: true });
    process.stdout.write(
      r!.skipped
        ? `(no ${broken} violation could be planted: ${r!.skipped}; the report as it is)\n`
        : `(a ${broken} violation planted in a transaction that is rolled back: ${r!.what})\n`,
    );
    process.stdout.write(flag('json') ? `${JSON.stringify(r!.report, null, 2)}\n` : `${formatReport(r!.report)}\n`);
    process.exitCode = r!.skipped ? 2 : r!.report.ok ? 0 : 1;
  } else {
    const report = await checkInvariants(client, {
      rail,
      ...(owedHorizonSeconds ? { owedHorizonSeconds } : {}),
      ...(flag('incremental') ? { journal: 'incremental' as const } : {}),
    });
    run = { report, durationSeconds: (performance.now() - started) / 1000, at: new Date() };
    process.stdout.write(flag('json') ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
    process.exitCode = report.ok ? 0 : 1;
  }
} catch (err) {
  process.stderr.write(`the invariant check could not run: ${(err as Error).message}\n`);
  process.exitCode = 2;
  run = { error: (err as Error).message, durationSeconds: (performance.now() - started) / 1000, at: new Date() };
} finally {
  await client.end().catch(() => undefined);
}

if (pushgateway !== undefined && reportMode && run) {
  try {
    await pushLedgerCheck(pushgateway, pushJob, run);
    process.stdout.write(`result pushed to ${new URL(pushgateway).origin} (job ${pushJob})\n`);
  } catch (err) {
    process.stderr.write(`the result could not be pushed to the Pushgateway: ${(err as Error).message}\n`);
    if (!process.exitCode) process.exitCode = 3;
  }
}
