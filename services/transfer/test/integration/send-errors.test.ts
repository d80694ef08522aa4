import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { eventually } from '@wallet/platform/testing';
import { transferV1 } from '@wallet/proto';
import {
  Rail,
  achSend,
  brebSend,
  ctxOf,
  expectLedgerOk,
  failure,
  newCompany,
  resolve,
  send,
  setFaults,
  startHarness,
  waitForState,
  wallet,
  type CompanySetup,
  type Harness,
} from './harness.js';

describe('send checks, in the contract order (CONTRACT §9)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  const aml = {
    add: (documentNumber: string, reason = 'Lista restrictiva') => h.client.addAmlEntry({ documentNumber, reason }, ctxOf()),
    remove: (id: string) => h.client.removeAmlEntry({ id }, ctxOf()),
  };
  const code = async (co: CompanySetup, req: transferV1.SendRequest) => (await failure(send(h, co, req))).code;
  const rowsOf = async (companyId: string) =>
    (await h.ledger.db.query<{ state: string }>('select state from transfer.transfers where company_id = ? order by created_at', [companyId])).map(
      (r) => r.state,
    );

  it('BREB: schema → cap → TARGET_DOCUMENT_REQUIRED → AML → directory/NAME_MISMATCH → limits → balance; the first failing check answers', async () => {
    const co = await newCompany(h, { breb: 10_000n });
    const good = await brebSend(h, co, '3005556677', 60_000n);
    co.profile.counterpartyDailyLimitCents = 50_000n;
    const entry = await aml.add(good.targetDocument!);
    let req = transferV1.SendRequest.fromPartial({
      ...good,
      amount: 1_200_000_001n,
      targetDocument: undefined,
      targetName: 'Otra Persona',
      description: 'd'.repeat(256),
    });
    expect(await code(co, req)).toBe('INVALID_REQUEST');
    req = { ...req, description: 'ok' };
    expect(await code(co, req)).toBe('AMOUNT_EXCEEDS_BREB_CAP');
    req = { ...req, amount: 60_000n };
    expect(await code(co, req)).toBe('TARGET_DOCUMENT_REQUIRED');
    req = { ...req, targetDocument: good.targetDocument };
    expect(await code(co, req)).toBe('RECIPIENT_BLACKLISTED');
    expect((await aml.remove(entry.id)).id).toBe(entry.id);
    expect(await code(co, req)).toBe('NAME_MISMATCH');
    req = { ...req, targetName: good.targetName };
    expect(await code(co, req)).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    co.profile.counterpartyDailyLimitCents = 0n;
    expect(await code(co, { ...req })).toBe('INSUFFICIENT_BALANCE');
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 10_000n, pending: 0n });
    expect(await rowsOf(co.id)).toEqual(['REJECTED']); // only the balance check came after the record
    await h.ledgerClient.credit({ idempotencyKey: `top-${co.id}`, rail: Rail.BREB, amountCents: 50_000n }, ctxOf(co.id));
    const ok = await send(h, co, { ...req });
    expect(ok.transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
    await waitForState(h, ok.transfer!.id, ['COMPLETED']);
  });

  it('BREB key problems: INVALID_KEY (malformed, type mismatch, unknown to the directory, stale anchor), KEY_INACTIVE, directory down', async () => {
    const co = await newCompany(h, { breb: 100_000n });
    const good = await brebSend(h, co, '3006667788', 1_000n);
    const key = (type: string, value: string) => ({ ...good, brebKey: { type, value } });
    expect(await code(co, key('PHONE', 'no valid key!'))).toBe('INVALID_KEY');
    expect(await code(co, key('PHONE', '12345'))).toBe('INVALID_KEY');
    expect(await code(co, key('PHONE', '3009999999'))).toBe('INVALID_KEY');
    expect(await code(co, key('ALPHANUM', '@inactive'))).toBe('KEY_INACTIVE');
    expect(await code(co, key('PHONE', '3008888888'))).toBe('KEY_INACTIVE');
    expect(await code(co, key('PHONE', 'ab'))).toBe('INVALID_REQUEST');
    const { brebKey: _k, ...noKey } = good;
    expect(await code(co, transferV1.SendRequest.fromPartial({ ...noKey, targetAnchorHandle: 'anh_never_resolved' }))).toBe('INVALID_KEY');
    await setFaults(h, { directory: 'down' });
    try {
      expect(await code(co, good)).toBe('BREB_DIRECTORY_LOOKUP_FAILED');
    } finally {
      await setFaults(h, { directory: 'up' });
    }
    expect(await rowsOf(co.id)).toEqual([]);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 100_000n, pending: 0n });
  });

  it("NAME_MISMATCH ignores accents, case and spacing; a document other than the holder's is refused too", async () => {
    const co = await newCompany(h, { breb: 100_000n });
    const good = await brebSend(h, co, '3007778800', 1_000n);
    const loose = `  ${good.targetName!.toLowerCase().replace(/ /g, '   ')}\t`.normalize('NFD');
    const accented = good.targetName!.replace(/A/g, 'Á').replace(/E/g, 'é');
    expect((await send(h, co, { ...good, targetName: loose, requestHash: randomUUID() })).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
    expect((await send(h, co, { ...good, targetName: accented, requestHash: randomUUID() })).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
    expect(await code(co, { ...good, targetName: `${good.targetName} X` })).toBe('NAME_MISMATCH');
    const doc = await failure(send(h, co, { ...good, targetDocument: '999999999' }));
    expect(doc.code).toBe('NAME_MISMATCH');
    expect(doc.details).toEqual({ field: 'targetDocument' });
  });

  it("AML: the payer company's NIT (also without its check digit) and the destination document; removal lifts it", async () => {
    const co = await newCompany(h, { breb: 100_000n, ach: 100_000n, nit: '900.555.444-3' });
    const breb = await brebSend(h, co, '3001231234', 1_000n);
    const byNit = await aml.add('900555444', 'Empresa sancionada');
    expect(byNit).toMatchObject({ documentNumber: '900555444', reason: 'Empresa sancionada' });
    expect(byNit.createdAt).toBeInstanceOf(Date);
    expect((await aml.add('900555444', 'otra vez')).id).toBe(byNit.id); // adding again: the live entry
    expect(await code(co, breb)).toBe('RECIPIENT_BLACKLISTED');
    expect(await code(co, achSend(co, 1_000n))).toBe('RECIPIENT_BLACKLISTED');
    // AML, the directory and the fee are read at once; AML still answers first when the directory fails too.
    await setFaults(h, { directory: 'down' });
    try {
      expect(await code(co, breb)).toBe('RECIPIENT_BLACKLISTED');
    } finally {
      await setFaults(h, { directory: 'up' });
    }
    await aml.remove(byNit.id);
    expect((await aml.remove(byNit.id)).id).toBe(byNit.id); // idempotent
    const byDoc = await aml.add('1020304050', 'Beneficiario reportado');
    expect(await code(co, achSend(co, 1_000n))).toBe('RECIPIENT_BLACKLISTED');
    expect((await send(h, co, breb)).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
    await aml.remove(byDoc.id);
    expect((await send(h, co, achSend(co, 1_000n))).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
    expect((await failure(aml.remove(randomUUID()))).code).toBe('AML_ENTRY_NOT_FOUND');
    expect((await failure(aml.remove('nope'))).code).toBe('AML_ENTRY_NOT_FOUND');
    expect((await failure(h.client.addAmlEntry({ documentNumber: '', reason: '' }, ctxOf()))).code).toBe('INVALID_REQUEST');
  });

  it('AML from memory, kept current by the change feed: an entry added through the API applies at once, one by SQL as soon as it is notified, and with the feed lost the table is checked', async () => {
    const co = await newCompany(h, { breb: 10_000_000n });
    const req = await brebSend(h, co, '3005551234', 10_000n);
    const sql = async (text: string, params: unknown[] = []) => {
      const c = new pg.Client({ connectionString: h.tdb.url });
      await c.connect();
      try {
        return (await c.query(text, params)).rows;
      } finally {
        await c.end();
      }
    };
    const verdict = async () =>
      send(h, co, { ...req, reference: randomUUID() }).then(
        () => 'OK',
        (e: { code: string }) => e.code,
      );
    const becomes = (want: string) => eventually(async () => (await verdict()) === want, 3_000, 20);
    expect(await verdict()).toBe('OK');
    // Through the API: this replica drops its copy when it writes, so the very next send is refused.
    const entry = await aml.add(req.targetDocument!);
    expect(await verdict()).toBe('RECIPIENT_BLACKLISTED');
    await aml.remove(entry.id);
    expect(await verdict()).toBe('OK');
    // Another writer (an operator's SQL, another replica): the trigger notifies, the copy is reloaded.
    await sql(`insert into transfer.aml_entries (id, document_number, normalized_document, name, reason) values ($1, $2, $2, null, 'sql')`, [
      randomUUID(),
      req.targetDocument,
    ]);
    expect(await becomes('RECIPIENT_BLACKLISTED')).toBe(true);
    for (let i = 0; i < 5; i++) expect(await verdict()).toBe('RECIPIENT_BLACKLISTED');
    // Feed lost: the copy is dropped and each check reads the table until the feed is back.
    await sql(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen transfer_aml%'`);
    await sql(`update transfer.aml_entries set removed_at = now() where normalized_document = $1 and removed_at is null`, [req.targetDocument]);
    expect(await becomes('OK')).toBe(true);
    await eventually(
      async () => (await sql(`select 1 from pg_stat_activity where datname = current_database() and query ilike 'listen transfer_aml%'`)).length > 0,
      5_000,
    );
    await sql(`insert into transfer.aml_entries (id, document_number, normalized_document, name, reason) values ($1, $2, $2, null, 'sql again')`, [
      randomUUID(),
      req.targetDocument,
    ]);
    expect(await becomes('RECIPIENT_BLACKLISTED')).toBe(true);
  });

  it('ACH: cap → AML → DESTINATION_REJECTED (bank) → INVALID_BANK_ACCOUNT → DESTINATION_REJECTED (placeholder) → limits → balance', async () => {
    const co = await newCompany(h, { ach: 10_000n });
    expect(await code(co, achSend(co, 200_000_000_001n))).toBe('AMOUNT_EXCEEDS_ACH_CAP');
    expect(await code(co, achSend(co, 1_000n, {}, { bankName: '', bankAchCode: '' }))).toBe('DESTINATION_REJECTED');
    expect(await code(co, achSend(co, 1_000n, {}, { accountNumber: '0000000000' }))).toBe('INVALID_BANK_ACCOUNT');
    expect(await code(co, achSend(co, 1_000n, {}, { accountNumber: '00000' }))).toBe('DESTINATION_REJECTED');
    expect(await code(co, achSend(co, 1_000n, {}, { accountNumber: '1111111111' }))).toBe('DESTINATION_REJECTED');
    const lowLimit = await failure(h.client.send(achSend(co, 1_000n), ctxOf(co.id, undefined, { ...co.profile, counterpartyDailyLimitCents: 999n })));
    expect(lowLimit.code).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    expect(await code(co, achSend(co, 10_001n))).toBe('INSUFFICIENT_BALANCE');
    expect(await code(co, achSend(co, 1_000n, {}, { accountNumber: '12' }))).toBe('INVALID_REQUEST');
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 10_000n, pending: 0n });
  });

  it('ACH rail down at send: 503 ACH_RAIL_UNAVAILABLE and nothing reserved or recorded', async () => {
    const co = await newCompany(h, { ach: 100_000n });
    await setFaults(h, { achRail: 'down' });
    try {
      expect(await code(co, achSend(co, 1_000n))).toBe('ACH_RAIL_UNAVAILABLE');
    } finally {
      await setFaults(h, { achRail: 'up' });
    }
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 100_000n, pending: 0n });
    expect(await rowsOf(co.id)).toEqual([]);
  });

  it('counterparty limits: reaching the daily limit exactly is allowed, exceeding it refused; failed sends do not count', async () => {
    const co = await newCompany(h, { ach: 1_000_000n });
    co.profile.counterpartyDailyLimitCents = 100_000n;
    const a = await send(h, co, achSend(co, 60_000n));
    const b = await send(h, co, achSend(co, 40_000n)); // exactly 100,000
    expect([a.transfer!.status, b.transfer!.status]).toEqual(['MOVEMENT_STATUS_PENDING', 'MOVEMENT_STATUS_PENDING']);
    expect(await code(co, achSend(co, 100n))).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    // Another destination (another document at another account) has its own limit; the same account
    // under another document does not (destination-screening.test.ts).
    expect(await code(co, achSend(co, 100n, {}, { documentNumber: '5544332211' }))).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    expect((await send(h, co, achSend(co, 100_000n, {}, { documentNumber: '5544332211', accountNumber: '55443322110' }))).transfer!.status).toBe(
      'MOVEMENT_STATUS_PENDING',
    );
    // A failed outflow stops counting (its outcome held back until the first check is done).
    const other = { documentNumber: '7788990011', accountNumber: '77889900110' };
    await setFaults(h, { callbacks: 'down' });
    let failed: Awaited<ReturnType<typeof send>>;
    try {
      failed = await send(h, co, achSend(co, 60_013n, {}, other));
      expect(await code(co, achSend(co, 50_000n, {}, other))).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    } finally {
      await setFaults(h, { callbacks: 'up' });
    }
    await waitForState(h, failed.transfer!.id, ['FAILED']);
    expect((await send(h, co, achSend(co, 100_000n, {}, other))).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
    for (const t of [a, b]) await waitForState(h, t.transfer!.id, ['COMPLETED']);
  });

  it('counterparty limits: monthly, with the service default daily limit', async () => {
    const co = await newCompany(h, { breb: 1_000_000n });
    co.profile.counterpartyMonthlyLimitCents = 150_000n;
    const first = await send(h, co, await brebSend(h, co, '3009876543', 100_000n));
    const second = await send(h, co, await brebSend(h, co, '3009876543', 50_000n));
    expect(await code(co, await brebSend(h, co, '3009876543', 100n))).toBe('COUNTERPARTY_MONTHLY_LIMIT_EXCEEDED');
    // Another key of the same company to another holder is another counterparty.
    const holder = (await resolve(h, co.id, '3009876543')).recipient!.idValue;
    const elsewhere = await brebSend(h, co, '3001212121', 100n);
    expect(elsewhere.targetDocument).not.toBe(holder);
    expect((await send(h, co, elsewhere)).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
    for (const t of [first, second]) await waitForState(h, t.transfer!.id, ['COMPLETED']);
  });

  it("no wallet: WALLET_NOT_PROVISIONED; a call for no company (an operator's) is refused before the handler", async () => {
    const co = await newCompany(h, { rails: [] });
    expect(await code(co, achSend(co, 1_000n))).toBe('WALLET_NOT_PROVISIONED');
    const e = await failure(h.client.send(achSend(co, 1_000n), ctxOf()));
    expect(e.code).toBe('CALLER_NOT_ALLOWED');
  });
});
