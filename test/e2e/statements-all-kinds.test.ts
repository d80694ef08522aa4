import { randomUUID } from 'node:crypto';
import mt940 from 'mt940js';
import pg from 'pg';
import { createAsyncClient, devMeshTls, instantFromDate, signPayload } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import { eventually } from '@wallet/platform/testing';
import { STATEMENT_ENTRIES, statementCamt053, statementMt940, type StatementDocument } from '@wallet/gateway/testing';
import { camt053SchemaErrors, camtCents, expectCamtMatchesJson, parseCamt053, signedCents, type CamtEntry } from '../support/camt053.js';
import { fetchDocumented } from '../support/openapi-check.js';
import { startStack } from '../support/stack.js';
import { PSE_PAYER, SANDBOX_ACH_ACCOUNT, instantMark } from '../support/fixtures.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Line = StatementDocument['lines'][number];

/** What each entry is in both bank formats (docs/statements.md): camt's ISO bank transaction code, MT940's `:61:` type. */
const CODES: Record<string, { camt: (rail: string | null, debit: boolean) => string; mt940: string }> = {
  CREDIT: { camt: () => 'PMNT/MCOP/OTHR', mt940: 'NMSC' },
  FEE_CHARGE: { camt: () => 'PMNT/MDOP/FEES', mt940: 'NCHG' },
  TRANSFER_OUT: { camt: (rail) => `PMNT/ICDT/${rail === 'ACH' ? 'ACDT' : 'DMCT'}`, mt940: 'NTRF' },
  TRANSFER_OUT_RETURNED: { camt: () => 'PMNT/ICDT/RRTN', mt940: 'NRTI' },
  TRANSFER_IN: { camt: (rail) => `PMNT/RCDT/${rail === 'ACH' ? 'ACDT' : 'DMCT'}`, mt940: 'NTRF' },
  TRANSFER_IN_REVERSED: { camt: () => 'PMNT/RCDT/RRTN', mt940: 'NRTI' },
  CORRECTION: { camt: (_rail, debit) => `PMNT/${debit ? 'MDOP' : 'MCOP'}/ADJT`, mt940: 'NMSC' },
  WALLET_MOVE_OUT: { camt: () => 'PMNT/ICDT/COAT', mt940: 'NTRF' },
  WALLET_MOVE_IN: { camt: () => 'PMNT/RCDT/COAT', mt940: 'NTRF' },
};
/** Text as XML 1.0 can carry it: a control character a space, spaces collapsed (what the gateway writes). */
const tame = (s: string) =>
  s
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
const domain = (e: CamtEntry) => `${e.BkTxCd.Domn?.Cd}/${e.BkTxCd.Domn?.Fmly.Cd}/${e.BkTxCd.Domn?.Fmly.SubFmlyCd}`;

