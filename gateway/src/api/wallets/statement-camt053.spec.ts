import { STATEMENT_ENTRIES } from './schemas.js';
import type { StatementDocument, StatementLineView } from './statement.js';
import { bankTransactionCode, CAMT053_NAMESPACE, camt053Parts, camt053Stream, decimal, statementCamt053 } from './statement-camt053.js';
import { MT940_TYPES, statementMt940 } from './statement-mt940.js';

/**
 * The camt.053 writer on statements built here (the XSD validation and an independent parser's reading
 * are in test/e2e/statements*.test.ts): every entry has an ISO bank transaction code and an MT940
 * type, amounts, escaping, text limits.
 */
const line = (over: Partial<StatementLineView>): StatementLineView => ({
  postingId: '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b',
  postedAt: '2026-11-28T16:39:52.123456Z',
  postedAtBogota: '2026-11-28T11:39:52.123456-05:00',
  entry: 'CREDIT',
  movementId: '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d',
  movementType: 'BALANCE_ADD',
  movementRail: 'ACH',
  movementStatus: 'COMPLETED',
  reference: null,
  counterparty: null,
  description: null,
  amountCents: '100',
  feeCents: '0',
  ivaCents: '0',
  balanceAfterCents: '100',
  ...over,
});

function doc(lines: StatementLineView[], opening = 0n, over: Partial<StatementDocument> = {}): StatementDocument {
  const sum = lines.reduce((s, l) => s + BigInt(l.amountCents), 0n);
  const inCents = lines.filter((l) => BigInt(l.amountCents) > 0n).reduce((s, l) => s + BigInt(l.amountCents), 0n);
  return {
    company: { name: 'Empresa S.A.S.', nit: '900000001-1' },
    rail: 'ACH',
    currency: 'COP',
    timezone: 'America/Bogota',
    from: '2026-11-01T05:00:00.000000Z',
    to: '2026-12-01T05:00:00.000000Z',
    fromBogota: '2026-11-01T00:00:00.000000-05:00',
    toBogota: '2026-12-01T00:00:00.000000-05:00',
    opening: { availableCents: opening.toString(), pendingOutCents: '0' },
    closing: { availableCents: (opening + sum).toString(), pendingOutCents: '0' },
    totals: { inCents: inCents.toString(), outCents: (inCents - sum).toString(), feesCents: '0', ivaCents: '0', lineCount: lines.length },
    lines,
    journalHeads: [],
    ...over,
  };
}
const opts = { generatedAt: new Date('2026-12-01T14:00:00Z'), messageId: 'm1' };

