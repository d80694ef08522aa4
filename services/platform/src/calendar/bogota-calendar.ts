// The package's ES module build (its CommonJS one requires `pascua`, an ES module, which Jest's VM cannot load).
import { getHolidaysForYear } from 'colombian-holidays/dist/index.mjs';

/**
 * Bogotá's calendar: the wall clock (UTC−05:00 all year: Colombia has kept no daylight saving time
 * since 1993), Colombian public holidays as observed (the Ley Emiliani moves most to a Monday; from
 * the maintained `colombian-holidays` package) and business days (Monday to Friday, not a holiday).
 * Dates are `YYYY-MM-DD` strings of the Bogotá calendar; times of day `HH:MM`.
 */

export const WEEKDAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export const BOGOTA_OFFSET_MS = -5 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Wall-clock facts of an instant in Bogotá. */
export function bogotaClock(at: Date): { minute: number; weekday: Weekday; date: string } {
  const local = new Date(at.getTime() + BOGOTA_OFFSET_MS);
  return {
    minute: local.getUTCHours() * 60 + local.getUTCMinutes(),
    weekday: WEEKDAYS[(local.getUTCDay() + 6) % 7]!,
    date: local.toISOString().slice(0, 10),
  };
}

const holidayYears = new Map<number, ReadonlySet<string>>();
/** Colombian public holidays as observed, by the `colombian-holidays` package. */
export function isColombianHoliday(date: string): boolean {
  const year = Number(date.slice(0, 4));
  let days = holidayYears.get(year);
  if (!days) {
    days = new Set(getHolidaysForYear(year).map((h) => h.celebrationDate));
    holidayYears.set(year, days);
  }
  return days.has(date);
}

/** The weekday of a Bogotá date. */
export function weekdayOf(date: string): Weekday {
  return WEEKDAYS[(new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7]!;
}

/** Monday to Friday, and not a Colombian holiday. */
export function isBusinessDay(date: string): boolean {
  const d = weekdayOf(date);
  return d !== 'SAT' && d !== 'SUN' && !isColombianHoliday(date);
}

/** The date `days` days after `date` (negative: before). */
export function addDays(date: string, days: number): string {
  return new Date(new Date(`${date}T00:00:00Z`).getTime() + days * DAY_MS).toISOString().slice(0, 10);
}

/** How many days the month has (`month` 1-12). */
export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The instant a Bogotá wall-clock time names (`HH:MM` on `date`). */
export function bogotaWallClockInstant(date: string, time: string): Date {
  return new Date(new Date(`${date}T${time}:00Z`).getTime() - BOGOTA_OFFSET_MS);
}