/** Both bank formats of one statement, each read by its independent tool, checked against the JSON statement. */
async function checkBankFormats(json: StatementDocument, camtXml: string, mt940Text: string) {
  expect(await camt053SchemaErrors(camtXml)).toEqual([]);
  const st = expectCamtMatchesJson(camtXml, json);
  st.Ntry.forEach((e, i) => {
    const l = json.lines[i]!;
    const debit = BigInt(l.amountCents) < 0n;
    expect({ entry: l.entry, code: domain(e), prtry: e.BkTxCd.Prtry }).toEqual({
      entry: l.entry,
      code: CODES[l.entry]!.camt(l.movementRail, debit),
      prtry: { Cd: l.entry, Issr: 'WALLET' },
    });
    const tx = e.NtryDtls.TxDtls;
    // The counterparty: the creditor of a send (and of its money back), the debtor of an inflow (and of its reversal).
    const role = { TRANSFER_OUT: 'Cdtr', TRANSFER_OUT_RETURNED: 'Cdtr', TRANSFER_IN: 'Dbtr', TRANSFER_IN_REVERSED: 'Dbtr' }[l.entry] as
      'Cdtr' | 'Dbtr' | undefined;
    if (role && l.counterparty) expect(tx.RltdPties).toEqual({ [role]: { Pty: { Nm: tame(l.counterparty) } } });
    else expect(tx.RltdPties).toBeUndefined();
    expect((tx.RmtInf?.Ustrd ?? []).join('')).toBe(tame(l.description ?? ''));
    expect(tx.LclInstrm?.Prtry ?? null).toBe(l.movementRail);
    const charged = BigInt(l.feeCents) + BigInt(l.ivaCents);
    if (charged === 0n) expect(e.Chrgs).toBeUndefined();
    else expect(camtCents(e.Chrgs!.TtlChrgsAndTaxAmt!['#text'])).toBe(charged < 0n ? -charged : charged);
  });

  const parsed = new mt940.Parser().parse(mt940Text); // throws unless opening + turnover = closing
  expect(parsed).toHaveLength(1);
  const m = parsed[0]!;
  const cents = (pesos: number) => BigInt(Math.round(pesos * 100));
  expect(cents(m.openingBalance)).toBe(BigInt(json.opening.availableCents));
  expect(cents(m.closingBalance)).toBe(BigInt(json.closing.availableCents));
  expect(m.transactions.map((t) => [cents(t.amount).toString(), t.transactionType])).toEqual(json.lines.map((l) => [l.amountCents, CODES[l.entry]!.mt940]));
  return st;
}

/**
 * A statement with every kind of movement the product makes, through the real stack (gateway,
 * transfer, pse-deposit, collect-key, ledger, sandbox rails): credits, completed sends on Bre-B and
 * ACH with fees, a failed send and its money back, PSE payments (one reversed by the provider and
 * one partly refunded), an inbound Bre-B payment to a collect key and its partial return, a move
 * between the company's wallets, a fee charged alone, and a payout the rail made after we released
 * it, written off by an operator. Both wallets' statements in JSON, camt.053 (XSD-validated by
 * libxml2, read by fast-xml-parser) and MT940 (read by mt940js): balances and lines equal.
 *
 * FEE_CHARGE: no flow of the product asks for one (no route of the gateway, /admin included, and no
 * service calls the ledger's ChargeFee RPC; its access policy admits only the `transfer` identity,
 * not an operator's `ops` nor `gateway:admin`). So the real ChargeFee RPC is called here over the
 * mesh as its one admitted caller would (the `transfer` client certificate, the company in the call
 * metadata): a real FEE_CHARGE movement and posting, read back through the gateway's statement.
 *
 * CORRECTION: the product's only correcting entry of a company is an operator's write-off of a
 * payout the rail made after we released it (POST /admin/exceptions/{id}/resolve `write_off`, posted
 * by the transfer service with the ledger's PostCorrection, kind `correction`); it moves
 * operational_losses against rail_clearing, no wallet of the company (the company keeps its refund),
 * so it is no statement line: one is made here and the statement is shown to hold none. No RPC of
 * the ledger posts a correction on a wallet (PostCorrection's one type is WRITE_OFF_PAYOUT;
 * PostClearingAdjustment and ReverseCorrection move clearing accounts only), so a CORRECTION line,
 * each way, is checked only on the statement built from JSON lines in the last case.
 */
