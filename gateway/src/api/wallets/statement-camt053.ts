import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { create, fragment } from 'xmlbuilder2';
import type { StatementEntry } from './schemas.js';
import { ENTRY_ES, journalHeadText, yymmdd, type StatementDocument, type StatementLineView } from './statement.js';

/** The message's namespace: ISO 20022 BankToCustomerStatementV08. */
export const CAMT053_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:camt.053.001.08';

/** Who issues the proprietary bank transaction codes (`BkTxCd/Prtry/Issr`): this platform, by the entry names of its JSON statement. */
const PROPRIETARY_CODE_ISSUER = 'WALLET';

/** An ISO 20022 bank transaction code (the external code list's domain / family / sub-family). */
export interface BankTransactionCode {
  domain: string;
  family: string;
  subFamily: string;
}

/**
 * The ISO 20022 bank transaction code of each entry (docs/statements.md), in the Payments domain:
 * ICDT issued credit transfers (our sends), RCDT received credit transfers (inflows), MCOP / MDOP
 * miscellaneous credit / debit operations. Sub-families: DMCT domestic credit transfer (Bre-B, and
 * PSE's payments and refunds), ACDT ACH credit (the ACH rail), RRTN the return of a credit transfer
 * (a failed send's money back; an inflow the payer's side took back), COAT a transfer between the
 * account owner's own accounts, FEES, ADJT adjustments, OTHR. Every entry has one, checked by the
 * type (a `Record` over the JSON's entries).
 */
const BTC: Record<StatementEntry, (l: StatementLineView, debit: boolean) => BankTransactionCode> = {
  CREDIT: () => pmnt('MCOP', 'OTHR'),
  FEE_CHARGE: () => pmnt('MDOP', 'FEES'),
  TRANSFER_OUT: (l) => pmnt('ICDT', l.movementRail === 'ACH' ? 'ACDT' : 'DMCT'),
  TRANSFER_OUT_RETURNED: () => pmnt('ICDT', 'RRTN'),
  TRANSFER_IN: (l) => pmnt('RCDT', l.movementRail === 'ACH' ? 'ACDT' : 'DMCT'),
  TRANSFER_IN_REVERSED: () => pmnt('RCDT', 'RRTN'),
  CORRECTION: (_l, debit) => pmnt(debit ? 'MDOP' : 'MCOP', 'ADJT'),
  WALLET_MOVE_OUT: () => pmnt('ICDT', 'COAT'),
  WALLET_MOVE_IN: () => pmnt('RCDT', 'COAT'),
};
const pmnt = (family: string, subFamily: string): BankTransactionCode => ({ domain: 'PMNT', family, subFamily });

/** The ISO bank transaction code of a statement line (an entry this version does not know: PMNT / MCOP|MDOP / OTHR). */
export function bankTransactionCode(l: StatementLineView): BankTransactionCode {
  const debit = BigInt(l.amountCents) < 0n;
  return BTC[l.entry as StatementEntry]?.(l, debit) ?? pmnt(debit ? 'MDOP' : 'MCOP', 'OTHR');
}

/** Who the counterparty of a line is in the transaction: the creditor of a send (and of its return), the debtor of an inflow (and of its reversal). */
const COUNTERPARTY_ROLE: Partial<Record<StatementEntry, 'Cdtr' | 'Dbtr'>> = {
  TRANSFER_OUT: 'Cdtr',
  TRANSFER_OUT_RETURNED: 'Cdtr',
  TRANSFER_IN: 'Dbtr',
  TRANSFER_IN_REVERSED: 'Dbtr',
};

type XMLBuilder = ReturnType<typeof create>;

const WALLET_NAME: Record<string, string> = { BREB: 'Billetera Bre-B', ACH: 'Billetera ACH' };

export interface Camt053Options {
  /** When the message is made (GrpHdr/CreDtTm, Stmt/CreDtTm). */
  generatedAt: Date;
  /** GrpHdr/MsgId: unique per message (at most 35 characters). */
  messageId: string;
}

