import type { StatementEntry } from './schemas.js';
import { journalHeadText, yymmdd, type StatementDocument } from './statement.js';

/**
 * A statement as a SWIFT MT940 customer statement message (docs/statements.md), for accounting
 * software that imports bank statements: one message, the wallet as the account, the opening and
 * closing booked balances, one `:61:` line per statement line with its `:86:` details.
 *
 *   :20:  the statement's reference (the wallet and the period)
 *   :25:  the account: the company's NIT and the wallet (`900123456-7/BREB`)
 *   :28C: the statement number: the period's last day (Bogotá), YYMMDD, sequence 1
 *   :60F: opening balance  — C/D, the `from` day (Bogotá), COP, amount with a decimal comma
 *   :61:  value date (the line's day in Bogotá), entry date (MMDD), C/D, amount, N + type code,
 *         the line's reference (or NONREF), `//` and the posting (16 characters of its id)
 *   :86:  what the line is, in the SWIFT character set (accents dropped), at most 6 lines of 65
 *   :62F: closing balance; :64: the closing available balance (the same)
 *   :86:  after them, for the whole statement: the tamper-evident journal's last daily head of the
 *         period (docs/journal.md), when one is recorded
 *
 * Amounts are the statement's own (opening + Σ lines = closing, exactly), so a parser that checks
 * the balances finds them equal. Lines end with CRLF, as SWIFT files do.
 */
export function statementMt940(doc: StatementDocument): string {
  const out: string[] = [];
  const fromDay = doc.fromBogota.slice(0, 10);
  const toDay = doc.toBogota.slice(0, 10);
  out.push(`:20:${swift(`${doc.rail}${yymmdd(fromDay)}${yymmdd(toDay)}`, 16)}`);
  out.push(`:25:${swift(`${doc.company.nit}/${doc.rail}`, 35)}`);
  out.push(`:28C:${yymmdd(toDay)}/1`);
  out.push(`:60F:${balance(BigInt(doc.opening.availableCents), fromDay)}`);
  for (const l of doc.lines) {
    const cents = BigInt(l.amountCents);
    const day = l.postedAtBogota.slice(0, 10);
    // The customer reference is followed by `//` and the bank's: it holds no `//` of its own, and does not end with `/`.
    const ref =
      swift(l.reference ?? '', 16)
        .replace(/\/{2,}/g, '/')
        .replace(/\/+$/, '') || 'NONREF';
    const bankRef = l.postingId.replace(/-/g, '').slice(0, 16).toUpperCase();
    out.push(
      `:61:${yymmdd(day)}${day.slice(5, 7)}${day.slice(8, 10)}${cents < 0n ? 'D' : 'C'}${amount(cents < 0n ? -cents : cents)}N${MT940_TYPES[l.entry as StatementEntry] ?? 'MSC'}${ref}//${bankRef}`,
    );
    const details = [ENTRY_TEXT[l.entry as StatementEntry] ?? l.entry, l.counterparty, l.description, l.movementId ? `MOV ${l.movementId}` : null]
      .filter((x): x is string => !!x)
      .map((x) => swift(x, 390))
      .filter(Boolean)
      .join(' ');
    out.push(...lines86(details));
  }
  out.push(`:62F:${balance(BigInt(doc.closing.availableCents), toDay)}`);
  out.push(`:64:${balance(BigInt(doc.closing.availableCents), toDay)}`);
  const head = doc.journalHeads.at(-1);
  if (head) out.push(...lines86(swift(journalHeadText(head), 390)));
  return out.join('\r\n') + '\r\n-\r\n';
}

/**
 * MT940 transaction type codes (SWIFT's list for `:61:` subfield 6) of the statement's entries:
 * TRF a transfer (a send, an inbound payment, a move between the company's own wallets), RTI a
 * returned item (a failed send's money back, an inflow reversed), CHG charges, MSC miscellaneous.
 * (SWIFT's BOE is a bill of exchange, not a book entry: a move is a transfer.)
 */
export const MT940_TYPES: Record<StatementEntry, string> = {
  CREDIT: 'MSC',
  FEE_CHARGE: 'CHG',
  TRANSFER_OUT: 'TRF',
  TRANSFER_OUT_RETURNED: 'RTI',
  TRANSFER_IN: 'TRF',
  TRANSFER_IN_REVERSED: 'RTI',
  CORRECTION: 'MSC',
  WALLET_MOVE_OUT: 'TRF',
  WALLET_MOVE_IN: 'TRF',
};

/** The entries in words, in the SWIFT character set (no accents). */
const ENTRY_TEXT: Record<StatementEntry, string> = {
  CREDIT: 'ABONO DE SALDO',
  FEE_CHARGE: 'COBRO DE COMISION',
  TRANSFER_OUT: 'TRANSFERENCIA ENVIADA',
  TRANSFER_OUT_RETURNED: 'DEVOLUCION DE TRANSFERENCIA FALLIDA',
  TRANSFER_IN: 'RECAUDO RECIBIDO',
  TRANSFER_IN_REVERSED: 'REVERSO DE RECAUDO',
  CORRECTION: 'CORRECCION',
  WALLET_MOVE_OUT: 'TRASLADO A OTRA BILLETERA PROPIA',
  WALLET_MOVE_IN: 'TRASLADO DESDE OTRA BILLETERA PROPIA',
};

/** Centavos as an MT940 amount: whole pesos, a decimal comma, two decimals (`1234,56`). */
function amount(cents: bigint): string {
  const s = cents.toString().padStart(3, '0');
  return `${s.slice(0, -2)},${s.slice(-2)}`;
}

/** A balance field: C (credit) or D (debit, a negative balance), the day, COP, the amount. */
function balance(cents: bigint, isoDay: string): string {
  return `${cents < 0n ? 'D' : 'C'}${yymmdd(isoDay)}COP${amount(cents < 0n ? -cents : cents)}`;
}

/**
 * Text in the SWIFT x character set (a-z A-Z 0-9 / - ? : ( ) . , ' + space): accents dropped, any
 * other character a space, runs of spaces one, at most `max` characters. A field never starts with
 * `:` or `-` (a line starting so would read as a new tag or the message's end).
 */
function swift(text: string, max: number): string {
  const ascii = text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9/\-?:().,'+ ]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return ascii.slice(0, max).trim();
}

/** `:86:` with up to 6 lines of 65 characters (the first after the tag), none starting with `:` or `-`. */
function lines86(text: string): string[] {
  const chunks: string[] = [];
  let rest = text || 'NONREF';
  while (rest.length > 0 && chunks.length < 6) {
    // A continuation line never starts with `:` or `-`: a space goes first, and the line takes one character less.
    const lead = chunks.length > 0 && /^[:-]/.test(rest) ? ' ' : '';
    const take = 65 - lead.length;
    chunks.push(lead + rest.slice(0, take));
    rest = rest.slice(take);
  }
  return chunks.map((c, i) => (i === 0 ? `:86:${c}` : c));
}