describe('a statement with every kind of movement, in camt.053 and MT940', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const NIT = '901234567-8';
  const mark = instantMark;
  const enc = encodeURIComponent;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => stack.http('POST', path, { token: co.writeKey, body, headers });
  const get = (path: string) => stack.http('GET', path, { token: co.readKey });
  const settled = (id: string) =>
    eventually(
      async () => {
        const r = await get(`/wallets/transactions/${id}`);
        return ['COMPLETED', 'FAILED'].includes(r.body?.status) ? r.body : undefined;
      },
      20_000,
      100,
    );
  const deposit = (id: string, status: string) =>
    eventually(async () => ((await get('/deposits?limit=100')).body.deposits ?? []).find((d: any) => d.id === id && d.status === status), 20_000, 100);
  const sandbox = (path: string, body?: unknown) =>
    fetch(`${stack.sandbox!.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const files = async (rail: string) => {
    const qs = `rail=${rail}&from=${enc(t0)}&to=${enc(tEnd)}`;
    const json = (await get(`/wallets/statements?${qs}`)).body as StatementDocument;
    const fetchFile = async (format: string) => {
      const r = await fetchDocumented(`${stack.gateway.url}/wallets/statements?${qs}&format=${format}`, { headers: { authorization: `Bearer ${co.readKey}` } });
      expect(r.status).toBe(200);
      return r.text();
    };
    return { json, camt: await fetchFile('camt053'), mt940: await fetchFile('mt940') };
  };

  let t0: string;
  let tEnd: string;
  const ids: Record<string, string> = {};
  const ACH_DESCRIPTION = 'Factura <77> & "cía" — pago';
  let sql: pg.Client;
  /** The ledger over the mesh as the transfer service calls it (the one identity ChargeFee admits). */
  let asTransfer: Stack['ledgerClient'];
  let writeOff: { exceptionId: string; transferId: string };

  beforeAll(async () => {
    // The Bre-B rail confirms after 4 s: time to fail a send on our side (a signed callback) before the rail pays it.
    stack = await startStack({ transfers: true, deposits: true, collectKeys: true, sandboxEnv: { SANDBOX_BREB_CONFIRM_MS: '4000' } });
    sql = new pg.Client({ connectionString: stack.databaseUrl });
    await sql.connect();
    asTransfer = createAsyncClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, stack.ledger.address, {
      mesh: { tls: devMeshTls('transfer'), server: 'ledger' },
    });
    co = await stack.provision('Todo Tipo de Movimientos S.A.S.', { taxRegime: 'COMMON', nit: NIT });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    for (const [op, fee] of [
      ['ACH_OUTFLOW', { fixedFeeCents: 300, variableBps: 0 }],
      ['BREB_OUTFLOW', { fixedFeeCents: 100, variableBps: 0 }],
      ['PSE_INFLOW', { fixedFeeCents: 1_000, variableBps: 100 }],
      ['BREB_INFLOW', { fixedFeeCents: 1_000, variableBps: 0 }],
    ] as const) {
      expect((await stack.admin('PUT', `/admin/fees/${op}`, { ...fee, companyId: co.id })).status).toBe(200);
    }
    t0 = await mark();

    // Operator credits (CREDIT) on both wallets.
    for (const [rail, amountCents] of [
      ['ACH', 2_000_000],
      ['BREB', 1_000_000],
    ] as const) {
      expect((await stack.admin('POST', `/admin/companies/${co.id}/wallets/${rail}/credit`, { amountCents, reference: `fondeo-${rail}` })).status).toBe(201);
    }
    // ACH sends: one completed, one failed by the rail (amounts ending in 13): TRANSFER_OUT, TRANSFER_OUT_RETURNED.
    const achOk = await post('/transfers/send', {
      amount: 200_000,
      reference: 'pago-ach-77',
      destination: { bankAccount: { ...SANDBOX_ACH_ACCOUNT } },
      description: ACH_DESCRIPTION,
    });
    expect(achOk.status).toBe(201);
    ids.achOk = achOk.body.id;
    expect((await settled(ids.achOk!)).status).toBe('COMPLETED');
    const achBad = await post('/transfers/send', { amount: 100_013, destination: { bankAccount: { ...SANDBOX_ACH_ACCOUNT } }, description: 'Falla' });
    expect(achBad.status).toBe(201);
    ids.achBad = achBad.body.id;
    expect((await settled(ids.achBad!)).status).toBe('FAILED');
    // A Bre-B send to a key.
    const key = await post('/transfers/resolve-key', { keyValue: '3001234567' });
    expect(key.status).toBe(200);
    const breb = await post('/transfers/send', {
      amount: 50_000,
      reference: 'pago-breb-1',
      destination: { brebKey: { type: key.body.keyType, value: key.body.keyValue } },
      targetName: key.body.recipient.fullName,
      targetDocument: key.body.recipient.idValue,
      description: 'Anticipo',
    });
    expect(breb.status).toBe(201);
    ids.breb = breb.body.id;
    expect((await settled(ids.breb!)).status).toBe('COMPLETED');
    // A Bre-B send our side fails first (a signed FAILED callback: its money back), which the rail then
    // pays: a RAIL_COMPLETED_AFTER_RELEASE exception, written off below once the rail has paid.
    const late = await post('/transfers/send', {
      amount: 20_000,
      reference: 'pago-breb-tarde',
      destination: { brebKey: { type: key.body.keyType, value: key.body.keyValue } },
      targetName: key.body.recipient.fullName,
      targetDocument: key.body.recipient.idValue,
    });
    expect(late.status).toBe(201);
    ids.late = late.body.id;
    const providerId = await eventually(
      async () =>
        (await sql.query(`select provider_transfer_id from transfer.transfers where id = $1`, [ids.late])).rows[0]?.provider_transfer_id as string | undefined,
      10_000,
      50,
    );
    const failed = JSON.stringify({
      eventId: `evt-${randomUUID()}`,
      transactionId: ids.late,
      providerTransferId: providerId,
      rail: 'BREB',
      status: 'FAILED',
      errorMessage: 'Rechazada',
      occurredAt: new Date().toISOString(),
    });
    const cb = await fetch(`${stack.gateway.url}/webhooks/rails/breb`, {
      method: 'POST',
      body: failed,
      headers: { 'content-type': 'application/json', 'x-provider-signature': signPayload('dev-rail-callback-secret', failed, Math.floor(Date.now() / 1000)) },
    });
    expect(cb.status).toBe(200);
    expect((await settled(ids.late!)).status).toBe('FAILED');
    // PSE payments to the ACH wallet: one paid (then partly refunded), one paid then reversed by the provider.
    for (const [name, amountCents] of [
      ['pseA', 500_000],
      ['pseB', 300_000],
    ] as const) {
      const link = await post('/deposits/pse', { amountCents, ...PSE_PAYER, internalRef: `pedido-${name}` });
      expect(link.status).toBe(201);
      ids[name] = link.body.id;
      expect((await sandbox(`/sandbox/pse/${link.body.id}/pay`, { outcome: 'APPROVED', payerBank: 'Bancolombia' })).status).toBe(200);
      await deposit(link.body.id, 'ASSIGNED');
    }
    expect((await sandbox(`/sandbox/pse/${ids.pseB}/reverse`)).status).toBe(200);
    await deposit(ids.pseB!, 'REVERSED');
    // An inbound Bre-B payment to a collect key, then part of it returned to the payer.
    const ck = await post('/breb/collect-keys', { externalId: 'cliente-todo', name: 'Cliente Todo' });
    expect(ck.status).toBe(201);
    const incoming = await sandbox('/sandbox/breb/incoming', {
      keyValue: ck.body.key.value,
      amountCents: 80_000,
      payerName: 'Pedro Pérez',
      payerDocument: 'CC 79123456',
      payerBank: 'Nequi',
    });
    expect(incoming.status).toBe(202);
    const providerTransferId = ((await incoming.json()) as { providerTransferId: string }).providerTransferId;
    const brebIn = await eventually(
      async () =>
        ((await get('/deposits?rail=BREB')).body.deposits ?? []).find((d: any) => d.providerTransferId === providerTransferId && d.status === 'ASSIGNED'),
      20_000,
      100,
    );
    ids.brebIn = brebIn.id;
    const brebReturn = await post(`/deposits/${brebIn.id}/returns`, { amountCents: 30_000, reason: 'OVERPAYMENT', description: 'Pagó de más' });
    expect([brebReturn.status, brebReturn.body.status]).toEqual([201, 'RETURNED']);
    ids.brebReturn = brebReturn.body.transactionId;
    // A PSE refund (a return through the PSE provider, from the ACH wallet).
    const pseRefund = await post(`/deposits/${ids.pseA}/returns`, { amountCents: 100_000, reason: 'CUSTOMER_REQUEST', description: 'Pedido cancelado' });
    expect([pseRefund.status, pseRefund.body.status]).toEqual([201, 'RETURNED']);
    ids.pseRefund = pseRefund.body.transactionId;
    // A move between the company's own wallets.
    const move = await post(
      '/wallets/moves',
      { from: 'ACH', to: 'BREB', amountCents: 70_000, reference: 'fondeo-breb' },
      { 'Idempotency-Key': `move-${randomUUID()}` },
    );
    expect(move.status).toBe(201);
    // A fee charged alone (FEE_CHARGE): the ledger's real ChargeFee over the mesh, as its one admitted
    // caller (see above); an operator's identity is refused by the ledger's access policy.
    const charge = {
      idempotencyKey: `cuota-${randomUUID()}`,
      rail: ledgerV1.Rail.ACH,
      operation: ledgerV1.FeeOperation.ACH_OUTFLOW,
      feeCents: 10_000n,
      ivaCents: 1_900n,
      reference: 'cuota-manejo-11',
      description: 'Cuota de manejo mensual',
    };
    await expect(stack.ledgerClient.chargeFee(charge, { requestId: randomUUID(), companyId: co.id, actor: 'ops' })).rejects.toMatchObject({
      code: 'CALLER_NOT_ALLOWED',
    });
    const fee = await asTransfer.chargeFee(charge, { requestId: randomUUID(), companyId: co.id, actor: 'service:transfer' });
    expect(fee.replayed).toBe(false);
    ids.fee = fee.movement!.id;
    // The late send: the rail has paid it by now; the operator writes it off (the company keeps its refund).
    const exception = await eventually(
      async () =>
        ((await stack.admin('GET', '/admin/exceptions?status=OPEN&kind=RAIL_COMPLETED_AFTER_RELEASE&limit=100')).body.items as any[]).find(
          (e) => e.resourceId === ids.late,
        ),
      20_000,
      200,
    );
    const resolved = await stack.admin('POST', `/admin/exceptions/${exception.id}/resolve`, { action: 'write_off', note: 'El riel pagó después de liberar' });
    expect([resolved.status, resolved.body.status]).toEqual([200, 'RESOLVED']);
    writeOff = { exceptionId: exception.id, transferId: ids.late! };

    // Every posting in before `tEnd`: the balances are the sums below.
    await eventually(
      async () => {
        const w = (await get('/wallets/balance')).body.wallets as Array<{ rail: string; availableCents: string; pendingOutCents: string }>;
        const by = Object.fromEntries(w.map((x) => [x.rail, `${x.availableCents}/${x.pendingOutCents}`]));
        return by.ACH === '2110603/0' && by.BREB === '1068691/0' ? true : undefined;
      },
      20_000,
      100,
    );
    tEnd = await mark();
  }, 180_000);
  afterAll(async () => {
    asTransfer?.close();
    await sql?.end();
    await stack?.stop();
  });
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('the JSON statements hold every kind of line the product makes, with fees and IVA', async () => {
    const ach = (await files('ACH')).json;
    const breb = (await files('BREB')).json;
    const view = (s: StatementDocument) => s.lines.map((l) => [l.entry, l.movementRail, l.amountCents, l.feeCents, l.ivaCents]);
    expect(view(ach)).toEqual([
      ['CREDIT', 'ACH', '2000000', '0', '0'],
      ['TRANSFER_OUT', 'ACH', '-200357', '300', '57'],
      ['TRANSFER_OUT', 'ACH', '-100370', '300', '57'],
      ['TRANSFER_OUT_RETURNED', 'ACH', '100370', '-300', '-57'],
      ['TRANSFER_IN', 'PSE', '492860', '6000', '1140'], // fee 1,000 + 1 % of 500,000; IVA 19 %
      ['TRANSFER_IN', 'PSE', '295240', '4000', '760'],
      ['TRANSFER_IN_REVERSED', 'PSE', '-295240', '-4000', '-760'],
      ['TRANSFER_OUT', 'PSE', '-100000', '0', '0'], // the refund: no fee
      ['WALLET_MOVE_OUT', 'ACH', '-70000', '0', '0'],
      ['FEE_CHARGE', 'ACH', '-11900', '10000', '1900'], // the fee charged alone: fee + IVA out
    ]);
    expect(view(breb)).toEqual([
      ['CREDIT', 'BREB', '1000000', '0', '0'],
      ['TRANSFER_OUT', 'BREB', '-50119', '100', '19'],
      ['TRANSFER_OUT', 'BREB', '-20119', '100', '19'], // the send the rail paid after we released it
      ['TRANSFER_OUT_RETURNED', 'BREB', '20119', '-100', '-19'], // its money back; its write-off is no line
      ['TRANSFER_IN', 'BREB', '78810', '1000', '190'],
      ['TRANSFER_OUT', 'BREB', '-30000', '0', '0'], // the return to the payer
      ['WALLET_MOVE_IN', 'BREB', '70000', '0', '0'],
    ]);
    expect(ach.lines.map((l) => l.movementId)).toEqual(expect.arrayContaining([ids.achOk, ids.achBad, ids.pseRefund, ids.fee]));
    expect(breb.lines.map((l) => l.movementId)).toEqual(expect.arrayContaining([ids.breb, ids.brebReturn, ids.late]));
    const feeLine = ach.lines.find((l) => l.movementId === ids.fee)!;
    expect(feeLine).toMatchObject({
      movementType: 'FEE_CHARGE',
      movementStatus: 'COMPLETED',
      reference: 'cuota-manejo-11',
      description: 'Cuota de manejo mensual',
    });
    expect([ach.opening.availableCents, ach.closing.availableCents, breb.opening.availableCents, breb.closing.availableCents]).toEqual([
      '0',
      '2110603',
      '0',
      '1068691',
    ]);
    // The operator's write-off is a real correcting entry of this company, in the period, on no wallet:
    // operational losses against Bre-B clearing, so neither statement has a line of it.
    const corrections = await sql.query(
      `select p.id::text as id, array_agg(e.account order by e.account) as accounts
         from ledger.postings p join ledger.entries e on e.posting_id = p.id
        where p.kind = 'correction' and p.company_id = $1 and p.corrects = $2 group by p.id`,
      [co.id, `breb:our:${writeOff.transferId}`],
    );
    expect(corrections.rows.map((r) => r.accounts)).toEqual([['operational_losses', 'rail_clearing:BREB']]);
    expect([...ach.lines, ...breb.lines].map((l) => l.postingId)).not.toContain(corrections.rows[0].id);
    // The kinds the product makes, across both wallets: every entry but CORRECTION, which no flow posts on a wallet (see above).
    const kinds = new Set([...ach.lines, ...breb.lines].map((l) => l.entry));
    expect(STATEMENT_ENTRIES.filter((e) => !kinds.has(e))).toEqual(['CORRECTION']);
  });

  it.each(['ACH', 'BREB'])('%s: camt.053 (XSD, fast-xml-parser) and MT940 (mt940js) carry the JSON statement’s balances and lines', async (rail) => {
    const { json, camt, mt940: sta } = await files(rail);
    const st = await checkBankFormats(json, camt, sta);
    expect(st.Acct.Id.Othr.Id).toBe(`${NIT}/${rail}`);
    expect(st.Acct.Ownr).toMatchObject({ Nm: 'Todo Tipo de Movimientos S.A.S.', Id: { OrgId: { Othr: { Id: NIT } } } });
    expect(new mt940.Parser().parse(sta)[0]!.accountIdentification).toBe(`${NIT}/${rail}`);
    if (rail === 'ACH') {
      // The description's markup characters travel escaped and come back as written.
      const send = st.Ntry[1]!;
      expect(send.NtryDtls.TxDtls.RmtInf?.Ustrd).toEqual([ACH_DESCRIPTION]);
      expect(send.NtryDtls.TxDtls.Refs).toEqual({ EndToEndId: 'pago-ach-77', TxId: ids.achOk!.replace(/-/g, '') });
      expect(camt).toContain('Factura &lt;77&gt; &amp; "cía" — pago');
      const payer = st.Ntry[4]!.NtryDtls.TxDtls.RltdPties?.Dbtr?.Pty?.Nm;
      expect(payer).toBe(json.lines[4]!.counterparty);
    } else {
      expect(st.Ntry[4]!.NtryDtls.TxDtls.RltdPties?.Dbtr?.Pty?.Nm).toBe('Pedro Pérez');
      expect(st.Ntry[5]!.NtryDtls.TxDtls.RltdPties?.Cdtr?.Pty?.Nm).toBe('Pedro Pérez');
    }
  });

  it('every entry the JSON can hold maps to a camt bank transaction code the XSD accepts and an MT940 type mt940js reads (FEE_CHARGE and CORRECTION from built lines)', async () => {
    // A statement built from JSON lines: every entry, a correction each way, a balance below zero (a
    // reversal may leave one), and text a bank format must tame (markup, a control character, an emoji,
    // a reference longer than camt's 35 characters, a description longer than one Ustrd).
    const at = (i: number) => instantFromDate(new Date(Date.UTC(2026, 10, 20, 15, 0, i)));
    const bogota = (i: number) => `2026-11-20T10:00:${String(i).padStart(2, '0')}.000000-05:00`;
    const specs: Array<[string, number, number, number, string | null]> = [
      ['CREDIT', 100_000, 0, 0, null],
      ['FEE_CHARGE', -11_900, 10_000, 1_900, null],
      ['TRANSFER_OUT', -50_357, 300, 57, 'Ana <B> & "C"'],
      ['TRANSFER_OUT_RETURNED', 50_357, -300, -57, 'Ana <B> & "C"'],
      ['TRANSFER_IN', 98_810, 1_000, 190, 'Pagador\u0007 ✓ 🚀'],
      ['TRANSFER_IN_REVERSED', -98_810, -1_000, -190, 'Pagador'],
      ['CORRECTION', 2_500, 0, 0, null],
      ['CORRECTION', -1_000, 0, 0, null],
      ['WALLET_MOVE_OUT', -300_000, 0, 0, null],
      ['WALLET_MOVE_IN', 10_000, 0, 0, null],
    ];
    let running = -5_000n;
    const lines: Line[] = specs.map(([entry, amount, fee, iva, counterparty], i) => {
      running += BigInt(amount);
      return {
        postingId: randomUUID(),
        postedAt: at(i),
        postedAtBogota: bogota(i),
        entry,
        movementId: entry === 'CORRECTION' ? null : randomUUID(),
        movementType: null,
        movementRail: entry === 'CORRECTION' ? null : i % 2 ? 'ACH' : 'BREB',
        movementStatus: entry === 'CORRECTION' ? null : 'COMPLETED',
        reference: i === 2 ? 'r'.repeat(40) : i === 4 ? 'ref-con-ñ' : null,
        counterparty,
        description: i === 1 ? 'Comisión mensual' : i === 2 ? 'x'.repeat(300) : i === 5 ? 'a\u0000b' : null,
        amountCents: String(amount),
        feeCents: String(fee),
        ivaCents: String(iva),
        balanceAfterCents: running.toString(),
      } as Line;
    });
    expect(new Set(lines.map((l) => l.entry))).toEqual(new Set(STATEMENT_ENTRIES));
    const inCents = specs.filter((s) => s[1] > 0).reduce((s, x) => s + x[1], 0);
    const outCents = -specs.filter((s) => s[1] < 0).reduce((s, x) => s + x[1], 0);
    const doc = {
      company: { name: 'Empresa <&> "Ñandú" S.A.S.', nit: '900000001-1' },
      rail: 'ACH',
      currency: 'COP',
      timezone: 'America/Bogota',
      from: at(0),
      to: at(59),
      fromBogota: '2026-11-20T10:00:00.000000-05:00',
      toBogota: '2026-11-20T10:00:59.000000-05:00',
      opening: { availableCents: '-5000', pendingOutCents: '0' },
      closing: { availableCents: running.toString(), pendingOutCents: '1234' },
      totals: { inCents: String(inCents), outCents: String(outCents), feesCents: '0', ivaCents: '0', lineCount: lines.length },
      lines,
      journalHeads: [
        { day: '2026-11-18', seq: '48000', hash: 'cd'.repeat(32) },
        { day: '2026-11-19', seq: '48213', hash: 'ab'.repeat(32) },
      ],
    } as StatementDocument;
    expect(running).toBeLessThan(0n); // the closing balance is a debit too
    const camt = statementCamt053(doc, { generatedAt: new Date(), messageId: randomUUID().replace(/-/g, '') });
    const sta = statementMt940(doc);
    const st = await checkBankFormats(doc, camt, sta);
    // The journal's last daily head of the period travels in both files, for the whole statement (docs/journal.md).
    const [mt] = new mt940.Parser().parse(sta);
    expect(mt!.informationToAccountOwner!.replace(/\n/g, '')).toBe(
      `Diario contable sellado al cierre del 2026-11-19: posicion 48213, SHA-256 ${'ab'.repeat(32)}`,
    );
    expect(st.AddtlStmtInf).toMatch(new RegExp(`Diario contable sellado al cierre del 2026-11-19: posición 48213, SHA-256 ${'ab'.repeat(32)}\\.$`));
    expect(st.Bal.map((b) => [b.Tp.CdOrPrtry.Cd, b.CdtDbtInd])).toEqual([
      ['OPBD', 'DBIT'],
      ['CLBD', 'DBIT'],
      ['CLAV', 'DBIT'],
    ]);
    expect(signedCents(st.Bal[1]!)).toBe(running);
    expect(parseCamt053(camt).Stmt[0]!.Acct.Ownr.Nm).toBe('Empresa <&> "Ñandú" S.A.S.');
    // What camt's fixed lengths cut travels whole in AddtlTxInf; text is XML-safe, an emoji kept.
    expect(st.Ntry[2]!.NtryDtls.TxDtls.Refs.EndToEndId).toBe('r'.repeat(35));
    expect(st.Ntry[2]!.NtryDtls.TxDtls.AddtlTxInf).toContain(`Referencia: ${'r'.repeat(40)}`);
    expect(st.Ntry[2]!.NtryDtls.TxDtls.RmtInf?.Ustrd.map((u) => u.length)).toEqual([140, 140, 20]);
    expect(st.Ntry[4]!.NtryDtls.TxDtls.RltdPties?.Dbtr?.Pty?.Nm).toBe('Pagador ✓ 🚀');
    expect(st.Ntry[5]!.NtryDtls.TxDtls.RmtInf?.Ustrd).toEqual(['a b']);
    expect(st.Ntry[6]!.NtryDtls.TxDtls.Refs).toEqual({ EndToEndId: 'NOTPROVIDED' });

    // The validator is not vacuous: a document the schema does not allow is refused.
    const broken = camt.replace('<CdtDbtInd>CRDT</CdtDbtInd>', '<CdtDbtInd>CREDIT</CdtDbtInd>');
    expect(broken).not.toBe(camt);
    expect((await camt053SchemaErrors(broken)).join('\n')).toMatch(/CdtDbtInd/);
  });
});