/**
 * A statement as an ISO 20022 camt.053.001.08 message (BkToCstmrStmt; docs/statements.md), for
 * treasury and accounting software that imports bank statements in XML: one Stmt, the wallet as the
 * account (`Othr/Id` = `<NIT>/<rail>`, as MT940's `:25:`), the company as its owner (name and NIT),
 * the opening (OPBD) and closing (CLBD, CLAV) balances at the period's exact instants, the totals,
 * and one Ntry per statement line, booked (BOOK), with its ISO bank transaction code and the
 * platform's own entry name (Prtry), its references, counterparty, fee and IVA, and description.
 *
 * Amounts are pesos with two decimals (`1234.56`), unsigned with CRDT / DBIT, written from the
 * statement's own centavos (exact decimal strings, never a float): opening + Σ CRDT − Σ DBIT =
 * closing exactly. Built with xmlbuilder2, which escapes text and attributes; text is cut to each
 * element's XSD length (by characters) and stripped of what XML 1.0 cannot carry.
 *
 * Written in parts (camt053Parts): the message without its entries, split where they go, and the
 * entries in batches, each entry its own small xmlbuilder2 fragment. One document tree of 10,000
 * entries took ~600 MB and blocked the event loop for its whole build; a fragment at a time holds
 * one entry's tree, and the stream (camt053Stream) yields to the event loop between batches.
 */
export function statementCamt053(doc: StatementDocument, opts: Camt053Options): string {
  return Array.from(camt053Parts(doc, opts)).join('');
}

/** The message as a byte stream, one batch of entries per event-loop turn, as the client reads. */
export function camt053Stream(doc: StatementDocument, opts: Camt053Options): Readable {
  const parts = camt053Parts(doc, opts);
  return Readable.from(
    (async function* () {
      for (const part of parts) {
        yield part;
        await nextTurn();
      }
    })(),
    { objectMode: false },
  );
}

/** Entries written per part. */
const ENTRIES_PER_PART = 100;
/** Where the entries go in the message written without them (a comment, so nothing a statement holds can look like it). */
const ENTRIES_MARK = 'camt053-entries';

/** The message in order: everything before the entries, the entries in batches, everything after them. */
export function* camt053Parts(doc: StatementDocument, opts: Camt053Options): Generator<string> {
  const xml = skeleton(doc, opts);
  const at = xml.indexOf(`<!--${ENTRIES_MARK}-->`);
  const lineStart = xml.lastIndexOf('\n', at) + 1;
  const lineEnd = xml.indexOf('\n', at) + 1;
  yield xml.slice(0, lineStart);
  for (let i = 0; i < doc.lines.length; i += ENTRIES_PER_PART) {
    let part = '';
    for (const l of doc.lines.slice(i, i + ENTRIES_PER_PART)) {
      const f = fragment();
      entry(f, l);
      // At the entries' depth under Document/BkToCstmrStmt/Stmt; in the message's default namespace once in place.
      part += f.end({ prettyPrint: true, offset: 3 }) + '\n';
    }
    yield part;
  }
  yield xml.slice(lineEnd);
}