describe('statementCamt053', () => {
  it('gives every entry of the JSON statement an ISO bank transaction code and an MT940 type', () => {
    // SWIFT's :61: type codes used, and the ISO families / sub-families (external code list) used.
    const families = ['ICDT', 'RCDT', 'MCOP', 'MDOP'];
    const subFamilies = ['DMCT', 'ACDT', 'RRTN', 'COAT', 'FEES', 'ADJT', 'OTHR'];
    for (const entry of STATEMENT_ENTRIES) {
      for (const amountCents of ['100', '-100']) {
        const c = bankTransactionCode(line({ entry, amountCents }));
        expect({ entry, domain: c.domain, family: families.includes(c.family), sub: subFamilies.includes(c.subFamily) }).toEqual({
          entry,
          domain: 'PMNT',
          family: true,
          sub: true,
        });
      }
      expect(['TRF', 'RTI', 'CHG', 'MSC']).toContain(MT940_TYPES[entry]);
    }
    // The rail names the sub-family of a transfer; a move is an own-account transfer; a correction's family follows its sign.
    expect(bankTransactionCode(line({ entry: 'TRANSFER_OUT', movementRail: 'BREB', amountCents: '-1' }))).toEqual({
      domain: 'PMNT',
      family: 'ICDT',
      subFamily: 'DMCT',
    });
    expect(bankTransactionCode(line({ entry: 'TRANSFER_OUT', movementRail: 'ACH', amountCents: '-1' }))).toEqual({
      domain: 'PMNT',
      family: 'ICDT',
      subFamily: 'ACDT',
    });
    expect(bankTransactionCode(line({ entry: 'WALLET_MOVE_IN' })).subFamily).toBe('COAT');
    expect(bankTransactionCode(line({ entry: 'CORRECTION', amountCents: '-5' })).family).toBe('MDOP');
    expect(bankTransactionCode(line({ entry: 'CORRECTION', amountCents: '5' })).family).toBe('MCOP');
    expect(bankTransactionCode(line({ entry: 'SOMETHING_NEW', amountCents: '-5' }))).toEqual({ domain: 'PMNT', family: 'MDOP', subFamily: 'OTHR' });
  });

  it('writes pesos with a decimal point and two decimals, unsigned, the side in CdtDbtInd', () => {
    expect([decimal(0n), decimal(5n), decimal(-123456n), decimal(-123456n, true), decimal(10_000_000_000_000n)]).toEqual([
      '0.00',
      '0.05',
      '1234.56',
      '-1234.56',
      '100000000000.00',
    ]);
    const xml = statementCamt053(doc([line({ entry: 'TRANSFER_OUT', amountCents: '-200357', feeCents: '300', ivaCents: '57' })], -5n), opts);
    expect(xml).toContain(`<Document xmlns="${CAMT053_NAMESPACE}">`);
    expect(xml).toMatch(/<Cd>OPBD<\/Cd>\s*<\/CdOrPrtry>\s*<\/Tp>\s*<Amt Ccy="COP">0\.05<\/Amt>\s*<CdtDbtInd>DBIT<\/CdtDbtInd>/);
    expect(xml).toMatch(/<Ntry>\s*<Amt Ccy="COP">2003\.57<\/Amt>\s*<CdtDbtInd>DBIT<\/CdtDbtInd>/);
    expect(xml).toMatch(/<TtlChrgsAndTaxAmt Ccy="COP">3\.57<\/TtlChrgsAndTaxAmt>/);
    expect(xml).toContain('<EndToEndId>NOTPROVIDED</EndToEndId>');
    expect(xml).toContain('<TxId>0b1c2d3e4f504a6b8c7d9e0f1a2b3c4d</TxId>');
    expect(xml).toContain('<AcctSvcrRef>6f1d2c3b4a5e4f608a7b9c0d1e2f3a4b</AcctSvcrRef>');
    expect(xml).toContain('<Id>ACH-20261101000000-20261201000000</Id>');
    expect(xml).toContain('<CreDtTm>2026-12-01T09:00:00.000-05:00</CreDtTm>');
  });

  it('escapes markup, drops what XML cannot carry, cuts text to the XSD lengths by characters', () => {
    const xml = statementCamt053(
      doc(
        [
          line({
            entry: 'TRANSFER_OUT',
            amountCents: '-1',
            reference: `<r&f>${'x'.repeat(40)}`,
            counterparty: `Ana \u0000 "<B>" ${'🚀'.repeat(200)}`,
            description: 'Pago\u0007 & más',
          }),
        ],
        0n,
        { company: { name: 'A & B <S.A.S.>', nit: '900000001-1' } },
      ),
      opts,
    );
    expect(xml).toContain('<Nm>A &amp; B &lt;S.A.S.&gt;</Nm>');
    expect(xml).toContain(`<EndToEndId>&lt;r&amp;f&gt;${'x'.repeat(30)}</EndToEndId>`); // 35 characters
    expect(xml).toContain('<Ustrd>Pago &amp; más</Ustrd>');
    expect(xml).not.toMatch(/[\u0000-\u0008]/);
    const escaped = /<Cdtr>\s*<Pty>\s*<Nm>([^<]*)<\/Nm>/.exec(xml)![1]!;
    const name = escaped.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    expect(name.startsWith('Ana "<B>" 🚀')).toBe(true); // the NUL gone, the spaces around it one
    expect(Array.from(name)).toHaveLength(140); // Max140Text counts characters: no emoji cut in half
    expect(name.endsWith('🚀')).toBe(true);
  });

  it('is written in parts, 100 entries each, in place between the totals and the closing text; the stream is the same bytes', async () => {
    const lines = Array.from({ length: 250 }, (_, i) => line({ amountCents: String(i + 1), reference: `r${i}` }));
    const d = doc(lines);
    const parts = Array.from(camt053Parts(d, opts));
    expect(parts).toHaveLength(5); // before, 100 + 100 + 50 entries, after
    expect(parts.slice(1, 4).map((p) => p.match(/<Ntry>/g)!.length)).toEqual([100, 100, 50]);
    const xml = parts.join('');
    expect(xml).not.toContain('<!--');
    expect(xml).toMatch(/<\/TxsSummry>\n {6}<Ntry>\n {8}<Amt Ccy="COP">0\.01<\/Amt>/);
    expect(xml).toMatch(/<EndToEndId>r249<\/EndToEndId>[\s\S]*<\/Ntry>\n {6}<AddtlStmtInf>/);
    expect(xml).not.toMatch(/xmlns=""/);
    let streamed = '';
    for await (const chunk of camt053Stream(d, opts)) streamed += chunk.toString();
    expect(streamed).toBe(statementCamt053(d, opts));
    expect(streamed).toBe(xml);
  });

  it('is one Stmt with no Ntry for an empty period, its totals zero', () => {
    const xml = statementCamt053(doc([], 1234n), opts);
    expect(xml).not.toContain('<Ntry>');
    expect(xml).toMatch(/<TtlNtries>\s*<NbOfNtries>0<\/NbOfNtries>\s*<Sum>0\.00<\/Sum>/);
    expect(xml.match(/<Amt Ccy="COP">12\.34<\/Amt>/g)).toHaveLength(3); // OPBD, CLBD, CLAV
  });
});

