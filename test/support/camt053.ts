import { readFileSync } from 'node:fs';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { validateXML } from 'xmllint-wasm';

/**
 * Independent checks of an ISO 20022 camt.053.001.08 statement, for the e2e tests: libxml2
 * (xmllint-wasm: xmllint compiled to WebAssembly, no system package) validates it against the
 * published XSD (fixtures/iso20022, see its README), and fast-xml-parser reads it back, so the test
 * compares what any importer would read with the JSON statement — nothing of the gateway's code.
 */

const XSD = readFileSync(new URL('../fixtures/iso20022/camt.053.001.08.xsd', import.meta.url), 'utf8');

/** The XSD validation's errors (none: valid), each with its line. */
export async function camt053SchemaErrors(xml: string): Promise<string[]> {
  const r = await validateXML({ xml: [{ fileName: 'statement.xml', contents: xml }], schema: [XSD], maxMemoryPages: 1024 });
  return r.valid ? [] : r.errors.map((e) => e.rawMessage);
}

export interface CamtParty {
  Pty?: { Nm?: string };
}
export interface CamtEntry {
  Amt: { '#text': string; '@_Ccy': string };
  CdtDbtInd: 'CRDT' | 'DBIT';
  Sts: { Cd: string };
  BookgDt: { DtTm?: string; Dt?: string };
  ValDt: { Dt?: string; DtTm?: string };
  AcctSvcrRef?: string;
  BkTxCd: { Domn?: { Cd: string; Fmly: { Cd: string; SubFmlyCd: string } }; Prtry?: { Cd: string; Issr?: string } };
  Chrgs?: {
    TtlChrgsAndTaxAmt?: { '#text': string };
    Rcrd: Array<{ Amt: { '#text': string }; CdtDbtInd?: string; ChrgInclInd?: string; Tax?: { Id?: string; Amt?: { '#text': string } } }>;
  };
  NtryDtls: {
    TxDtls: {
      Refs: { EndToEndId?: string; TxId?: string };
      Amt?: { '#text': string };
      CdtDbtInd?: string;
      RltdPties?: { Cdtr?: CamtParty; Dbtr?: CamtParty };
      LclInstrm?: { Prtry?: string };
      RmtInf?: { Ustrd: string[] };
      AddtlTxInf?: string;
    };
  };
  AddtlNtryInf?: string;
}
export interface CamtBalance {
  Tp: { CdOrPrtry: { Cd: string } };
  Amt: { '#text': string; '@_Ccy': string };
  CdtDbtInd: 'CRDT' | 'DBIT';
  Dt: { DtTm?: string; Dt?: string };
}
export interface CamtStatement {
  Id: string;
  ElctrncSeqNb?: string;
  CreDtTm: string;
  FrToDt: { FrDtTm: string; ToDtTm: string };
  Acct: {
    Id: { Othr: { Id: string } };
    Ccy: string;
    Nm?: string;
    Ownr: { Nm: string; Id: { OrgId: { Othr: { Id: string; SchmeNm: { Cd: string } } } } };
  };
  Bal: CamtBalance[];
  TxsSummry: {
    TtlNtries: { NbOfNtries: string; Sum: string; TtlNetNtry: { Amt: string; CdtDbtInd: string } };
    TtlCdtNtries: { NbOfNtries: string; Sum: string };
    TtlDbtNtries: { NbOfNtries: string; Sum: string };
  };
  Ntry: CamtEntry[];
  AddtlStmtInf?: string;
}
export interface Camt053 {
  namespace: string;
  GrpHdr: { MsgId: string; CreDtTm: string };
  Stmt: CamtStatement[];
}

/** fast-xml-parser's reading: every value a string (no number guessing), the repeatable elements always arrays. */
export function parseCamt053(xml: string): Camt053 {
  const wellFormed = XMLValidator.validate(xml);
  if (wellFormed !== true) throw new Error(`not well-formed XML: ${JSON.stringify(wellFormed.err)}`);
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: true,
    alwaysCreateTextNode: false,
    isArray: (name) => ['Stmt', 'Bal', 'Ntry', 'Ustrd', 'Rcrd'].includes(name),
  });
  const doc = parser.parse(xml) as { Document: { '@_xmlns': string; BkToCstmrStmt: Omit<Camt053, 'namespace'> } };
  return { namespace: doc.Document['@_xmlns'], ...doc.Document.BkToCstmrStmt, Stmt: doc.Document.BkToCstmrStmt.Stmt ?? [] };
}

