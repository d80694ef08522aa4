/**
 * The cells of the spreadsheet files we serve (statements.csv, a batch's results.csv): UTF-8 with
 * a BOM (so Excel reads the accents), `;`-separated (Excel's separator where the decimal mark is a
 * comma), CRLF line ends, amounts in pesos with a decimal comma, dates in Bogotá time.
 */

import { bogotaInstant, formatInstant, instantToDate, type Instant } from '@wallet/platform';

/** Written once, before the first row. */
export const CSV_BOM = '\uFEFF';

/** Colombia keeps UTC−5 all year (no daylight saving): Bogotá time is a fixed offset. */
const BOGOTA_OFFSET_MS = -5 * 3_600_000;

/** `2026-11-21T10:00:00.123456-05:00`: an instant written in Bogotá time (six fraction digits, as every instant). */
export function bogotaIso(d: Date | Instant): string {
  return bogotaInstant(formatInstant(d));
}

/** `2026-11-21 10:00:00`: the Bogotá wall-clock time, as a spreadsheet reads a date-time. */
export function bogotaCell(x: Date | Instant): string {
  const d = typeof x === 'string' ? instantToDate(x) : x;
  return new Date(d.getTime() + BOGOTA_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

/** Centavos as pesos with a decimal comma and no thousands separator (`-1006,55`): a number in a Spanish-locale spreadsheet. */
export function pesos(cents: bigint): string {
  const neg = cents < 0n;
  const abs = neg ? -cents : cents;
  return `${neg ? '-' : ''}${abs / 100n},${(abs % 100n).toString().padStart(2, '0')}`;
}

/**
 * One CSV row: `;`-separated, CRLF-ended, every cell quoted ("" inside). A text cell that a
 * spreadsheet would run as a formula (= + - @ tab CR first) gets a leading apostrophe; numbers
 * (pesos) are ours and left as they are.
 */
export function csvRow(cells: readonly string[]): string {
  return (
    cells
      .map((c) => {
        const safe = /^[=+@\t\r]/.test(c) || (/^-/.test(c) && !/^-\d+,\d{2}$/.test(c)) ? `'${c}` : c;
        return `"${safe.replace(/"/g, '""')}"`;
      })
      .join(';') + '\r\n'
  );
}