describe("the journal's daily head in the bank formats (docs/journal.md)", () => {
  const head = { day: '2026-11-30', seq: '48213', hash: 'ab'.repeat(32) };
  const withHead = doc([line({})], 0n, { journalHeads: [{ day: '2026-11-29', seq: '48000', hash: 'cd'.repeat(32) }, head] });

  it("MT940: the period's last head in a closing :86: after the balances (mt940js reads it: test/e2e/statements-all-kinds)", () => {
    const text = statementMt940(withHead);
    const tail = text.slice(text.indexOf(':64:')).split('\r\n');
    expect(tail.slice(1, -2).join('')).toBe(`:86:Diario contable sellado al cierre del 2026-11-30: posicion 48213, SHA-256 ${head.hash}`);
    expect(tail.slice(1, -2).every((l) => l.length <= 69)).toBe(true); // 65 characters, the first line after its tag
    expect(text).not.toContain('cd'.repeat(32));
    // none recorded (a statement of today): no closing :86:
    const none = statementMt940(doc([line({})]));
    expect(none.slice(none.indexOf(':64:')).split('\r\n')[1]).toBe('-');
  });

  it("camt.053: the period's last head in AddtlStmtInf, after the balances in transit", () => {
    const xml = statementCamt053(withHead, opts);
    const info = /<AddtlStmtInf>([^<]*)<\/AddtlStmtInf>/.exec(xml)![1]!;
    expect(info).toMatch(
      /^Periodo \(desde, hasta\]: .* Saldo en tránsito .*\. Diario contable sellado al cierre del 2026-11-30: posición 48213, SHA-256 (ab){32}\.$/,
    );
    expect(info.length).toBeLessThanOrEqual(500);
    expect(/<AddtlStmtInf>([^<]*)<\/AddtlStmtInf>/.exec(statementCamt053(doc([line({})]), opts))![1]).not.toContain('Diario');
  });
});
