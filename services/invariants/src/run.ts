import { checkApprovals } from './approvals.js';
import { checkClearing } from './clearing.js';
import { checkCobros } from './cobros.js';
import { checkCorrections } from './corrections.js';
import { checkDeposits } from './deposits.js';
import { checkHolds } from './holds.js';
import { checkInbound } from './inbound.js';
import { checkExceptions, checkJournal } from './ledger-and-exceptions.js';
import { sandboxRail, type RailTruth } from './rail.js';
import { CHECK_NAMES, type CheckName, type CheckOptions, type CheckResult, type CheckSources, type InvariantReport, type OpenException } from './report.js';
import { Snapshot, type CheckedSchema, type SqlClient } from './snapshot.js';

/** Where the rails' truth comes from: the sandbox's records when it is installed ('auto'), none, or given. */
export type RailChoice = 'auto' | 'none' | RailTruth;

/** The schemas each check reads (besides the rail truth). */
const NEEDS: Readonly<Record<CheckName, readonly CheckedSchema[]>> = {
  holds: ['ledger', 'transfer'],
  deposits: ['ledger', 'pse_deposit'],
  inbound: ['ledger', 'collect_key'],
  journal: ['ledger'],
  exceptions: ['transfer', 'pse_deposit'],
  // The reconciliation is optional: without it the clearing line says "not checked (no reconciliation)".
  clearing: ['ledger'],
  corrections: ['ledger'],
  cobros: ['pse_deposit', 'collect_key'],
  approvals: ['transfer'],
};

/**
 * The readers of one snapshot, and the rail truth chosen. A schema or reader role missing is an
 * error (an operator's installation has them all) unless `partial`: then the checks that need it are
 * left out and `runnable` says which remain (a test stack that runs only some services).
 */
export async function sourcesOf(
  snap: Snapshot,
  rail: RailChoice = 'auto',
  opts: { partial?: boolean } = {},
): Promise<CheckSources & { runnable: CheckName[] }> {
  const present = await snap.installed(['ledger', 'transfer', 'pse_deposit', 'collect_key', 'sandbox', 'reconciliation']);
  const missing = (['ledger', 'transfer', 'pse_deposit', 'collect_key'] as const).filter((x) => !present.has(x));
  if (missing.length && !opts.partial) {
    throw new Error(
      `schema or read-only role missing for ${missing.join(', ')}: run the migrations (npm run migrate), ` +
        `or have a DBA create the NOLOGIN roles wallet_<schema>_reader (docs/operations.md)`,
    );
  }
  const truth = rail === 'none' ? null : rail === 'auto' ? (present.has('sandbox') ? sandboxRail(snap.reader('sandbox')) : null) : rail;
  return {
    ledger: snap.reader('ledger'),
    transfer: snap.reader('transfer'),
    deposit: snap.reader('pse_deposit'),
    collectKey: snap.reader('collect_key'),
    rail: truth,
    reconciliation: present.has('reconciliation') ? snap.reader('reconciliation') : null,
    runnable: CHECK_NAMES.filter((c) => NEEDS[c].every((x) => present.has(x))),
  };
}

/** Runs the checks over the given read paths (one snapshot). `ok` when no check found a violation. */
export async function runChecks(sources: CheckSources, o: CheckOptions = {}): Promise<InvariantReport> {
  const limit = o.list ?? 50;
  const wanted = new Set(o.only ?? CHECK_NAMES);
  const checks: CheckResult[] = [];
  let exceptions: OpenException[] = [];
  if (wanted.has('holds')) checks.push(await checkHolds(sources, o, limit));
  if (wanted.has('deposits')) checks.push(await checkDeposits(sources, o, limit));
  if (wanted.has('inbound')) checks.push(await checkInbound(sources, o, limit));
  if (wanted.has('journal')) checks.push(await checkJournal(sources, o, limit));
  if (wanted.has('exceptions')) {
    const e = await checkExceptions(sources, o, limit);
    checks.push(e.result);
    exceptions = e.open;
  }
  if (wanted.has('clearing')) checks.push(await checkClearing(sources, o, limit));
  if (wanted.has('corrections')) checks.push(await checkCorrections(sources, o, limit));
  if (wanted.has('cobros')) checks.push(await checkCobros(sources, o, limit));
  if (wanted.has('approvals')) checks.push(await checkApprovals(sources, o, limit));
  return { ok: checks.every((c) => c.total === 0), at: o.now ?? new Date(), rail: sources.rail?.name ?? null, checks, exceptions };
}

/**
 * The whole report over one read-only repeatable-read snapshot on `client` (a dedicated pg client:
 * the snapshot is its transaction). Read-only twice over: the transaction and each reader's role.
 */
export async function checkInvariants(client: SqlClient, o: CheckOptions & { rail?: RailChoice; partial?: boolean } = {}): Promise<InvariantReport> {
  const snap = await Snapshot.begin(client);
  try {
    const sources = await sourcesOf(snap, o.rail, { partial: o.partial ?? false });
    return await runChecks(sources, { ...o, only: (o.only ?? CHECK_NAMES).filter((c) => sources.runnable.includes(c)) });
  } finally {
    await snap.rollback();
  }
}

/** The report's violations as lines prefixed by their check (for test assertions). */
export function violationLines(r: InvariantReport): string[] {
  return r.checks.flatMap((c) => c.violations.map((v) => `[${c.name}] ${v}`));
}
