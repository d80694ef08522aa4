import fc from 'fast-check';
import { Problems } from '../errors/catalogue.js';
import { bogotaClock, isBusinessDay, isColombianHoliday, WEEKDAYS } from './bogota-calendar.js';
import { checkScheduleRule, nextRun, runKey, upcomingRuns, type BusinessDayRule, type Recurrence, type ScheduleRule } from './recurrence.js';

const at = (iso: string) => new Date(iso);
const rule = (recurrence: Recurrence, over: Partial<ScheduleRule> = {}): ScheduleRule => ({
  recurrence,
  businessDayRule: 'NONE',
  startAt: at('2026-11-01T00:00:00-05:00'),
  endAt: null,
  maxRuns: null,
  ...over,
});
/** The runs as Bogotá wall-clock `nominal → due` lines. */
const lines = (r: ScheduleRule, n: number) =>
  upcomingRuns(r, null, n).map((x) => `${x.seq} ${x.nominalLocal} → ${bogotaClock(x.dueAt).date} ${bogotaClock(x.dueAt).weekday}`);
const problems = (r: ScheduleRule) => {
  const p = new Problems();
  checkScheduleRule(p, r);
  try {
    p.throwIfAny();
    return [];
  } catch (err) {
    return ((err as { details: { fields: Array<{ path: string }> } }).details.fields ?? []).map((f) => f.path);
  }
};

