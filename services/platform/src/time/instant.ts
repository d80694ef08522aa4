/**
 * Instants as the services and the API carry them (docs/decisions.md, "Instants at microsecond
 * precision"): RFC 3339 in UTC with exactly six fraction digits, `2026-11-28T16:39:52.123456Z`.
 *
 * Postgres keeps `timestamptz` to the microsecond; a JavaScript `Date` holds milliseconds. An
 * instant read from the journal therefore travels as this string (or as bigint microseconds),
 * never through a `Date`, so that a line's own timestamp, given back as a bound, names exactly
 * the line's instant. Strings of this one format sort as their instants do.
 */
export type Instant = string;

/** A real example, for documents. */
export const INSTANT_EXAMPLE: Instant = '2026-11-28T16:39:52.123456Z';
/** The format every instant is returned in (OpenAPI `pattern`). */
export const INSTANT_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z$';
const CANONICAL = new RegExp(INSTANT_PATTERN);

/**
 * What is accepted: a date-time with its offset (`Z` or `±HH:MM`); seconds optional; up to 9
 * fraction digits (digits past the 6th, below Postgres' resolution, are dropped: truncated, never
 * rounded, so a bound never moves past an instant it names).
 */
const ACCEPTED = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):(\d{2}))$/;
const BARE_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const US_PER_SECOND = 1_000_000n;
const US_PER_MINUTE = 60n * US_PER_SECOND;
/** Colombia keeps UTC−5 all year (no daylight saving): Bogotá time is a fixed offset. */
export const BOGOTA_OFFSET_MINUTES = -300;

/** Seconds since the epoch of a UTC wall-clock time, or null when the fields name no real time (Feb 30, 24:00, :60). */
function utcSeconds(y: number, mo: number, d: number, h: number, mi: number, s: number): bigint | null {
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null;
  return BigInt(date.getTime()) / 1000n;
}

/** An instant from what a client sent (see ACCEPTED), or null when it is not one. */
export function parseInstant(text: string): Instant | null {
  const m = ACCEPTED.exec(text);
  if (!m) return null;
  const secs = utcSeconds(+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0));
  if (secs === null) return null;
  let offsetMin = 0;
  if (m[8] !== 'Z') {
    const oh = +m[10]!,
      om = +m[11]!;
    if (oh > 23 || om > 59) return null;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const fraction = BigInt((m[7] ?? '').padEnd(9, '0').slice(0, 6));
  return instantFromMicros(secs * US_PER_SECOND + fraction - BigInt(offsetMin) * US_PER_MINUTE);
}

/**
 * A statement-style bound: an instant (parseInstant) or a bare date `YYYY-MM-DD`, that day's
 * 00:00 in Bogotá. Null when neither.
 */
export function parseInstantOrBogotaDate(text: string): Instant | null {
  const d = BARE_DATE.exec(text);
  if (!d) return parseInstant(text);
  const secs = utcSeconds(+d[1]!, +d[2]!, +d[3]!, 0, 0, 0);
  return secs === null ? null : instantFromMicros(secs * US_PER_SECOND - BigInt(BOGOTA_OFFSET_MINUTES) * US_PER_MINUTE);
}

export function isInstant(text: unknown): text is Instant {
  return typeof text === 'string' && CANONICAL.test(text);
}

/** Microseconds since the epoch. Throws on a string that is not an Instant (a bug, not input). */
export function instantMicros(i: Instant): bigint {
  if (!isInstant(i)) throw new Error(`not an instant: ${JSON.stringify(i)}`);
  const secs = utcSeconds(+i.slice(0, 4), +i.slice(5, 7), +i.slice(8, 10), +i.slice(11, 13), +i.slice(14, 16), +i.slice(17, 19));
  if (secs === null) throw new Error(`not an instant: ${JSON.stringify(i)}`);
  return secs * US_PER_SECOND + BigInt(i.slice(20, 26));
}

export function instantFromMicros(us: bigint): Instant {
  const secs = us >= 0n ? us / US_PER_SECOND : -((-us + US_PER_SECOND - 1n) / US_PER_SECOND);
  const frac = us - secs * US_PER_SECOND;
  return `${new Date(Number(secs) * 1000).toISOString().slice(0, 19)}.${frac.toString().padStart(6, '0')}Z`;
}

/** A `Date` (milliseconds) as an instant: its three digits of microseconds are zeros. */
export function instantFromDate(d: Date): Instant {
  return instantFromMicros(BigInt(d.getTime()) * 1000n);
}

/**
 * The API's one way to write an instant: from the journal (already an Instant, kept exactly) or
 * from a `Date` of a service that keeps milliseconds.
 */
export function formatInstant(x: Date | Instant): Instant {
  return typeof x === 'string' ? instantFromMicros(instantMicros(x)) : instantFromDate(x);
}

/** As a `Date`, the microseconds truncated: for display at second or minute precision and for clocks, never for bounds. */
export function instantToDate(i: Instant): Date {
  const us = instantMicros(i);
  return new Date(Number(us >= 0n ? us / 1000n : -((-us + 999n) / 1000n)));
}

/** -1, 0 or 1 as a is before, at or after b. */
export function compareInstants(a: Instant, b: Instant): number {
  const x = instantMicros(a),
    y = instantMicros(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** `2026-11-21T10:00:00.123456-05:00`: the instant written in Bogotá time. */
export function bogotaInstant(i: Instant): string {
  return formatInstant(instantFromMicros(instantMicros(i) + BigInt(BOGOTA_OFFSET_MINUTES) * US_PER_MINUTE)).replace('Z', '-05:00');
}

/**
 * SQL that writes a `timestamptz` column as an Instant (exact; `to_char`'s `US` is the six digits
 * Postgres keeps). A bound goes the other way as a parameter cast `?::timestamptz`, compared there
 * at full precision.
 */
export function sqlInstant(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}