/** The message without its entries: a comment (ENTRIES_MARK) where they go. */
function skeleton(doc: StatementDocument, opts: Camt053Options): string {
  const created = isoDateTime(opts.generatedAt);
  const toDay = doc.toBogota.slice(0, 10);
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele(CAMT053_NAMESPACE, 'Document');
  const msg = root.ele('BkToCstmrStmt');
  msg.ele('GrpHdr').ele('MsgId').txt(text(opts.messageId, 35)).up().ele('CreDtTm').txt(created);

  const stmt = msg.ele('Stmt');
  // The wallet and the period's bounds to the second, in Bogotá: 34 characters at most.
  stmt.ele('Id').txt(`${doc.rail}-${compact(doc.fromBogota)}-${compact(doc.toBogota)}`);
  // The statement number of MT940's :28C: (the period's last day, YYMMDD), so both formats number it alike.
  stmt.ele('ElctrncSeqNb').txt(String(Number(yymmdd(toDay))));
  stmt.ele('CreDtTm').txt(created);
  stmt.ele('FrToDt').ele('FrDtTm').txt(doc.fromBogota).up().ele('ToDtTm').txt(doc.toBogota);

  const acct = stmt.ele('Acct');
  acct
    .ele('Id')
    .ele('Othr')
    .ele('Id')
    .txt(text(`${doc.company.nit}/${doc.rail}`, 34));
  acct.ele('Ccy').txt(doc.currency);
  acct.ele('Nm').txt(WALLET_NAME[doc.rail] ?? doc.rail);
  const owner = acct.ele('Ownr');
  optional(owner, 'Nm', doc.company.name, 140);
  owner.ele('Id').ele('OrgId').ele('Othr').ele('Id').txt(text(doc.company.nit, 35)).up().ele('SchmeNm').ele('Cd').txt('TXID');

  balance(stmt, 'OPBD', BigInt(doc.opening.availableCents), doc.fromBogota);
  balance(stmt, 'CLBD', BigInt(doc.closing.availableCents), doc.toBogota);
  balance(stmt, 'CLAV', BigInt(doc.closing.availableCents), doc.toBogota);

  const inCents = BigInt(doc.totals.inCents);
  const outCents = BigInt(doc.totals.outCents);
  const credits = doc.lines.filter((l) => BigInt(l.amountCents) >= 0n).length;
  const summary = stmt.ele('TxsSummry');
  const all = summary.ele('TtlNtries');
  all.ele('NbOfNtries').txt(String(doc.lines.length));
  all.ele('Sum').txt(decimal(inCents + outCents));
  all
    .ele('TtlNetNtry')
    .ele('Amt')
    .txt(decimal(inCents - outCents))
    .up()
    .ele('CdtDbtInd')
    .txt(inCents >= outCents ? 'CRDT' : 'DBIT');
  summary.ele('TtlCdtNtries').ele('NbOfNtries').txt(String(credits)).up().ele('Sum').txt(decimal(inCents));
  summary
    .ele('TtlDbtNtries')
    .ele('NbOfNtries')
    .txt(String(doc.lines.length - credits))
    .up()
    .ele('Sum')
    .txt(decimal(outCents));

  stmt.com(ENTRIES_MARK);

  const pending = `Periodo (desde, hasta]: ${doc.fromBogota} a ${doc.toBogota}. Saldo en tránsito (envíos en curso): inicial ${decimal(BigInt(doc.opening.pendingOutCents), true)} COP, final ${decimal(BigInt(doc.closing.pendingOutCents), true)} COP.`;
  // the tamper-evident journal's last daily head of the period (docs/journal.md), when recorded
  const head = doc.journalHeads.at(-1);
  stmt.ele('AddtlStmtInf').txt(text(head ? `${pending} ${journalHeadText(head)}.` : pending, 500));
  return root.end({ prettyPrint: true });
}

function entry(parent: XMLBuilder, l: StatementLineView): void {
  const cents = BigInt(l.amountCents);
  const side = cents < 0n ? 'DBIT' : 'CRDT';
  const day = l.postedAtBogota.slice(0, 10);
  const code = bankTransactionCode(l);
  const ntry = parent.ele('Ntry');
  ntry.ele('Amt', { Ccy: 'COP' }).txt(decimal(cents));
  ntry.ele('CdtDbtInd').txt(side);
  ntry.ele('Sts').ele('Cd').txt('BOOK');
  ntry.ele('BookgDt').ele('DtTm').txt(l.postedAtBogota);
  ntry.ele('ValDt').ele('Dt').txt(day);
  // The posting: its UUID without hyphens (32 characters; Max35Text has no room for the hyphens).
  ntry.ele('AcctSvcrRef').txt(hex(l.postingId));
  btc(ntry, code, l.entry);
  charges(ntry, BigInt(l.feeCents), BigInt(l.ivaCents));

  const tx = ntry.ele('NtryDtls').ele('TxDtls');
  const refs = tx.ele('Refs');
  refs.ele('EndToEndId').txt(text(l.reference ?? '', 35) || 'NOTPROVIDED');
  if (l.movementId) refs.ele('TxId').txt(hex(l.movementId));
  tx.ele('Amt', { Ccy: 'COP' }).txt(decimal(cents));
  tx.ele('CdtDbtInd').txt(side);
  const role = COUNTERPARTY_ROLE[l.entry as StatementEntry];
  const counterparty = text(l.counterparty ?? '', 140);
  if (role && counterparty) tx.ele('RltdPties').ele(role).ele('Pty').ele('Nm').txt(counterparty);
  if (l.movementRail) tx.ele('LclInstrm').ele('Prtry').txt(l.movementRail);
  const description = chunks(l.description ?? '', 140);
  if (description.length > 0) {
    const rmt = tx.ele('RmtInf');
    for (const c of description) rmt.ele('Ustrd').txt(c);
  }
  // In words, with what the fixed-length references cut: the whole reference and movement id.
  const info = [
    ENTRY_ES[l.entry] ?? l.entry,
    l.reference ? `Referencia: ${l.reference}` : null,
    l.movementId ? `Movimiento: ${l.movementId}` : null,
    l.movementStatus ? `Estado actual: ${l.movementStatus}` : null,
  ]
    .filter((x): x is string => !!x)
    .join(' · ');
  tx.ele('AddtlTxInf').txt(text(info, 500));
  ntry.ele('AddtlNtryInf').txt(text(ENTRY_ES[l.entry] ?? l.entry, 500));
}

