import { bogotaClock, formatInstant, upcomingRuns } from '@wallet/platform';
import type { ScheduleRow } from '../../persistence/schedule.store.js';
import { ruleOf } from './schedule-rules.js';

type Rail = 'BREB' | 'ACH';
const RAILS: readonly Rail[] = ['BREB', 'ACH'];
/** At most this many runs of one schedule in a projection (a minutely cron over a month would be 44,640). */
const MAX_RUNS_PER_SCHEDULE = 1_000;

export interface ProjectedRun {
  scheduleId: string;
  description: string | null;
  seq: number;
  nominalAt: string;
  dueAt: string;
  actionKind: 'SEND' | 'BATCH' | 'MOVE' | 'TOP_UP';
  rail: Rail;
  amountCents: string;
  balanceAfterCents: string;
}

export interface Projection {
  from: string;
  until: string;
  wallets: Array<{
    rail: Rail;
    availableCents: string;
    outflowCents: string;
    inflowCents: string;
    lowestBalanceCents: string;
    shortfallCents: string;
    firstShortfallAt: string | null;
  }>;
  runs: ProjectedRun[];
  warnings: string[];
}

/**
 * Plays the runs due between `from` and `until`, in due order, against the wallets' available
 * balances now: a send takes its amount from its rail (fees not counted: they depend on the run),
 * a move takes from one wallet and gives to the other, a top-up moves what its wallet then lacks.
 * A wallet's shortfall is how far below zero it would go (what it needs more to make every run).
 */
export function projectRuns(
  schedules: readonly ScheduleRow[],
  available: Record<Rail, bigint>,
  from: Date,
  until: Date,
  counterpartyRails: ReadonlyMap<string, Rail> = new Map(),
): Projection {
  /** A send's wallet: ACH to a bank account or an ACH counterparty, BREB otherwise. */
  const railOf = (send: SendLike): Rail =>
    send.destination?.bankAccount ? 'ACH' : send.counterpartyId ? (counterpartyRails.get(send.counterpartyId) ?? 'BREB') : 'BREB';
  const due: Array<{ s: ScheduleRow; seq: number; nominalAt: Date; dueAt: Date }> = [];
  for (const s of schedules) {
    if (!s.next) continue;
    const first = { seq: s.next.seq, nominalAt: new Date(s.next.nominalAt), dueAt: new Date(s.next.dueAt) };
    const runs = [first, ...upcomingRuns(ruleOf(s.rule), first, MAX_RUNS_PER_SCHEDULE - 1)];
    for (const r of runs) {
      if (r.dueAt.getTime() > until.getTime()) break;
      due.push({ s, seq: r.seq, nominalAt: r.nominalAt, dueAt: r.dueAt });
    }
  }
  due.sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime() || a.s.id.localeCompare(b.s.id));

  const balance = { ...available };
  const out = { BREB: 0n, ACH: 0n };
  const inn = { BREB: 0n, ACH: 0n };
  const lowest = { ...available };
  const firstShort: Record<Rail, Date | null> = { BREB: null, ACH: null };
  const runs: ProjectedRun[] = [];
  for (const d of due) {
    const a = d.s.action as Record<string, unknown> & { kind: 'SEND' | 'BATCH' | 'MOVE' | 'TOP_UP' };
    /** What the run takes from each wallet (a batch may take from both). */
    const takes: Array<[Rail, bigint]> = [];
    if (a.kind === 'SEND') {
      const send = a.send as SendLike;
      takes.push([railOf(send), BigInt(send.amount)]);
    } else if (a.kind === 'BATCH') {
      const sums = { BREB: 0n, ACH: 0n };
      for (const item of (a.batch as { items: SendLike[] }).items) sums[railOf(item)] += BigInt(item.amount);
      for (const rail of RAILS) if (sums[rail] > 0n) takes.push([rail, sums[rail]]);
    } else {
      const to = a.to as Rail;
      const amount = a.kind === 'MOVE' ? BigInt(a.amountCents as number) : maxBig(0n, BigInt(a.targetBalanceCents as number) - balance[to]);
      balance[to] += amount;
      inn[to] += amount;
      takes.push([a.from as Rail, amount]);
    }
    for (const [rail, amount] of takes) {
      balance[rail] -= amount;
      out[rail] += amount;
      if (balance[rail] < lowest[rail]) lowest[rail] = balance[rail];
      if (balance[rail] < 0n && firstShort[rail] === null) firstShort[rail] = d.dueAt;
      runs.push({
        scheduleId: d.s.id,
        description: d.s.description,
        seq: d.seq,
        nominalAt: formatInstant(d.nominalAt),
        dueAt: formatInstant(d.dueAt),
        actionKind: a.kind,
        rail,
        amountCents: amount.toString(),
        balanceAfterCents: balance[rail].toString(),
      });
    }
  }
  const wallets = RAILS.map((rail) => ({
    rail,
    availableCents: available[rail].toString(),
    outflowCents: out[rail].toString(),
    inflowCents: inn[rail].toString(),
    lowestBalanceCents: minBig(lowest[rail], available[rail]).toString(),
    shortfallCents: (lowest[rail] < 0n ? -lowest[rail] : 0n).toString(),
    firstShortfallAt: firstShort[rail] ? formatInstant(firstShort[rail]) : null,
  }));
  const warnings = wallets
    .filter((w) => w.firstShortfallAt !== null)
    .map(
      (w) =>
        `Los pagos programados del ${spanishDate(new Date(w.firstShortfallAt!))} necesitan ${pesos(BigInt(w.shortfallCents))} COP más en ${w.rail === 'BREB' ? 'Bre-B' : 'ACH'}.`,
    );
  return { from: formatInstant(from), until: formatInstant(until), wallets, runs, warnings };
}

const maxBig = (a: bigint, b: bigint) => (a > b ? a : b);

type SendLike = { amount: number; destination?: { bankAccount?: unknown }; counterpartyId?: string };

/** The counterparties the schedules' sends name (their rail decides the wallet a run takes from). */
export function counterpartiesNamed(schedules: readonly ScheduleRow[]): string[] {
  const ids = new Set<string>();
  for (const s of schedules) {
    const send = s.action.kind === 'SEND' ? (s.action.send as SendLike) : undefined;
    if (send?.counterpartyId) ids.add(send.counterpartyId);
  }
  return [...ids];
}
const minBig = (a: bigint, b: bigint) => (a < b ? a : b);

const WEEKDAY_ES = ['domingo', 'lunes', 'martes', 'miércoles', 'jueves', 'viernes', 'sábado'];
const MONTH_ES = ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre'];

/** "viernes 4 de diciembre", in Bogotá. */
function spanishDate(at: Date): string {
  const date = bogotaClock(at).date;
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const weekday = new Date(Date.UTC(y, m - 1, d)).getUTCDay();
  return `${WEEKDAY_ES[weekday]} ${d} de ${MONTH_ES[m - 1]}`;
}

/** Whole pesos with Colombian thousands separators, rounded up (12.000.000). */
function pesos(cents: bigint): string {
  const whole = (cents + 99n) / 100n;
  return whole.toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.');
}