/** A camt amount (`1234.56`: two decimals exactly, as the statement writes pesos) in centavos. */
export function camtCents(amount: string): bigint {
  if (!/^\d+\.\d{2}$/.test(amount)) throw new Error(`not an amount with two decimals: ${amount}`);
  return BigInt(amount.replace('.', ''));
}

/** An entry's or balance's signed amount in centavos (DBIT negative). */
export const signedCents = (x: { Amt: { '#text': string }; CdtDbtInd: string }): bigint => (x.CdtDbtInd === 'DBIT' ? -1n : 1n) * camtCents(x.Amt['#text']);

/** A balance of the statement by its type code (OPBD, CLBD, CLAV). */
export function camtBalance(st: CamtStatement, code: string): CamtBalance {
  const b = st.Bal.find((x) => x.Tp.CdOrPrtry.Cd === code);
  if (!b) throw new Error(`no ${code} balance`);
  return b;
}

interface JsonStatement {
  opening: { availableCents: string };
  closing: { availableCents: string };
  lines: Array<{ amountCents: string; postingId: string; movementId: string | null; reference: string | null }>;
}

/**
 * The checks every camt.053 statement passes against its JSON statement: OPBD + Σ CRDT − Σ DBIT =
 * CLBD, and the balances and each entry (amount, side, posting, movement, reference) the JSON's, in
 * order. Returns the parsed statement for more checks.
 */
export function expectCamtMatchesJson(xml: string, json: JsonStatement): CamtStatement {
  const camt = parseCamt053(xml);
  expect(camt.namespace).toBe('urn:iso:std:iso:20022:tech:xsd:camt.053.001.08');
  expect(camt.Stmt).toHaveLength(1);
  const st = camt.Stmt[0]!;
  const entries = st.Ntry ?? [];
  const opening = signedCents(camtBalance(st, 'OPBD'));
  const closing = signedCents(camtBalance(st, 'CLBD'));
  const credits = entries.filter((e) => e.CdtDbtInd === 'CRDT').reduce((s, e) => s + camtCents(e.Amt['#text']), 0n);
  const debits = entries.filter((e) => e.CdtDbtInd === 'DBIT').reduce((s, e) => s + camtCents(e.Amt['#text']), 0n);
  expect(opening + credits - debits).toBe(closing);
  expect(opening).toBe(BigInt(json.opening.availableCents));
  expect(closing).toBe(BigInt(json.closing.availableCents));
  expect(signedCents(camtBalance(st, 'CLAV'))).toBe(closing);
  expect(camtCents(st.TxsSummry.TtlCdtNtries.Sum)).toBe(credits);
  expect(camtCents(st.TxsSummry.TtlDbtNtries.Sum)).toBe(debits);
  expect(Number(st.TxsSummry.TtlNtries.NbOfNtries)).toBe(json.lines.length);
  const hex = (uuid: string) => uuid.replace(/-/g, '');
  expect(
    entries.map((e) => ({
      cents: signedCents(e).toString(),
      posting: e.AcctSvcrRef,
      tx: e.NtryDtls.TxDtls.Refs.TxId ?? null,
      endToEnd: e.NtryDtls.TxDtls.Refs.EndToEndId,
      status: e.Sts.Cd,
      ccy: e.Amt['@_Ccy'],
    })),
  ).toEqual(
    json.lines.map((l) => ({
      cents: l.amountCents,
      posting: hex(l.postingId),
      tx: l.movementId ? hex(l.movementId) : null,
      endToEnd: l.reference && l.reference.length <= 35 ? l.reference : expect.any(String),
      status: 'BOOK',
      ccy: 'COP',
    })),
  );
  for (const [i, l] of json.lines.entries()) if (!l.reference) expect(entries[i]!.NtryDtls.TxDtls.Refs.EndToEndId).toBe('NOTPROVIDED');
  return st;
}
