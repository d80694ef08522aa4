import { PDFParse } from 'pdf-parse';
import mt940 from 'mt940js';
import { bogotaInstant } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { camt053SchemaErrors, expectCamtMatchesJson } from '../support/camt053.js';
import { fetchDocumented } from '../support/openapi-check.js';
import { startStack } from '../support/stack.js';
import { SANDBOX_ACH_ACCOUNT, instantMark } from '../support/fixtures.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

async function pdfText(buf: Buffer): Promise<{ text: string; pages: number }> {
  const parser = new PDFParse({ data: buf });
  try {
    const r = await parser.getText();
    return { text: r.text, pages: r.total };
  } finally {
    await parser.destroy();
  }
}

/**
 * GET /wallets/statements through the real gateway, transfer service, ledger and sandbox rails: a
 * credit, a completed send and a failed one; the JSON, CSV, PDF, MT940 and camt.053 statements' opening + lines = closing,
 * both equal to GET /wallets/balance/history at `from` and `to`; company isolation; bad input.
 * Every answer is checked against the served /openapi.json by stack.http.
 */
describe('statements end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  let other: Awaited<ReturnType<Stack['provision']>>;

  const mark = instantMark;
  const enc = encodeURIComponent;
  const statement = (qs: string, key = co.readKey) => stack.http('GET', `/wallets/statements?${qs}`, { token: key });
  const history = async (rail: string, at: string, key = co.readKey) =>
    (await stack.http('GET', `/wallets/balance/history?rail=${rail}&at=${enc(at)}`, { token: key })).body;
  const settled = (id: string) =>
    eventually(
      async () => {
        const r = await stack.http('GET', `/wallets/transactions/${id}`, { token: co.readKey });
        return ['COMPLETED', 'FAILED'].includes(r.body?.status) ? r.body : undefined;
      },
      15_000,
      100,
    );
  const achBody = (amount: number, description: string) => ({
    amount,
    destination: {
      bankAccount: { ...SANDBOX_ACH_ACCOUNT },
    },
    description,
  });

  let t0: string;
  let tMid: string;
  let tEnd: string;
  let okId: string;
  let failedId: string;

  beforeAll(async () => {
    stack = await startStack({ transfers: true });
    co = await stack.provision('Extractos "Colombia" S.A.S.', { taxRegime: 'COMMON', nit: '900123456-7' });
    other = await stack.provision('Otra Empresa S.A.S.', { taxRegime: 'SIMPLE' });
    for (const c of [co, other]) await stack.admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('PUT', '/admin/fees/ACH_OUTFLOW', { fixedFeeCents: 300, variableBps: 0, companyId: co.id });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 500_000, reference: 'before-from' });
    t0 = await mark();
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 1_000_000, reference: 'in-range' });
    await stack.admin('POST', `/admin/companies/${other.id}/wallets/ACH/credit`, { amountCents: 333_333, reference: 'other' });
    const ok = await stack.http('POST', '/transfers/send', { token: co.writeKey, body: achBody(200_000, '=Pago; "proveedor"') });
    expect(ok.status).toBe(201);
    okId = ok.body.id;
    expect((await settled(okId)).status).toBe('COMPLETED');
    tMid = await mark();
    const bad = await stack.http('POST', '/transfers/send', { token: co.writeKey, body: achBody(100_013, 'Falla') }); // the sandbox fails amounts ending in 13
    failedId = bad.body.id;
    expect((await settled(failedId)).status).toBe('FAILED');
    tEnd = await mark();
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    const report = await stack.invariants();
    expect(report.violations).toEqual([]);
  });

  const total = (n: number) => n + 300 + 57; // ACH fee 300 + IVA 19% (57)

  it('JSON: opening + lines = closing, both the balance history; totals, fees, IVA, company, Bogotá dates', async () => {
    const r = await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}`);
    expect(r.status).toBe(200);
    const s = r.body;
    expect(s).toMatchObject({
      company: { name: 'Extractos "Colombia" S.A.S.', nit: '900123456-7' },
      rail: 'ACH',
      currency: 'COP',
      timezone: 'America/Bogota',
      from: t0,
      to: tEnd,
      opening: { availableCents: '500000', pendingOutCents: '0' },
    });
    expect(s.fromBogota).toBe(bogotaInstant(t0));
    expect(s.lines.map((l: any) => [l.entry, l.movementId, l.movementStatus, l.amountCents, l.feeCents, l.ivaCents])).toEqual([
      ['CREDIT', expect.any(String), 'COMPLETED', '1000000', '0', '0'],
      ['TRANSFER_OUT', okId, 'COMPLETED', String(-total(200_000)), '300', '57'],
      ['TRANSFER_OUT', failedId, 'FAILED', String(-total(100_013)), '300', '57'],
      ['TRANSFER_OUT_RETURNED', failedId, 'FAILED', String(total(100_013)), '-300', '-57'],
    ]);
    let running = BigInt(s.opening.availableCents);
    for (const l of s.lines) {
      running += BigInt(l.amountCents);
      expect(l.balanceAfterCents).toBe(running.toString());
    }
    expect(s.closing.availableCents).toBe(running.toString());
    const opening = await history('ACH', t0);
    const closing = await history('ACH', tEnd);
    expect(s.opening).toEqual({ availableCents: opening.availableCents, pendingOutCents: opening.pendingOutCents });
    expect(s.closing).toEqual({ availableCents: closing.availableCents, pendingOutCents: closing.pendingOutCents });
    expect(s.totals).toEqual({
      inCents: String(1_000_000 + total(100_013)),
      outCents: String(total(200_000) + total(100_013)),
      feesCents: '300',
      ivaCents: '57',
      lineCount: 4,
    });
    expect(s.lines[1]).toMatchObject({ counterparty: 'Ana María Pérez Gómez', description: '=Pago; "proveedor"' });
    // a split at tMid: the two statements chain
    const a = (await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tMid)}`)).body;
    const b = (await statement(`rail=ACH&from=${enc(tMid)}&to=${enc(tEnd)}`)).body;
    expect(a.closing).toEqual(b.opening);
    expect(a.lines.length + b.lines.length).toBe(4);
    expect(b.closing).toEqual(s.closing);
  });

  it("a line's own postedAt (microseconds) is a bound: statements chained at it hold every line once; the history and the listing at it count it", async () => {
    const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
    const all = (await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}`)).body.lines as Array<{
      postingId: string;
      postedAt: string;
      balanceAfterCents: string;
      movementId: string;
    }>;
    expect(all).toHaveLength(4);
    const ids = (ls: Array<{ postingId: string }>) => ls.map((l) => l.postingId);
    const csvCount = async (from: string, to: string) =>
      Number(/"Número de líneas";"(\d+)"/.exec((await statement(`rail=ACH&from=${enc(from)}&to=${enc(to)}&format=csv`)).text)![1]);
    for (const line of all) {
      expect(line.postedAt).toMatch(INSTANT);
      const upTo = all.filter((l) => l.postedAt <= line.postedAt); // one format: text order is time order
      const first = (await statement(`rail=ACH&from=${enc(t0)}&to=${enc(line.postedAt)}`)).body;
      const next = (await statement(`rail=ACH&from=${enc(line.postedAt)}&to=${enc(tEnd)}`)).body;
      expect(first.to).toBe(line.postedAt);
      expect(next.from).toBe(line.postedAt);
      expect(ids(first.lines)).toContain(line.postingId);
      expect(ids(next.lines)).not.toContain(line.postingId);
      expect(ids(first.lines)).toEqual(ids(upTo));
      expect([...ids(first.lines), ...ids(next.lines)]).toEqual(ids(all)); // every line exactly once
      expect(first.closing).toEqual(next.opening);
      expect(await csvCount(t0, line.postedAt)).toBe(upTo.length);
      expect(await csvCount(line.postedAt, tEnd)).toBe(all.length - upTo.length);
      const h = await history('ACH', line.postedAt);
      expect(h.at).toBe(line.postedAt);
      expect(h.availableCents).toBe(upTo[upTo.length - 1]!.balanceAfterCents);
    }
    // The listing's bounds are inclusive: a movement's own createdAt, as `to` or as `from`, keeps it.
    const items = (await stack.http('GET', '/wallets/transactions?limit=100', { token: co.readKey })).body.items as Array<{
      id: string;
      createdAt: string;
      completedAt: string | null;
    }>;
    expect(items.length).toBeGreaterThanOrEqual(4);
    const list = async (qs: string) =>
      ((await stack.http('GET', `/wallets/transactions?limit=100&${qs}`, { token: co.readKey })).body.items as Array<{ id: string }>).map((m) => m.id);
    for (const m of items) {
      expect(m.createdAt).toMatch(INSTANT);
      if (m.completedAt !== null) expect(m.completedAt).toMatch(INSTANT);
      expect(await list(`to=${enc(m.createdAt)}`)).toEqual(items.filter((x) => x.createdAt <= m.createdAt).map((x) => x.id));
      expect(await list(`from=${enc(m.createdAt)}`)).toEqual(items.filter((x) => x.createdAt >= m.createdAt).map((x) => x.id));
      expect(await list(`from=${enc(m.createdAt)}&to=${enc(m.createdAt)}`)).toEqual(items.filter((x) => x.createdAt === m.createdAt).map((x) => x.id));
    }
    // The send's movement is its TRANSFER_OUT line: the same instant in both.
    expect(items.find((m) => m.id === okId)!.createdAt).toBe(all.find((l) => l.movementId === okId)!.postedAt);
  });

  it('CSV: BOM, `;`, CRLF, pesos with a decimal comma, the same lines and balances as the JSON', async () => {
    const r = await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}&format=csv`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(r.headers.get('content-disposition')).toMatch(/^attachment; filename="extracto-ACH-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv"$/);
    // the bytes as a spreadsheet gets them (fetch's text() drops a BOM)
    const raw = await fetchDocumented(`${stack.gateway.url}/wallets/statements?rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}&format=csv`, {
      headers: { authorization: `Bearer ${co.readKey}` },
    });
    const bytes = Buffer.from(await raw.arrayBuffer());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.subarray(3).toString('utf8');
    expect(text).toBe(r.text);
    expect(text.endsWith('\r\n')).toBe(true);
    const rows = text.split('\r\n');
    const cells = (line: string) => line.split(/;(?=(?:[^"]*"[^"]*")*[^"]*$)/).map((c) => c.replace(/^"|"$/g, '').replace(/""/g, '"'));
    const kv = Object.fromEntries(rows.filter((l) => l && cells(l).length === 2).map((l) => cells(l)));
    expect(kv).toMatchObject({
      'Extracto de billetera': 'Extractos "Colombia" S.A.S.',
      NIT: '900123456-7',
      Billetera: 'ACH',
      'Saldo disponible inicial': '5000,00',
      'Saldo en tránsito inicial': '0,00',
      'Total entradas': '11003,70', // 1,000,000 + 100,370 centavos
      'Total comisiones': '3,00',
      'Total IVA': '0,57',
      'Número de líneas': '4',
    });
    const head = rows.findIndex((l) => l.startsWith('"Fecha (hora de Bogotá)"'));
    expect(head).toBeGreaterThan(0);
    const lines = rows.slice(head + 1, head + 5).map(cells);
    expect(lines.map((c) => [c[2], c[3], c[10], c[13]])).toEqual([
      ['CREDIT', expect.any(String), '10000,00', '15000,00'],
      ['TRANSFER_OUT', okId, '-2003,57', '12996,43'],
      ['TRANSFER_OUT', failedId, '-1003,70', '11992,73'],
      ['TRANSFER_OUT_RETURNED', failedId, '1003,70', '12996,43'],
    ]);
    expect(lines[1]![9]).toBe(`'=Pago; "proveedor"`); // a formula-looking text is defused
    expect(lines[0]![0]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const closing = await history('ACH', tEnd);
    expect(closing.availableCents).toBe('1299643');
    expect(kv['Saldo disponible final']).toBe('12996,43');
    expect(kv['Total salidas']).toBe('3007,27');
  });

  it('PDF: an attachment, in Spanish, with the company, NIT, Bogotá period, es-CO amounts, the lines, totals and closing balance', async () => {
    const raw = await fetchDocumented(`${stack.gateway.url}/wallets/statements?rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}&format=pdf`, {
      headers: { authorization: `Bearer ${co.readKey}` },
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('application/pdf');
    expect(raw.headers.get('content-disposition')).toMatch(/^attachment; filename="extracto-ACH-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.pdf"$/);
    expect(raw.headers.get('cache-control')).toBe('private, no-store');
    const bytes = Buffer.from(await raw.arrayBuffer());
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const { text, pages } = await pdfText(bytes);
    expect(pages).toBe(1);
    const bogota = (iso: string) => {
      const c = new Date(Date.parse(iso) - 5 * 3_600_000).toISOString();
      return `${c.slice(8, 10)}/${c.slice(5, 7)}/${c.slice(0, 4)} ${c.slice(11, 16)}`;
    };
    for (const s of [
      'Extractos "Colombia" S.A.S.',
      'NIT 900123456-7',
      'Billetera ACH',
      `${bogota(t0)} – ${bogota(tEnd)}`,
      '$ 5.000,00', // opening
      '$ 10.000,00',
      '$ 15.000,00', // the credit, and the balance after it
      'Transferencia enviada',
      'Ana María Pérez Gómez · =Pago; "proveedor"',
      '$ 2.003,57',
      '$ 12.996,43',
      'Devolución de transferencia fallida',
      '$ 1.003,70',
      'Total entradas',
      '$ 11.003,70',
      'Total salidas',
      '$ 3.007,27',
      'Total comisiones',
      '$ 3,00',
      'Total IVA',
      '$ 0,57',
      'Saldo disponible final',
      'Página 1 de 1',
    ])
      expect(text).toContain(s);
    // another company's PDF has none of it
    const theirs = await fetchDocumented(`${stack.gateway.url}/wallets/statements?rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}&format=pdf`, {
      headers: { authorization: `Bearer ${other.readKey}` },
    });
    const theirText = (await pdfText(Buffer.from(await theirs.arrayBuffer()))).text;
    expect(theirText).toContain('Otra Empresa S.A.S.');
    expect(theirText).not.toContain('Extractos');
    expect(theirText).toContain('$ 3.333,33');
  });

  it('MT940: parsed by an independent parser (mt940js), its balances and lines the JSON statement’s', async () => {
    const json = (await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}`)).body;
    const raw = await fetchDocumented(`${stack.gateway.url}/wallets/statements?rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}&format=mt940`, {
      headers: { authorization: `Bearer ${co.readKey}` },
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('text/plain; charset=us-ascii');
    expect(raw.headers.get('content-disposition')).toMatch(/^attachment; filename="extracto-ACH-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.sta"$/);
    const text = await raw.text();
    expect(/^[\x20-\x7e\r\n]*$/.test(text)).toBe(true); // the SWIFT character set: no accents, no control characters but CRLF
    // The parser checks the required tags, one currency, and opening balance + turnover = closing balance (it throws otherwise).
    const parsed = new mt940.Parser().parse(text);
    expect(parsed).toHaveLength(1);
    const st = parsed[0]!;
    const pesos = (cents: string) => Number(cents) / 100;
    expect(st.accountIdentification).toBe('900123456-7/ACH');
    expect(st.currency).toBe('COP');
    expect(st.openingBalance).toBeCloseTo(pesos(json.opening.availableCents), 2);
    expect(st.closingBalance).toBeCloseTo(pesos(json.closing.availableCents), 2);
    expect(st.transactions.map((t: { amount: number }) => t.amount)).toEqual(json.lines.map((l: { amountCents: string }) => pesos(l.amountCents)));
    expect(st.transactions.map((t: { transactionType: string }) => t.transactionType)).toEqual(['NMSC', 'NTRF', 'NTRF', 'NRTI']);
    expect(st.transactions[1]!.details).toContain('TRANSFERENCIA ENVIADA');
    expect(st.transactions[1]!.details).toContain('Ana Maria Perez Gomez'); // accents dropped, as SWIFT's x set has none
  });

  it('camt.053: valid against the published XSD (libxml2), read back by an independent parser, its balances and entries the JSON statement’s', async () => {
    const json = (await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}`)).body;
    const raw = await fetchDocumented(`${stack.gateway.url}/wallets/statements?rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}&format=camt053`, {
      headers: { authorization: `Bearer ${co.readKey}` },
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(raw.headers.get('content-disposition')).toMatch(/^attachment; filename="extracto-ACH-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.xml"$/);
    expect(raw.headers.get('cache-control')).toBe('private, no-store');
    const xml = await raw.text();
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expect(await camt053SchemaErrors(xml)).toEqual([]);
    const st = expectCamtMatchesJson(xml, json);
    expect(st.Acct).toMatchObject({
      Id: { Othr: { Id: '900123456-7/ACH' } },
      Ccy: 'COP',
      Ownr: { Nm: 'Extractos "Colombia" S.A.S.', Id: { OrgId: { Othr: { Id: '900123456-7', SchmeNm: { Cd: 'TXID' } } } } },
    });
    expect(st.FrToDt).toEqual({ FrDtTm: json.fromBogota, ToDtTm: json.toBogota });
    const codes = st.Ntry.map((e) => [e.BkTxCd.Prtry?.Cd, `${e.BkTxCd.Domn?.Cd}/${e.BkTxCd.Domn?.Fmly.Cd}/${e.BkTxCd.Domn?.Fmly.SubFmlyCd}`, e.CdtDbtInd]);
    expect(codes).toEqual([
      ['CREDIT', 'PMNT/MCOP/OTHR', 'CRDT'],
      ['TRANSFER_OUT', 'PMNT/ICDT/ACDT', 'DBIT'],
      ['TRANSFER_OUT', 'PMNT/ICDT/ACDT', 'DBIT'],
      ['TRANSFER_OUT_RETURNED', 'PMNT/ICDT/RRTN', 'CRDT'],
    ]);
    const send = st.Ntry[1]!;
    expect(send.NtryDtls.TxDtls.RltdPties?.Cdtr?.Pty?.Nm).toBe('Ana María Pérez Gómez'); // UTF-8: the accents kept
    expect(send.NtryDtls.TxDtls.RmtInf?.Ustrd).toEqual(['=Pago; "proveedor"']);
    expect(send.BookgDt.DtTm).toBe(json.lines[1].postedAtBogota);
    // the fee and its IVA, included in the entry's amount; given back on the failed send's return
    expect(send.Chrgs).toMatchObject({
      TtlChrgsAndTaxAmt: { '#text': '3.57' },
      Rcrd: [{ Amt: { '#text': '3.00' }, CdtDbtInd: 'DBIT', Tax: { Amt: { '#text': '0.57' } } }],
    });
    expect(st.Ntry[3]!.Chrgs?.Rcrd[0]).toMatchObject({ Amt: { '#text': '3.00' }, CdtDbtInd: 'CRDT' });
  });

  it("never shows another company's lines", async () => {
    const s = (await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}`, other.readKey)).body;
    expect(s.company.name).toBe('Otra Empresa S.A.S.');
    expect(s.lines.map((l: any) => [l.entry, l.amountCents])).toEqual([['CREDIT', '333333']]);
    expect(s.closing.availableCents).toBe('333333');
    const csv = await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}&format=csv`, other.readKey);
    expect(csv.text).not.toContain(okId);
    expect(csv.text).not.toContain('Extractos');
  });

  it('bare dates are Bogotá days; a READ key is enough; no key → 401; a wallet the company lacks → 404', async () => {
    const today = new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 29 * 3_600_000).toISOString().slice(0, 10);
    const d = await statement(`rail=ACH&from=${yesterday}&to=${enc(tEnd)}`);
    expect(d.status).toBe(200);
    expect(d.body.fromBogota).toBe(`${yesterday}T00:00:00.000000-05:00`);
    expect(d.body.lines.length).toBeGreaterThanOrEqual(5); // the credit before t0 too
    expect(today).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect((await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}`, co.writeKey)).status).toBe(200);
    const none = await stack.http('GET', `/wallets/statements?rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}`);
    expect(none.status).toBe(401);
    const brebOnly = await stack.provision('Solo Breb S.A.S.', { wallets: ['BREB'] });
    const missing = await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}`, brebOnly.readKey);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('WALLET_NOT_PROVISIONED');
    const missingCsv = await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}&format=csv`, brebOnly.readKey);
    expect(missingCsv.status).toBe(404);
    const missingPdf = await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}&format=pdf`, brebOnly.readKey);
    expect(missingPdf.status).toBe(404);
    expect(missingPdf.body.error).toBe('WALLET_NOT_PROVISIONED');
    const missingCamt = await statement(`rail=ACH&from=${enc(t0)}&to=${enc(tEnd)}&format=camt053`, brebOnly.readKey);
    expect([missingCamt.status, missingCamt.body.error]).toEqual([404, 'WALLET_NOT_PROVISIONED']);
  });

  it('bad input: 400 for missing or malformed parameters, 422 for from ≥ to, the future, over 366 days (in every format)', async () => {
    const from = enc(t0);
    const to = enc(tEnd);
    for (const qs of [
      `from=${from}&to=${to}`,
      `rail=ACH&to=${to}`,
      `rail=ACH&from=${from}`,
      `rail=PSE&from=${from}&to=${to}`,
      `rail=ACH&from=ayer&to=${to}`,
      `rail=ACH&from=2026-02-30&to=${to}`,
      `rail=ACH&from=2026-11-21T10:00:00&to=${to}`,
      `rail=ACH&from=${from}&to=${to}&format=xlsx`,
      `rail=ACH&from=${from}&to=${to}&format=camt054`,
      `rail=ACH&from=${from}&to=${to}&extra=1`,
      `rail=ACH&from=${from}&from=${from}&to=${to}`,
    ]) {
      const r = await statement(qs);
      expect({ qs, status: r.status, error: r.body?.error }).toEqual({ qs, status: 400, error: 'INVALID_REQUEST' });
    }
    const future = enc(new Date(Date.now() + 3_600_000).toISOString());
    for (const [qs, pattern] of [
      [`rail=ACH&from=${to}&to=${from}`, /anterior/],
      [`rail=ACH&from=${from}&to=${from}`, /anterior/],
      [`rail=ACH&from=${from}&to=${future}`, /futuro/],
      ['rail=ACH&from=2024-01-01&to=2025-01-02', /366 días/],
      [`rail=ACH&from=${to}&to=${from}&format=pdf`, /anterior/],
      [`rail=ACH&from=${from}&to=${future}&format=csv`, /futuro/],
      [`rail=ACH&from=${to}&to=${from}&format=camt053`, /anterior/],
    ] as const) {
      const r = await statement(qs);
      expect({ qs, status: r.status, error: r.body?.error }).toEqual({ qs, status: 422, error: 'VALIDATION_ERROR' });
      expect(r.body.message).toMatch(pattern);
    }
    expect((await statement('rail=ACH&from=2024-01-01&to=2025-01-01')).status).toBe(200); // 366 days exactly
  });
});