function btc(ntry: XMLBuilder, code: BankTransactionCode, entryName: string): void {
  const el = ntry.ele('BkTxCd');
  el.ele('Domn').ele('Cd').txt(code.domain).up().ele('Fmly').ele('Cd').txt(code.family).up().ele('SubFmlyCd').txt(code.subFamily);
  el.ele('Prtry').ele('Cd').txt(text(entryName, 35)).up().ele('Issr').txt(PROPRIETARY_CODE_ISSUER);
}

/**
 * The line's fee and IVA (DBIT: charged; CRDT: given back), included in the entry's amount: a send's
 * line is amount + fee + IVA, an inflow's is the gross less them.
 */
function charges(ntry: XMLBuilder, fee: bigint, iva: bigint): void {
  if (fee === 0n && iva === 0n) return;
  const el = ntry.ele('Chrgs');
  el.ele('TtlChrgsAndTaxAmt', { Ccy: 'COP' }).txt(decimal(fee + iva));
  const rec = el.ele('Rcrd');
  rec.ele('Amt', { Ccy: 'COP' }).txt(decimal(fee));
  rec.ele('CdtDbtInd').txt(fee + iva < 0n ? 'CRDT' : 'DBIT');
  rec.ele('ChrgInclInd').txt('true');
  if (iva !== 0n) rec.ele('Tax').ele('Id').txt('IVA').up().ele('Amt', { Ccy: 'COP' }).txt(decimal(iva));
}

function balance(stmt: XMLBuilder, type: 'OPBD' | 'CLBD' | 'CLAV', cents: bigint, at: string): void {
  const bal = stmt.ele('Bal');
  bal.ele('Tp').ele('CdOrPrtry').ele('Cd').txt(type);
  bal.ele('Amt', { Ccy: 'COP' }).txt(decimal(cents));
  bal.ele('CdtDbtInd').txt(cents < 0n ? 'DBIT' : 'CRDT');
  bal.ele('Dt').ele('DtTm').txt(at);
}

function optional(parent: XMLBuilder, name: string, value: string, max: number): void {
  const t = text(value, max);
  if (t) parent.ele(name).txt(t);
}

/** Centavos as pesos with a decimal point and two decimals, unsigned unless `signed` (`1234.56`). */
export function decimal(cents: bigint, signed = false): string {
  const neg = cents < 0n;
  const s = (neg ? -cents : cents).toString().padStart(3, '0');
  return `${signed && neg ? '-' : ''}${s.slice(0, -2)}.${s.slice(-2)}`;
}

/** Characters XML 1.0 cannot carry (controls but tab, LF, CR; lone surrogates; U+FFFE/U+FFFF). */
const NOT_XML = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text for an element of at most `max` characters (XSD lengths count characters): XML-safe, spaces collapsed, trimmed. */
function text(value: string, max: number): string {
  const clean = value.replace(NOT_XML, ' ').replace(/\s+/g, ' ').trim();
  return Array.from(clean).slice(0, max).join('').trim();
}

/** Text in pieces of at most `max` characters (a repeatable element such as Ustrd). */
function chunks(value: string, max: number): string[] {
  const chars = Array.from(text(value, Number.MAX_SAFE_INTEGER));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += max) {
    const piece = chars
      .slice(i, i + max)
      .join('')
      .trim();
    if (piece) out.push(piece);
  }
  return out;
}

const hex = (uuid: string) => uuid.replace(/-/g, '').slice(0, 35);
/** `2026-11-28T11:39:52.123456-05:00` → `20261128113952` (Bogotá wall clock, to the second). */
const compact = (bogota: string) => bogota.slice(0, 19).replace(/[-:T]/g, '');

/**
 * An instant as ISO 8601 in Bogotá time, to the millisecond (`2026-11-28T11:39:52.123-05:00`): camt.053's
 * CreDtTm, in the precision banks' importers expect (the API's instants, `bogotaIso`, carry six digits).
 */
function isoDateTime(d: Date): string {
  return new Date(d.getTime() - 5 * 3_600_000).toISOString().replace('Z', '-05:00');
}
