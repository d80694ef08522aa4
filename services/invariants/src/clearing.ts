import { CLEARINGS, CLEARING_ACCOUNTS, type Clearing } from '@wallet/ledger/invariants';
import { Offenders, type CheckOptions, type CheckResult, type CheckSources } from './report.js';

/** How the report names each clearing (the reconciliation's rail, upper case). */
const LABEL: Readonly<Record<Clearing, string>> = { breb: 'BREB', ach: 'ACH', pse: 'PSE', 'breb-inbound': 'BREB-INBOUND' };
/** At most this many unreconciled days are named per clearing (their count is always given). */
const DAYS_LISTED = 10;

export interface ClearingFigures {
  clearing: Clearing;
  account: string;
  /** The ledger's balance of the clearing account. */
  ledger: bigint;
  /** Sum of report_net_cents of the latest RECONCILED run of each (rail, date). */
  reports: bigint;
  /** Sum of difference_cents of the outstanding breaks (OPEN, or RESOLVED by 'explain') of reconciled days. */
  outstanding: bigint;
  outstandingBreaks: number;
  /** The account's movement on Bogotá days with no RECONCILED run, recon_adjustment postings excluded. */
  unreconciled: bigint;
  unreconciledDays: string[];
  reconciledDays: number;
  /** RECONCILED runs whose report_net_cents is unknown (null): the clearing cannot be checked. */
  runsWithoutNet: number;
}

/**
 * clearing: each clearing account of the ledger agrees with what the providers reported
 * (docs/operations.md, docs/reconciliation.md). Per clearing (breb → rail_clearing:BREB, ach → rail_clearing:ACH,
 * pse → pse_settlement, breb-inbound → breb_settlement):
 *
 *   L − U = R − D
 *
 * L the account's balance; R the sum of report_net_cents of the latest RECONCILED run of each
 * (rail, date); D the sum of difference_cents of that rail's breaks still outstanding (OPEN, or
 * RESOLVED with resolution 'explain') on days with a RECONCILED run (an accepted break is in the
 * ledger through its recon_adjustment posting; a rerun or superseded one is gone from the latest
 * report; a break whose movement another case corrected, an owner's write-off, is in the ledger
 * through that correction); U the account's movement on Bogotá days (postings' created_at at UTC−5)
 * with no RECONCILED run, or after the cut-off of that day's latest run (`covers_until`: a same-day
 * run covers the day only up to its start), recon_adjustment postings excluded (they belong to their break's day, which is
 * reconciled). Where the reconciliation is not installed the line is "not checked", never passed.
 * Always the whole installation (a clearing account is not a company's).
 */
export async function checkClearing(s: CheckSources, _o: CheckOptions, limit: number): Promise<CheckResult> {
  if (!s.reconciliation) {
    return { name: 'clearing', counts: [], violations: [], total: 0, notChecked: ['no reconciliation'] };
  }
  const figures = await clearingFigures(s);
  const bad = new Offenders(limit);
  const notChecked: string[] = [];
  for (const f of figures) {
    if (f.runsWithoutNet > 0) {
      notChecked.push(`${LABEL[f.clearing]} (${f.runsWithoutNet} reconciled run(s) without report_net_cents)`);
      continue;
    }
    const ours = f.ledger - f.unreconciled;
    const theirs = f.reports - f.outstanding;
    if (ours !== theirs) {
      bad.add(
        `${LABEL[f.clearing]} (${f.account}): ledger L − U = ${f.ledger} − ${f.unreconciled} = ${ours}, reports R − D = ${f.reports} − ${f.outstanding} = ${theirs}; ` +
          `difference (R − D) − (L − U) = ${theirs - ours}`,
      );
    }
  }
  return {
    name: 'clearing',
    counts: [
      ['reconciled days', figures.reduce((n, f) => n + f.reconciledDays, 0)],
      ['outstanding breaks', figures.reduce((n, f) => n + f.outstandingBreaks, 0)],
      ...figures.map((f): [string, string] => [LABEL[f.clearing], describe(f)]),
    ],
    violations: bad.lines,
    total: bad.total,
    notChecked,
  };
}

function describe(f: ClearingFigures): string {
  const days =
    f.unreconciledDays.length === 0
      ? 'none'
      : `${f.unreconciledDays.length} (${f.unreconciledDays.slice(0, DAYS_LISTED).join(' ')}${f.unreconciledDays.length > DAYS_LISTED ? ' …' : ''})`;
  return `L ${f.ledger} R ${f.reports} D ${f.outstanding} U ${f.unreconciled} unreconciled days ${days}`;
}

