/**
 * The cells of the spreadsheet files we serve (statements.csv, a batch's results.csv): UTF-8 with
 * a BOM (so Excel reads the accents), `;`-separated (Excel's separator where the decimal mark is a
 * comma), CRLF line ends, amounts in pesos with a decimal comma, dates in Bogotá time.
 */

import { bogotaInstant, formatInstant, instantToDate, isInstant, type Instant } from '@wallet/platform';

/** Written once, before the first row. */
export const CSV_BOM = '\uFEFF';

/** Colombia keeps UTC−5 all year (no daylight saving): Bogotá time is a fixed offset. */
const BOGOTA_OFFSET_MS = -5 * 3_600_000;

/**
 * The Bogotá hour of a canonical instant's UTC hour (`YYYY-MM-DDTHH`), or null when the instant
 * is not canonical (or out of the years this shortcut covers). Bogotá is a whole number of hours
 * behind UTC, so an instant's minutes, seconds and fraction are the same in both: only the date and
 * hour change, and a statement's lines come in time order, so nearly every line shares the last
 * line's hour. The one hour remembered is converted the exact way (bogotaInstant), which also
 * refuses a date or hour that names no real time.
 */
let lastUtcHour = '';
let lastBogotaHour = '';
function bogotaHourOf(i: string): string | null {
  // minutes and seconds within 00–59 (isInstant checks only that they are digits)
  if (!isInstant(i) || i < '1000' || i.charCodeAt(14) > 53 || i.charCodeAt(17) > 53) return null;
  const hour = i.slice(0, 13);
  if (hour !== lastUtcHour) {
    lastBogotaHour = bogotaInstant(`${hour}:00:00.000000Z`).slice(0, 13);
    lastUtcHour = hour;
  }
  return lastBogotaHour;
}

/** `2026-11-21T10:00:00.123456-05:00`: an instant written in Bogotá time (six fraction digits, as every instant). */
export function bogotaIso(d: Date | Instant): string {
  const hour = typeof d === 'string' ? bogotaHourOf(d) : null;
  if (hour !== null) return `${hour}${(d as string).slice(13, 26)}-05:00`;
  return bogotaInstant(formatInstant(d));
}

/** `2026-11-21 10:00:00`: the Bogotá wall-clock time, as a spreadsheet reads a date-time. */
export function bogotaCell(x: Date | Instant): string {
  const hour = typeof x === 'string' ? bogotaHourOf(x) : null;
  if (hour !== null) return `${hour.slice(0, 10)} ${hour.slice(11, 13)}${(x as string).slice(13, 19)}`;
  const d = typeof x === 'string' ? instantToDate(x) : x;
  return new Date(d.getTime() + BOGOTA_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

/** Centavos as pesos with a decimal comma and no thousands separator (`-1006,55`): a number in a Spanish-locale spreadsheet. */
export function pesos(cents: bigint): string {
  // the digits split as text (no bigint division: a statement writes four amounts a line)
  const digits = (cents < 0n ? -cents : cents).toString().padStart(3, '0');
  return `${cents < 0n ? '-' : ''}${digits.slice(0, -2)},${digits.slice(-2)}`;
}

/** What `pesos` writes for a negative amount: a number, not a formula, so left as it is. */
const NEGATIVE_PESOS = /^-\d+,\d{2}$/;

/**
 * One CSV cell: quoted ("" inside). A text cell that a spreadsheet would run as a formula
 * (= + - @ tab CR first) gets a leading apostrophe; numbers (pesos) are ours and left as they are.
 */
export function csvCell(c: string): string {
  const first = c.charCodeAt(0); // NaN when empty
  // = + @ tab CR, or - unless it is a negative amount
  const formula = first === 61 || first === 43 || first === 64 || first === 9 || first === 13 || (first === 45 && !NEGATIVE_PESOS.test(c));
  const safe = formula ? `'${c}` : c;
  return `"${safe.includes('"') ? safe.replace(/"/g, '""') : safe}"`;
}

/** One CSV row: `;`-separated, CRLF-ended, every cell as csvCell writes it. */
export function csvRow(cells: readonly string[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) line += (i === 0 ? '' : ';') + csvCell(cells[i]!);
  return line + '\r\n';
}
