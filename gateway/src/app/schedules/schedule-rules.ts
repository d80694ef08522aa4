import { nextRun, type BusinessDayRule, type Recurrence, type ScheduledRun, type ScheduleRule, type Weekday } from '@wallet/platform';
import type { NextRun, StoredRule } from '../../persistence/schedule.store.js';

/** The API's recurrence (instants as strings) as the rules take it. */
export function recurrenceOf(r: StoredRule['recurrence']): Recurrence {
  switch (r.kind) {
    case 'ONCE':
      return { kind: 'ONCE', executeAt: new Date(String(r.executeAt)) };
    case 'MONTHLY':
      return { kind: 'MONTHLY', dayOfMonth: Number(r.dayOfMonth), time: String(r.time) };
    case 'LAST_BUSINESS_DAY':
      return { kind: 'LAST_BUSINESS_DAY', time: String(r.time) };
    case 'WEEKLY':
      return { kind: 'WEEKLY', dayOfWeek: String(r.dayOfWeek) as Weekday, time: String(r.time) };
    case 'CRON':
      return { kind: 'CRON', expression: String(r.expression) };
    default:
      throw new Error(`unknown recurrence ${r.kind}`);
  }
}

export function ruleOf(s: StoredRule): ScheduleRule {
  return {
    recurrence: recurrenceOf(s.recurrence),
    businessDayRule: s.businessDayRule as BusinessDayRule,
    startAt: new Date(s.startAt),
    endAt: s.endAt === null ? null : new Date(s.endAt),
    maxRuns: s.maxRuns,
  };
}

export function storedNext(r: ScheduledRun | null): NextRun | null {
  return r ? { seq: r.seq, nominalAt: r.nominalAt.toISOString(), nominalLocal: r.nominalLocal, dueAt: r.dueAt.toISOString() } : null;
}

/** The run after the last one started (`last`: its seq and nominal time; null before the first). */
export function nextAfter(rule: StoredRule, last: { seq: number; nominalAt: string } | null): NextRun | null {
  return storedNext(nextRun(ruleOf(rule), last ? { seq: last.seq, nominalAt: new Date(last.nominalAt) } : null));
}

/**
 * The next run due at or after `now` when a schedule is resumed: the runs that fell due while it was
 * paused do not happen and are not counted (the next one keeps the number after the last started).
 */
export function nextOnResume(rule: StoredRule, last: { seq: number; nominalAt: string } | null, now: Date): NextRun | null {
  const r = ruleOf(rule);
  const seq = last?.seq ?? 0;
  let after: Date | null = last ? new Date(last.nominalAt) : null;
  for (let i = 0; i < 100_000; i++) {
    const n = nextRun(r, after === null ? null : { seq, nominalAt: after });
    if (!n || n.dueAt.getTime() >= now.getTime()) return storedNext(n);
    after = n.nominalAt;
  }
  return null;
}