describe('recurrence: when a scheduled payout runs (Bogotá time)', () => {
  it('the calendar facts the cases below rely on', () => {
    expect(bogotaClock(at('2026-11-15T12:00:00-05:00')).weekday).toBe('SUN');
    expect(isColombianHoliday('2026-12-08')).toBe(true); // Inmaculada Concepción, a Tuesday
    expect(isColombianHoliday('2027-03-25')).toBe(true); // Jueves Santo
    expect(isColombianHoliday('2027-03-26')).toBe(true); // Viernes Santo
    expect(isBusinessDay('2027-03-24')).toBe(true);
    expect(isBusinessDay('2027-03-29')).toBe(true);
  });

  it('monthly on the 15th, PREVIOUS: a Sunday 15th runs on Friday the 13th, under the 15th’s name', () => {
    const r = rule({ kind: 'MONTHLY', dayOfMonth: 15, time: '08:00' }, { businessDayRule: 'PREVIOUS' });
    expect(lines(r, 3)).toEqual(['1 2026-11-15T08:00 → 2026-11-13 FRI', '2 2026-12-15T08:00 → 2026-12-15 TUE', '3 2027-01-15T08:00 → 2027-01-15 FRI']);
    const first = nextRun(r, null)!;
    expect(first.dueAt.toISOString()).toBe('2026-11-13T13:00:00.000Z');
    expect(runKey('sch_1', first)).toBe('schedule:sch_1:2026-11-15T08:00');
  });

  it('monthly across a holiday: the 8th of December moves back or forward a business day', () => {
    const m = { kind: 'MONTHLY', dayOfMonth: 8, time: '10:30' } as const;
    const start = { startAt: at('2026-12-01T00:00:00-05:00'), maxRuns: 1 };
    expect(lines(rule(m, { ...start, businessDayRule: 'PREVIOUS' }), 5)).toEqual(['1 2026-12-08T10:30 → 2026-12-07 MON']);
    expect(lines(rule(m, { ...start, businessDayRule: 'NEXT' }), 5)).toEqual(['1 2026-12-08T10:30 → 2026-12-09 WED']);
    expect(lines(rule(m, { ...start, businessDayRule: 'NONE' }), 5)).toEqual(['1 2026-12-08T10:30 → 2026-12-08 TUE']);
    // SKIP: December's run does not happen, and is not counted.
    expect(lines(rule(m, { ...start, businessDayRule: 'SKIP' }), 5)).toEqual(['1 2027-01-08T10:30 → 2027-01-08 FRI']);
  });

  it('monthly on the 31st: a shorter month runs on its last day', () => {
    const r = rule({ kind: 'MONTHLY', dayOfMonth: 31, time: '08:00' }, { startAt: at('2027-01-01T00:00:00-05:00') });
    expect(upcomingRuns(r, null, 4).map((x) => x.nominalLocal)).toEqual(['2027-01-31T08:00', '2027-02-28T08:00', '2027-03-31T08:00', '2027-04-30T08:00']);
    const leap = rule({ kind: 'MONTHLY', dayOfMonth: 30, time: '08:00' }, { startAt: at('2028-02-01T00:00:00-05:00'), maxRuns: 1 });
    expect(nextRun(leap, null)!.nominalLocal).toBe('2028-02-29T08:00');
  });

  it('the last business day of each month', () => {
    const r = rule({ kind: 'LAST_BUSINESS_DAY', time: '16:00' }, { businessDayRule: 'NEXT' });
    // November 30 2026 is a Monday; December 31 a Thursday; January 31 2027 a Sunday.
    expect(lines(r, 3)).toEqual(['1 2026-11-30T16:00 → 2026-11-30 MON', '2 2026-12-31T16:00 → 2026-12-31 THU', '3 2027-01-29T16:00 → 2027-01-29 FRI']);
  });

  it('weekly on Friday across Holy Week: PREVIOUS goes back past Holy Thursday, NEXT to Monday, SKIP drops the week', () => {
    const w = { kind: 'WEEKLY', dayOfWeek: 'FRI', time: '09:00' } as const;
    const start = { startAt: at('2027-03-20T00:00:00-05:00'), maxRuns: 2 };
    expect(lines(rule(w, { ...start, businessDayRule: 'PREVIOUS' }), 5)).toEqual([
      '1 2027-03-26T09:00 → 2027-03-24 WED',
      '2 2027-04-02T09:00 → 2027-04-02 FRI',
    ]);
    expect(lines(rule(w, { ...start, businessDayRule: 'NEXT' }), 5)).toEqual(['1 2027-03-26T09:00 → 2027-03-29 MON', '2 2027-04-02T09:00 → 2027-04-02 FRI']);
    expect(lines(rule(w, { ...start, businessDayRule: 'SKIP' }), 5)).toEqual(['1 2027-04-02T09:00 → 2027-04-02 FRI', '2 2027-04-09T09:00 → 2027-04-09 FRI']);
  });

  it('a weekly run later the same day still runs that day; one already past waits a week', () => {
    const w = rule({ kind: 'WEEKLY', dayOfWeek: 'MON', time: '09:00' }, { startAt: at('2026-11-30T08:59:00-05:00') });
    expect(nextRun(w, null)!.nominalLocal).toBe('2026-11-30T09:00');
    expect(nextRun({ ...w, startAt: at('2026-11-30T09:00:00-05:00') }, null)!.nominalLocal).toBe('2026-11-30T09:00'); // the start is inclusive
    expect(nextRun({ ...w, startAt: at('2026-11-30T09:00:01-05:00') }, null)!.nominalLocal).toBe('2026-12-07T09:00');
  });

  it('a cron in Bogotá time: weekdays at 07:30, holidays skipped', () => {
    const r = rule({ kind: 'CRON', expression: '30 7 * * 1-5' }, { startAt: at('2026-12-07T00:00:00-05:00'), businessDayRule: 'SKIP' });
    expect(upcomingRuns(r, null, 3).map((x) => [x.nominalLocal, x.dueAt.toISOString()])).toEqual([
      ['2026-12-07T07:30', '2026-12-07T12:30:00.000Z'],
      ['2026-12-09T07:30', '2026-12-09T12:30:00.000Z'], // the 8th is a holiday
      ['2026-12-10T07:30', '2026-12-10T12:30:00.000Z'],
    ]);
  });

  it('ends at its end date or after its number of runs; ONCE runs once', () => {
    const w = { kind: 'WEEKLY', dayOfWeek: 'WED', time: '12:00' } as const;
    expect(upcomingRuns(rule(w, { maxRuns: 2 }), null, 10)).toHaveLength(2);
    expect(upcomingRuns(rule(w, { endAt: at('2026-11-18T12:00:00-05:00') }), null, 10).map((x) => x.nominalLocal)).toEqual([
      '2026-11-04T12:00',
      '2026-11-11T12:00',
      '2026-11-18T12:00',
    ]);
    const once = rule({ kind: 'ONCE', executeAt: at('2026-12-24T10:00:00-05:00') });
    const first = nextRun(once, null)!;
    expect([first.seq, first.nominalLocal]).toEqual([1, '2026-12-24T10:00']);
    expect(nextRun(once, first)).toBeNull();
  });

  it('refuses what cannot be a schedule, field by field', () => {
    expect(problems(rule({ kind: 'MONTHLY', dayOfMonth: 0, time: '24:00' }))).toEqual(['dayOfMonth', 'time']);
    expect(problems(rule({ kind: 'WEEKLY', dayOfWeek: 'FRIDAY' as never, time: '9:00' }))).toEqual(['dayOfWeek', 'time']);
    expect(problems(rule({ kind: 'CRON', expression: '0 0 8 * * *' }))).toEqual(['expression']); // six fields
    expect(problems(rule({ kind: 'CRON', expression: '0 8 * * mon-funday' }))).toEqual(['expression']);
    expect(problems(rule({ kind: 'CRON', expression: '0 8 30 2 *' }))).toEqual(['expression']); // 30 February: the parser says never
    // 29 February: only in leap years, within the five-year horizon from the start; none before an end in 2027.
    expect(problems(rule({ kind: 'CRON', expression: '0 8 29 2 *' }))).toEqual([]);
    expect(problems(rule({ kind: 'CRON', expression: '0 8 29 2 *' }, { endAt: at('2027-12-31T00:00:00Z') }))).toEqual(['recurrence']);
    expect(problems(rule({ kind: 'ONCE', executeAt: at('2026-10-01T00:00:00Z') }))).toEqual(['recurrence']); // before the start
    expect(problems(rule({ kind: 'LAST_BUSINESS_DAY', time: '08:00' }, { maxRuns: 0, endAt: at('2026-10-01T00:00:00Z') }))).toEqual(['maxRuns', 'endAt']);
    expect(problems(rule({ kind: 'LAST_BUSINESS_DAY', time: '08:00' }, { businessDayRule: 'LATER' as never }))).toEqual(['businessDayRule']);
  });

  describe('properties over random rules and starts', () => {
    const time = fc
      .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
      .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
    const recurrence: fc.Arbitrary<Recurrence> = fc.oneof(
      fc.record({ kind: fc.constant('MONTHLY' as const), dayOfMonth: fc.integer({ min: 1, max: 31 }), time }),
      fc.record({ kind: fc.constant('LAST_BUSINESS_DAY' as const), time }),
      fc.record({ kind: fc.constant('WEEKLY' as const), dayOfWeek: fc.constantFrom(...WEEKDAYS), time }),
      fc.constantFrom<Recurrence>(
        { kind: 'CRON', expression: '0 8 * * *' },
        { kind: 'CRON', expression: '15 */6 * * 1-5' },
        { kind: 'CRON', expression: '0 9 1,15 * *' },
      ),
    );
    const rules = fc.record({
      recurrence,
      businessDayRule: fc.constantFrom<BusinessDayRule>('NONE', 'PREVIOUS', 'NEXT', 'SKIP'),
      startAt: fc.date({ min: at('2025-01-01T00:00:00Z'), max: at('2030-12-31T00:00:00Z'), noInvalidDate: true }),
      endAt: fc.constant(null),
      maxRuns: fc.constant(null),
    });

    it('runs are counted one by one, named uniquely, ordered by their nominal time, never before the start', () => {
      fc.assert(
        fc.property(rules, (r) => {
          const runs = upcomingRuns(r, null, 12);
          expect(runs.map((x) => x.seq)).toEqual(runs.map((_, i) => i + 1));
          expect(new Set(runs.map((x) => x.nominalLocal)).size).toBe(runs.length);
          for (let i = 0; i < runs.length; i++) {
            expect(runs[i]!.nominalAt.getTime()).toBeGreaterThanOrEqual(r.startAt.getTime());
            if (i > 0) expect(runs[i]!.nominalAt.getTime()).toBeGreaterThan(runs[i - 1]!.nominalAt.getTime());
            // Resuming from any run gives the same rest (a restart asks from the last run it started).
            if (i > 0) expect(nextRun(r, runs[i - 1]!)).toEqual(runs[i]);
          }
        }),
        { numRuns: 150 },
      );
    });

    it('the business-day rule: PREVIOUS never later, NEXT never earlier, both on a business day within ten days; SKIP only business days', () => {
      fc.assert(
        fc.property(rules, (r) => {
          for (const x of upcomingRuns(r, null, 12)) {
            const due = bogotaClock(x.dueAt);
            const nominal = bogotaClock(x.nominalAt);
            expect(due.minute).toBe(nominal.minute);
            const days = (x.dueAt.getTime() - x.nominalAt.getTime()) / 86_400_000;
            if (r.businessDayRule === 'NONE') expect(days).toBe(0);
            else expect(isBusinessDay(due.date) || r.recurrence.kind === 'LAST_BUSINESS_DAY').toBe(true);
            if (r.businessDayRule === 'PREVIOUS') expect(days).toBeLessThanOrEqual(0);
            if (r.businessDayRule === 'NEXT') expect(days).toBeGreaterThanOrEqual(0);
            if (r.businessDayRule === 'SKIP') expect(days).toBe(0);
            expect(Math.abs(days)).toBeLessThanOrEqual(10);
            if (r.recurrence.kind === 'LAST_BUSINESS_DAY') expect([days, isBusinessDay(due.date)]).toEqual([0, true]);
          }
        }),
        { numRuns: 150 },
      );
    });
  });
});