/** The figures of every clearing, read in the checker's snapshot (ledger and reconciliation readers). */
export async function clearingFigures(s: CheckSources): Promise<ClearingFigures[]> {
  const recon = s.reconciliation;
  if (!recon) throw new Error('the reconciliation is not installed');
  // The latest RECONCILED run of each (rail, date): its report's effect on the clearing account, and
  // the instant it covers the day up to (a same-day run covers the day only so far).
  const runs = await recon.query<{ rail: string; day: string; net: string | null; cutoff: string | null }>(
    `select distinct on (rail, date) rail, to_char(date, 'YYYY-MM-DD') as day, report_net_cents::text as net,
            to_char(covers_until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cutoff
       from reconciliation.runs where status = 'RECONCILED' and rail = any($1::text[])
      order by rail, date, started_at desc, id desc`,
    [CLEARINGS],
  );
  // The outstanding differences of reconciled days, one row per break (they are few).
  const breaks = await recon.query<{ rail: string; movement: string | null; exception_id: string | null; d: string }>(
    `select b.rail, b.movement, b.exception_id, b.difference_cents::text as d
       from reconciliation.breaks b
      where (b.status = 'OPEN' or (b.status = 'RESOLVED' and b.resolution = 'explain'))
        and b.rail = any($1::text[])
        and exists (select 1 from reconciliation.runs r where r.rail = b.rail and r.date = b.date and r.status = 'RECONCILED')`,
    [CLEARINGS],
  );
  // A break whose movement another case corrected (an owner's write-off) is in the ledger through that
  // correction: it is no longer outstanding (one case per external movement, docs/reconciliation.md "One case per external movement").
  const correctedBy = new Map(
    (
      await s.ledger.query<{ movement: string; case_id: string }>(
        `select movement, case_id from ledger.corrections where reversed_by is null and movement = any($1::text[])`,
        [[...new Set(breaks.map((b) => b.movement).filter((m): m is string => !!m))]],
      )
    ).map((c) => [c.movement, c.case_id]),
  );

  // One clearing after the other: the readers are one snapshot's client, one query at a time.
  const figures: ClearingFigures[] = [];
  for (const clearing of CLEARINGS) {
    const account = CLEARING_ACCOUNTS[clearing].account;
    const mine = runs.filter((r) => r.rail === clearing);
    const reconciled = new Set(mine.map((r) => r.day));
    // The account's movement per Bogotá day (UTC−5 all year), adjustments apart, and whether it came
    // after its reconciled day's cut-off.
    const moves = await s.ledger.query<{ day: string; adjustment: boolean; late: boolean; corrects: string | null; amount: string }>(
      `select to_char(timezone(interval '-05:00', p.created_at)::date, 'YYYY-MM-DD') as day,
              (p.kind = 'recon_adjustment') as adjustment, coalesce(p.created_at > c.cutoff, false) as late,
              case when p.kind = 'correction' then p.corrects end as corrects, sum(e.amount)::text as amount
         from ledger.entries e join ledger.postings p on p.id = e.posting_id
         left join unnest($2::date[], $3::timestamptz[]) as c(day, cutoff) on c.day = timezone(interval '-05:00', p.created_at)::date
        where e.account = $1
        group by 1, 2, 3, 4 order by 1`,
      [account, mine.map((r) => r.day), mine.map((r) => r.cutoff ?? '9999-12-31T00:00:00Z')],
    );
    // An owner's correcting entry (a write-off) belongs, like an adjustment, to the day of the movement
    // it corrects once a reconciled day's break names that movement (docs/reconciliation.md "One case per external movement").
    const correctedMovements = [...new Set(moves.map((m) => m.corrects).filter((m): m is string => !!m))];
    const brokenMovements = new Set(
      correctedMovements.length === 0
        ? []
        : (
            await recon.query<{ movement: string }>(
              `select distinct b.movement from reconciliation.breaks b
        where b.movement = any($1::text[]) and exists (select 1 from reconciliation.runs r where r.rail = b.rail and r.date = b.date and r.status = 'RECONCILED')`,
              [correctedMovements],
            )
          ).map((b) => b.movement),
    );
    let ledger = 0n,
      unreconciled = 0n;
    const days = new Set<string>();
    for (const m of moves) {
      const amount = BigInt(m.amount);
      ledger += amount;
      const withItsBreak = m.adjustment || (m.corrects !== null && brokenMovements.has(m.corrects));
      if (!withItsBreak && (!reconciled.has(m.day) || m.late)) {
        unreconciled += amount;
        days.add(m.day);
      }
    }
    let outstanding = 0n,
      outstandingBreaks = 0;
    for (const b of breaks) {
      if (b.rail !== clearing) continue;
      const other = b.movement ? correctedBy.get(b.movement) : undefined;
      if (other !== undefined && other !== b.exception_id) continue;
      outstanding += BigInt(b.d);
      outstandingBreaks++;
    }
    figures.push({
      clearing,
      account,
      ledger,
      unreconciled,
      unreconciledDays: [...days].sort(),
      reconciledDays: reconciled.size,
      reports: mine.reduce((sum, r) => sum + BigInt(r.net ?? 0), 0n),
      runsWithoutNet: mine.filter((r) => r.net === null).length,
      outstanding,
      outstandingBreaks,
    });
  }
  return figures;
}
