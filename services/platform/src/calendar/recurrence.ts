import { CronExpressionParser } from 'cron-parser';
import { Problems } from '../errors/catalogue.js';
import { WEEKDAYS, addDays, bogotaClock, bogotaWallClockInstant, daysInMonth, isBusinessDay, weekdayOf, type Weekday } from './bogota-calendar.js';

/**
 * When a scheduled payout runs (issue 42, docs/schedules.md): a recurrence in Bogotá time, a rule for
 * runs that fall on a day that is no business day, a start, and an end date or a number of runs.
 * Pure: the scheduler asks for the run after the last one it started, and keeps nothing else.
 *
 * A run has a **nominal** time (what the recurrence names: the 15th at 08:00) and a **due** time (the
 * nominal time moved by the business-day rule: Friday the 13th at 08:00 when the 15th is a Sunday
 * and the rule is PREVIOUS). Runs are ordered, counted and named by their nominal time, so a run
 * moved across another day is still that one run: its key `schedule:<id>:<nominal Bogotá
 * YYYY-MM-DDTHH:MM>` is what makes a restart, a second replica or a catch-up start it at most once.
 *
 *   NONE      due = nominal
 *   PREVIOUS  a day that is no business day moves back to the business day before it
 *   NEXT      … forward to the business day after it
 *   SKIP      a run on a day that is no business day does not happen (and is not counted)
 *
 * With PREVIOUS or NEXT two nominal runs may fall due on the same business day (a daily cron with
 * NEXT runs Saturday's, Sunday's and Monday's runs on Monday): each is its own run. A cron that
 * should not run on such days states its days, or uses SKIP.
 */

export const BUSINESS_DAY_RULES = ['NONE', 'PREVIOUS', 'NEXT', 'SKIP'] as const;
export type BusinessDayRule = (typeof BUSINESS_DAY_RULES)[number];

export type Recurrence =
  /** One run at an instant. */
  | { kind: 'ONCE'; executeAt: Date }
  /** Every month on day `dayOfMonth` (1-31; a month without that day: its last day) at `time`. */
  | { kind: 'MONTHLY'; dayOfMonth: number; time: string }
  /** Every month on its last business day at `time` (the business-day rule has nothing to move). */
  | { kind: 'LAST_BUSINESS_DAY'; time: string }
  /** Every week on `dayOfWeek` at `time`. */
  | { kind: 'WEEKLY'; dayOfWeek: Weekday; time: string }
  /** A five-field cron expression (minute hour day-of-month month day-of-week) in Bogotá time. */
  | { kind: 'CRON'; expression: string };

export interface ScheduleRule {
  recurrence: Recurrence;
  businessDayRule: BusinessDayRule;
  /** No nominal run before it. */
  startAt: Date;
  /** No nominal run after it (inclusive); null: no end. */
  endAt: Date | null;
  /** At most this many runs; null: no limit. */
  maxRuns: number | null;
}

export interface ScheduledRun {
  /** 1 for the first run, counting only runs that happen (SKIP's skipped days are not counted). */
  seq: number;
  nominalAt: Date;
  /** The nominal time as Bogotá's wall clock, `YYYY-MM-DDTHH:MM`: the run's name in its key. */
  nominalLocal: string;
  dueAt: Date;
}

export const MAX_SCHEDULE_RUNS = 10_000;
const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
/** How far ahead the next run is looked for before a rule is taken to have none (a cron for 30 Feb). */
const HORIZON_MS = 5 * 366 * 24 * 60 * 60 * 1000;

/** The problems of a rule, as field paths (a schedule that can never run is one of them). */
export function checkScheduleRule(p: Problems, r: ScheduleRule, path = ''): void {
  const at = (f: string) => `${path}${f}`;
  const rec = r.recurrence;
  switch (rec.kind) {
    case 'ONCE':
      if (Number.isNaN(rec.executeAt.getTime())) p.add(at('executeAt'), 'must be an instant');
      break;
    case 'MONTHLY':
      if (!Number.isInteger(rec.dayOfMonth) || rec.dayOfMonth < 1 || rec.dayOfMonth > 31) p.add(at('dayOfMonth'), 'must be an integer from 1 to 31');
      if (!TIME.test(rec.time)) p.add(at('time'), 'must be HH:MM (00:00 to 23:59, Bogotá)');
      break;
    case 'LAST_BUSINESS_DAY':
      if (!TIME.test(rec.time)) p.add(at('time'), 'must be HH:MM (00:00 to 23:59, Bogotá)');
      break;
    case 'WEEKLY':
      if (!(WEEKDAYS as readonly string[]).includes(rec.dayOfWeek)) p.add(at('dayOfWeek'), `must be one of ${WEEKDAYS.join(', ')}`);
      if (!TIME.test(rec.time)) p.add(at('time'), 'must be HH:MM (00:00 to 23:59, Bogotá)');
      break;
    case 'CRON': {
      const problem = cronProblem(rec.expression);
      if (problem) p.add(at('expression'), problem);
      break;
    }
  }
  if (!(BUSINESS_DAY_RULES as readonly string[]).includes(r.businessDayRule)) p.add(at('businessDayRule'), `must be one of ${BUSINESS_DAY_RULES.join(', ')}`);
  if (r.maxRuns !== null && (!Number.isInteger(r.maxRuns) || r.maxRuns < 1 || r.maxRuns > MAX_SCHEDULE_RUNS)) {
    p.add(at('maxRuns'), `must be an integer from 1 to ${MAX_SCHEDULE_RUNS}`);
  }
  if (r.endAt !== null && r.endAt.getTime() < r.startAt.getTime()) p.add(at('endAt'), 'must not be before the start');
  if (p.count === 0 && nextRun(r, null) === null) p.add(at('recurrence'), 'names no run between the start and the end');
}

