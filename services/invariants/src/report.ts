import type { RailTruth } from './rail.js';
import type { Reader } from './snapshot.js';

/** The invariant families, one line each in `npm run ledger:check`. */
export const CHECK_NAMES = ['holds', 'deposits', 'inbound', 'journal', 'exceptions', 'clearing', 'corrections', 'cobros', 'approvals'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export interface CheckResult {
  name: CheckName;
  /** What was looked at, e.g. [['transfers', 120], ['open holds', 3]] (a text value reads "label value"). */
  counts: Array<[string, number | string]>;
  /** The offenders (at most `list`), each naming the record. */
  violations: string[];
  /** How many offenders in all. */
  total: number;
  /** Parts that could not be checked (e.g. no rail truth): said, never silently passed. */
  notChecked: string[];
}

/** An operator's case (CONTRACT §10), open or being resolved: listed with its age, not a violation. */
export interface OpenException {
  id: string;
  owner: 'transfer' | 'pse-deposit';
  kind: string;
  status: 'OPEN' | 'RESOLVING';
  companyId: string;
  resourceId: string;
  openedAt: Date;
  ageSeconds: number;
}

export interface InvariantReport {
  ok: boolean;
  at: Date;
  /** Where the rails' side came from (or null: not checked). */
  rail: string | null;
  checks: CheckResult[];
  exceptions: OpenException[];
}

export interface CheckOptions {
  /** Only this company's records (the interleaving tests). */
  companyId?: string;
  /**
   * Nobody is running any more (after a test or a drained fault run): a money step begun but not
   * closed, a late callback not yet applied or a listing not yet projected is then a violation,
   * unless an open money exception parks it. Off against a live installation.
   */
  settled?: boolean;
  /**
   * Nobody is in the middle of a step (every writer finished), though a step may still be owed (a
   * sweeper has not run yet): an intermediate state has not done its money step, and the rails'
   * outcome has been applied. Implied by `settled`. The interleaving tests, after each schedule.
   */
  quiescent?: boolean;
  /** At most this many offenders listed per check (default 50). */
  list?: number;
  /** Just these checks (the self-test). */
  only?: readonly CheckName[];
  now?: Date;
  /** A money exception left RESOLVING longer than this is stuck (default 600 s). */
  resolvingStuckSeconds?: number;
  /**
   * The sweepers' horizon: a money step still owed this long after it became due, with no
   * open money exception parking it, is a violation even on a live installation (default 900 s: the
   * sweepers look every second after a grace of seconds; a step owed for minutes is one nobody runs).
   */
  owedHorizonSeconds?: number;
  /**
   * The journal check: 'full' (the default) reads every posting, wallet, movement and checkpoint;
   * 'incremental' only what the journal sealed since the ledger's verified cut (docs/ledger-check.md).
   */
  journal?: 'full' | 'incremental';
}

/** The sweepers' horizon by default (CheckOptions.owedHorizonSeconds). */
export const OWED_HORIZON_SECONDS = 900;

/** Each service's read path, and the rails' truth if any. */
export interface CheckSources {
  ledger: Reader;
  transfer: Reader;
  deposit: Reader;
  collectKey: Reader;
  /** The reconciliation's read path, or null/absent where it is not installed (the clearing check is then not checked). */
  reconciliation?: Reader | null;
  rail: RailTruth | null;
}

/** Collects one check's offenders: every one counted, the first `limit` kept. */
export class Offenders {
  readonly lines: string[] = [];
  total = 0;
  constructor(private readonly limit: number) {}
  add(line: string): void {
    this.total++;
    if (this.lines.length < this.limit) this.lines.push(line);
  }
}

/** Keyset pages over ids (uuid text or prefixed ids sort as text). */
export const PAGE = 2000;

/** A scope clause and its parameter for `company_id`, numbered after `n` parameters. */
export function companyScope(o: CheckOptions, n: number, column = 'company_id'): { sql: string; params: unknown[] } {
  return o.companyId ? { sql: ` and ${column} = $${n + 1}`, params: [o.companyId] } : { sql: '', params: [] };
}

export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

/** The report as `npm run ledger:check` prints it: one line per invariant, then the open exceptions. */
export function formatReport(r: InvariantReport): string {
  const out: string[] = [];
  const width = Math.max(...CHECK_NAMES.map((n) => n.length));
  for (const c of r.checks) {
    const counts = c.counts.map(([k, n]) => (typeof n === 'number' ? `${n} ${k}` : `${k} ${n}`)).join(', ');
    if (c.total === 0 && c.counts.length === 0 && c.notChecked.length) {
      // Nothing could be looked at (e.g. clearing without the reconciliation): said, neither OK nor violated.
      out.push(`${c.name.padEnd(width)}  not checked (${c.notChecked.join('; ')})`);
      continue;
    }
    const verdict = c.total === 0 ? 'OK' : `VIOLATED (${c.total})`;
    const skipped = c.notChecked.length ? `; not checked: ${c.notChecked.join('; ')}` : '';
    out.push(`${c.name.padEnd(width)}  ${verdict.padEnd(14)} ${counts}${skipped}`);
    for (const v of c.violations) out.push(`${' '.repeat(width + 2)}- ${v}`);
    if (c.total > c.violations.length) out.push(`${' '.repeat(width + 2)}- … ${c.total - c.violations.length} more`);
  }
  if (r.exceptions.length) {
    out.push(`open money exceptions (${r.exceptions.length}), oldest first:`);
    for (const e of r.exceptions) {
      out.push(`  ${e.id}  ${e.kind}  ${e.status}  ${e.owner} ${e.resourceId}  company ${e.companyId}  open ${formatAge(e.ageSeconds)}`);
    }
  }
  out.push(`rail truth: ${r.rail ?? "none (the rails' side of holds, deposits and inbound was not checked)"}`);
  out.push(
    r.ok
      ? 'invariants: OK'
      : `invariants: VIOLATED (${r.checks
          .filter((c) => c.total > 0)
          .map((c) => c.name)
          .join(', ')})`,
  );
  return out.join('\n');
}