function cronProblem(expression: string): string | null {
  if (typeof expression !== 'string' || expression.trim().split(/\s+/).length !== 5) {
    return 'must be five fields: minute hour day-of-month month day-of-week';
  }
  try {
    CronExpressionParser.parse(expression, { tz: 'America/Bogota' });
    return null;
  } catch (err) {
    return `is not a valid cron expression (${(err as Error).message})`;
  }
}

/**
 * The run after `last` (the last run started; null: the first run), or null when the schedule has no
 * more runs (past its end, its number of runs, or — ONCE — already run).
 */
export function nextRun(rule: ScheduleRule, last: Pick<ScheduledRun, 'seq' | 'nominalAt'> | null): ScheduledRun | null {
  const seq = (last?.seq ?? 0) + 1;
  if (rule.maxRuns !== null && seq > rule.maxRuns) return null;
  // Nominal runs strictly after the last one, at or after the start.
  let after = last ? last.nominalAt : new Date(rule.startAt.getTime() - 1);
  const horizon = after.getTime() + HORIZON_MS;
  for (;;) {
    const nominalAt = nextNominal(rule.recurrence, after);
    if (!nominalAt || nominalAt.getTime() > horizon) return null;
    if (rule.endAt !== null && nominalAt.getTime() > rule.endAt.getTime()) return null;
    const clock = bogotaClock(nominalAt);
    const dueDate = dueDateOf(clock.date, rule.recurrence.kind === 'LAST_BUSINESS_DAY' ? 'NONE' : rule.businessDayRule);
    if (dueDate !== null) {
      const time = nominalLocalTime(clock.minute);
      return { seq, nominalAt, nominalLocal: `${clock.date}T${time}`, dueAt: dueDate === clock.date ? nominalAt : bogotaWallClockInstant(dueDate, time) };
    }
    after = nominalAt; // SKIP: the next nominal run
  }
}

/** The runs from the first, up to `count` of them (for a preview: "the next runs"). */
export function upcomingRuns(rule: ScheduleRule, last: Pick<ScheduledRun, 'seq' | 'nominalAt'> | null, count: number): ScheduledRun[] {
  const out: ScheduledRun[] = [];
  let prev = last;
  while (out.length < count) {
    const r = nextRun(rule, prev);
    if (!r) break;
    out.push(r);
    prev = r;
  }
  return out;
}

/** The schedule's key for one run: the same run, the same key, whoever starts it and whenever. */
export function runKey(scheduleId: string, run: Pick<ScheduledRun, 'nominalLocal'>): string {
  return `schedule:${scheduleId}:${run.nominalLocal}`;
}

const nominalLocalTime = (minute: number) => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

function dueDateOf(date: string, rule: BusinessDayRule): string | null {
  if (rule === 'NONE' || isBusinessDay(date)) return date;
  if (rule === 'SKIP') return null;
  const step = rule === 'PREVIOUS' ? -1 : 1;
  let d = date;
  do d = addDays(d, step);
  while (!isBusinessDay(d));
  return d;
}

/** The first nominal time of the recurrence strictly after `after`. */
function nextNominal(r: Recurrence, after: Date): Date | null {
  switch (r.kind) {
    case 'ONCE':
      return r.executeAt.getTime() > after.getTime() ? r.executeAt : null;
    case 'CRON':
      try {
        return CronExpressionParser.parse(r.expression, { currentDate: after, tz: 'America/Bogota' }).next().toDate();
      } catch {
        return null; // no further time matches (the parser's own search gave up)
      }
    case 'WEEKLY': {
      const start = bogotaClock(after).date;
      for (let i = 0; i <= 7; i++) {
        const date = addDays(start, i);
        if (weekdayOf(date) !== r.dayOfWeek) continue;
        const at = bogotaWallClockInstant(date, r.time);
        if (at.getTime() > after.getTime()) return at;
      }
      return null; // unreachable: the weekday comes twice in eight days
    }
    case 'MONTHLY':
    case 'LAST_BUSINESS_DAY': {
      const [y, m] = bogotaClock(after).date.split('-').map(Number) as [number, number];
      for (let i = 0; i < 3; i++) {
        const year = y + Math.floor((m - 1 + i) / 12);
        const month = ((m - 1 + i) % 12) + 1;
        const at = bogotaWallClockInstant(monthlyDate(r, year, month), r.time);
        if (at.getTime() > after.getTime()) return at;
      }
      return null; // unreachable: a later month always has its day
    }
  }
}

function monthlyDate(r: Extract<Recurrence, { kind: 'MONTHLY' | 'LAST_BUSINESS_DAY' }>, year: number, month: number): string {
  const last = daysInMonth(year, month);
  const ym = `${year}-${String(month).padStart(2, '0')}`;
  if (r.kind === 'MONTHLY') return `${ym}-${String(Math.min(r.dayOfMonth, last)).padStart(2, '0')}`;
  let d = `${ym}-${String(last).padStart(2, '0')}`;
  while (!isBusinessDay(d)) d = addDays(d, -1);
  return d;
}
