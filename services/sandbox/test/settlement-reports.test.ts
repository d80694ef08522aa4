import { Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import { parse as parseCsvSync } from 'csv-parse/sync';
import pg from 'pg';
import { createTestDatabase, eventually, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { CallbackReceiver, SECRET, api, txId } from './support.js';

/**
 * The providers' daily settlement reports (docs/sandbox.md "Settlement reports"): movements made
 * through the real API, then moved by SQL to fixed Bogotá times so that day boundaries are exact.
 */

const D = '2025-03-14';
const PREV = '2025-03-13';
const NEXT = '2025-03-15';
const HEADER = ['provider_id', 'our_id', 'direction', 'amount_cents', 'fee_cents', 'status', 'value_date', 'accepted_at', 'settled_at', 'counterparty'];
/** A Bogotá wall-clock time as the report writes it (UTC, milliseconds). */
const bog = (date: string, time: string) => new Date(`${date}T${time}-05:00`).toISOString();
const ACCOUNT = '12345678901';
const TRICKY_PAYER = 'Pérez, "Toño" & Cía\nLtda.';

interface Report {
  status: number;
  headers: Headers;
  text: string;
  header: string[];
  lines: string[][];
  trailer: string[];
}

describe('Settlement reports', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let receiver: CallbackReceiver;
  let sql: pg.Client;
  const call = api(() => sandbox.url);

  async function report(rail: string, date: string): Promise<Report> {
    const res = await fetch(`${sandbox.url}/sandbox/reports/${rail}/${date}.csv`);
    const text = await res.text();
    const records = parseCsvSync(text, { relax_column_count: true }) as string[][];
    return { status: res.status, headers: res.headers, text, header: records[0]!, lines: records.slice(1, -1), trailer: records.at(-1)! };
  }
  const trailerOf = (lines: string[][]) => [
    'TRAILER',
    String(lines.length),
    String(lines.reduce((s, l) => s + BigInt(l[3]!), 0n)),
    String(lines.reduce((s, l) => s + BigInt(l[4]!), 0n)),
  ];
  const inject = (rail: string, date: string, body: unknown) => call('POST', `/sandbox/reports/${rail}/${date}/discrepancies`, body);

  // ---- The day's movements ------------------------------------------------------------------

  const ids: Record<string, { our: string; provider: string }> = {};

  async function breb(name: string, amountCents: number): Promise<void> {
    const key = '3001234567';
    const entry = (await call('GET', `/breb/directory/keys/${key}`)).body;
    const transactionId = txId(name);
    const r = await call('POST', '/breb/rail/transfers', {
      transactionId,
      amountCents,
      anchorHandle: entry.anchorHandle,
      keyType: 'AUTO',
      keyValue: key,
      targetName: 'CAMILO MARIN',
      targetDocument: '40828038',
      callbackUrl: receiver.urlFor(name),
    });
    expect(r.status).toBe(202);
    ids[name] = { our: transactionId, provider: r.body.providerTransferId };
    await eventually(async () => (await call('GET', `/breb/rail/transfers/${transactionId}`)).body.status !== 'PENDING');
  }
  /** ACH transfers stay pending (1 h confirm delay) until forced. */
  async function ach(name: string, amountCents: number, outcome?: 'complete' | 'fail'): Promise<void> {
    const transactionId = txId(name);
    const r = await call('POST', '/ach/transfers', {
      transactionId,
      amountCents,
      bankCode: '1007',
      accountTypeId: 20,
      accountNumber: ACCOUNT,
      documentTypeId: 1,
      documentNumber: '40828038',
      holderName: 'CAMILO MARIN',
      callbackUrl: receiver.urlFor(name),
    });
    expect(r.status).toBe(202);
    ids[name] = { our: transactionId, provider: r.body.providerTransferId };
    if (outcome) expect((await call('POST', `/sandbox/rails/ach/transfers/${transactionId}/${outcome}`, {})).status).toBe(200);
  }
  async function pse(name: string, amountCents: number, outcome?: 'APPROVED' | 'REJECTED', payerName = 'Ana María Gómez'): Promise<void> {
    const depositId = `dep_${txId(name)}`;
    const r = await call('POST', '/pse/links', {
      depositId,
      amountCents,
      companyName: 'Ferretería El Tornillo',
      payerName,
      payerEmail: 'ana@example.com',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      callbackUrl: receiver.urlFor(name),
    });
    expect(r.status).toBe(201);
    const [row] = (await sql.query('select provider_transfer_id from sandbox.pse_links where deposit_id = $1', [depositId])).rows;
    ids[name] = { our: depositId, provider: row.provider_transfer_id };
    if (outcome) expect((await call('POST', `/sandbox/pse/${depositId}/pay`, { outcome, payerBank: 'Bancolombia' })).status).toBe(200);
  }
  async function inbound(name: string, keyValue: string, amountCents: number, payerName: string): Promise<void> {
    const r = await call('POST', '/sandbox/breb/incoming', { keyValue, amountCents, payerName, payerDocument: 'CC 79123456', payerBank: 'Davivienda' });
    expect(r.status).toBe(202);
    ids[name] = { our: '', provider: r.body.providerTransferId };
  }
  const setTransfer = (name: string, accepted: string, outcome: string) =>
    sql.query('update sandbox.transfers set created_at = $2, outcome_at = $3 where transaction_id = $1', [ids[name]!.our, accepted, outcome]);
  const setLink = (name: string, t: { created: string; paid?: string; outcome?: string; reversed?: string }) =>
    sql.query('update sandbox.pse_links set created_at = $2, paid_at = $3, outcome_at = $4, reversed_at = $5 where deposit_id = $1', [
      ids[name]!.our,
      t.created,
      t.paid ?? null,
      t.outcome ?? t.paid ?? null,
      t.reversed ?? null,
    ]);

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_reports');
    receiver = await CallbackReceiver.start();
    sandbox = await startSandbox({
      databaseUrl: tdb.url,
      port: 0,
      env: { SANDBOX_CALLBACK_SECRET: SECRET, SANDBOX_POLL_MS: '50', SANDBOX_BREB_CONFIRM_MS: '100', SANDBOX_ACH_CONFIRM_MS: '3600000' },
    });
    sql = new pg.Client({ connectionString: tdb.url });
    await sql.connect();

    await breb('brebOk', 150_000);
    await breb('brebFail', 250_013); // the 13 rule
    await breb('brebPrevDay', 90_000);
    await ach('achOk', 1_200_000, 'complete');
    await ach('achFail', 75_000, 'fail');
    await ach('achNextDay', 33_000, 'complete');
    await ach('achPending', 44_000);
    await pse('psePaid', 500_000, 'APPROVED', TRICKY_PAYER);
    await pse('pseSameDayReversal', 210_000, 'APPROVED');
    await pse('pseReversedNextDay', 320_000, 'APPROVED');
    await pse('pseFailed', 99_000, 'REJECTED');
    await pse('psePending', 12_000);
    for (const name of ['pseSameDayReversal', 'pseReversedNextDay']) {
      expect((await call('POST', `/sandbox/pse/${ids[name]!.our}/reverse`)).status).toBe(200);
    }
    const key = `@tienda-${process.pid.toString(36)}-${Date.now().toString(36)}`;
    expect(
      (
        await call('POST', '/breb/directory/registrations', {
          keyValue: key,
          keyType: 'ALPHANUM',
          holderName: 'Ferretería El Tornillo',
          participantCallbackUrl: receiver.urlFor('inbound'),
        })
      ).status,
    ).toBe(201);
    await inbound('in1', key, 80_000, 'Luis Pérez');
    await inbound('inLast', key, 65_000, 'Marta Ruiz');

    // The day D in Bogotá, with its edges: 23:59:59.999 the day before and 00:00 the day after are other days.
    await setTransfer('brebOk', bog(D, '08:00:00.000'), bog(D, '08:00:03.250'));
    await setTransfer('brebFail', bog(D, '09:00:00.000'), bog(D, '09:00:03.000'));
    await setTransfer('brebPrevDay', bog(PREV, '23:59:50.000'), bog(PREV, '23:59:59.999'));
    await setTransfer('achOk', bog(D, '07:00:00.000'), bog(D, '10:00:00.000'));
    await setTransfer('achFail', bog(D, '07:30:00.000'), bog(D, '11:00:00.000'));
    await setTransfer('achNextDay', bog(D, '20:00:00.000'), bog(NEXT, '00:00:00.000'));
    await setLink('psePaid', { created: bog(D, '11:00:00.000'), paid: bog(D, '12:00:00.000') });
    await setLink('pseSameDayReversal', { created: bog(D, '12:30:00.000'), paid: bog(D, '13:00:00.000'), reversed: bog(D, '15:00:00.000') });
    await setLink('pseReversedNextDay', { created: bog(D, '13:30:00.000'), paid: bog(D, '14:00:00.000'), reversed: bog(NEXT, '09:00:00.000') });
    await setLink('pseFailed', { created: bog(D, '15:30:00.000'), outcome: bog(D, '16:00:00.000') });
    await sql.query('update sandbox.breb_incoming set received_at = $2 where provider_transfer_id = $1', [ids.in1!.provider, bog(D, '17:00:00.000')]);
    await sql.query('update sandbox.breb_incoming set received_at = $2 where provider_transfer_id = $1', [ids.inLast!.provider, bog(D, '23:59:59.999')]);
  }, 60_000);

  afterAll(async () => {
    await sql?.end();
    await sandbox?.stop();
    await receiver?.close();
    await tdb?.drop();
  });
  afterEach(async () => {
    for (const rail of ['breb', 'ach', 'pse', 'breb-inbound']) {
      for (const date of [PREV, D, NEXT]) await call('DELETE', `/sandbox/reports/${rail}/${date}/discrepancies`);
    }
  });

  const line = (name: string, direction: string, amount: number, status: string, accepted: string, settled: string, counterparty: string, valueDate = D) => [
    ids[name]!.provider,
    ids[name]!.our,
    direction,
    String(amount),
    '0',
    status,
    valueDate,
    accepted,
    settled,
    counterparty,
  ];

  // ---- The reports as the providers' records have them ---------------------------------------

  it("Bre-B: the day's completed and failed transfers in settlement order, then a trailer that adds up; other days excluded", async () => {
    const r = await report('breb', D);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="breb-settlement-${D}.csv"`);
    expect(r.text.startsWith(`${HEADER.join(',')}\r\n`)).toBe(true);
    expect(r.text.endsWith('\r\n')).toBe(true);
    expect(r.header).toEqual(HEADER);
    expect(r.lines).toEqual([
      line('brebOk', 'OUT', 150_000, 'COMPLETED', bog(D, '08:00:00.000'), bog(D, '08:00:03.250'), '3001234567'),
      line('brebFail', 'OUT', 250_013, 'FAILED', bog(D, '09:00:00.000'), bog(D, '09:00:03.000'), '3001234567'),
    ]);
    expect(r.trailer).toEqual(['TRAILER', '2', '400013', '0']);
    expect(r.text.trimEnd().split('\r\n').at(-1)).toBe('TRAILER,2,400013,0');

    const prev = await report('breb', PREV);
    expect(prev.lines.map((l) => l[0])).toEqual([ids.brebPrevDay!.provider]);
    expect(prev.lines[0]![6]).toBe(PREV);
  });

  it("ACH: completed and failed lines with the account masked; pending transfers and the next day's are not in the report", async () => {
    const r = await report('ach', D);
    expect(r.lines).toEqual([
      line('achOk', 'OUT', 1_200_000, 'COMPLETED', bog(D, '07:00:00.000'), bog(D, '10:00:00.000'), '1007 ****8901'),
      line('achFail', 'OUT', 75_000, 'FAILED', bog(D, '07:30:00.000'), bog(D, '11:00:00.000'), '1007 ****8901'),
    ]);
    expect(r.trailer).toEqual(trailerOf(r.lines));
    expect(r.text).not.toContain(ACCOUNT);
    const next = await report('ach', NEXT);
    expect(next.lines.map((l) => l[0])).toEqual([ids.achNextDay!.provider]);
    for (const rep of [r, next, await report('ach', PREV)]) expect(rep.text).not.toContain(ids.achPending!.provider);
  });

  it('PSE: paid, failed, a reversal the same day (two lines) and one the next day (its PAID line now, REVERSED then); pending links not included', async () => {
    const r = await report('pse', D);
    expect(r.lines).toEqual([
      line('psePaid', 'IN', 500_000, 'PAID', bog(D, '11:00:00.000'), bog(D, '12:00:00.000'), TRICKY_PAYER),
      line('pseSameDayReversal', 'IN', 210_000, 'PAID', bog(D, '12:30:00.000'), bog(D, '13:00:00.000'), 'Ana María Gómez'),
      line('pseReversedNextDay', 'IN', 320_000, 'PAID', bog(D, '13:30:00.000'), bog(D, '14:00:00.000'), 'Ana María Gómez'),
      line('pseSameDayReversal', 'OUT', 210_000, 'REVERSED', bog(D, '12:30:00.000'), bog(D, '15:00:00.000'), 'Ana María Gómez'),
      line('pseFailed', 'IN', 99_000, 'FAILED', bog(D, '15:30:00.000'), bog(D, '16:00:00.000'), 'Ana María Gómez'),
    ]);
    expect(r.trailer).toEqual(['TRAILER', '5', String(500_000 + 210_000 + 320_000 + 210_000 + 99_000), '0']);
    // RFC 4180 quoting of a comma, quotes and a line break, read back by a CSV parser.
    expect(r.text).toContain('"Pérez, ""Toño"" & Cía\nLtda."');
    expect(r.text).not.toContain(ids.psePending!.our);
    const next = await report('pse', NEXT);
    expect(next.lines).toEqual([
      line('pseReversedNextDay', 'OUT', 320_000, 'REVERSED', bog(D, '13:30:00.000'), bog(NEXT, '09:00:00.000'), 'Ana María Gómez', NEXT),
    ]);
  });

  it('Bre-B inbound: RECEIVED lines with the payer, no id of ours; 23:59:59.999 Bogotá is still the day', async () => {
    const r = await report('breb-inbound', D);
    expect(r.lines).toEqual([
      [ids.in1!.provider, '', 'IN', '80000', '0', 'RECEIVED', D, bog(D, '17:00:00.000'), bog(D, '17:00:00.000'), 'Luis Pérez'],
      [ids.inLast!.provider, '', 'IN', '65000', '0', 'RECEIVED', D, bog(D, '23:59:59.999'), bog(D, '23:59:59.999'), 'Marta Ruiz'],
    ]);
    expect(r.trailer).toEqual(['TRAILER', '2', '145000', '0']);
    expect((await report('breb-inbound', NEXT)).lines).toEqual([]);
  });

  it("today's report covers what settled until now; a day with nothing is a header and TRAILER,0,0,0", async () => {
    await breb('brebToday', 42_000);
    const {
      rows: [t],
    } = await sql.query(`select to_char(outcome_at at time zone 'America/Bogota', 'YYYY-MM-DD') as day from sandbox.transfers where transaction_id = $1`, [
      ids.brebToday!.our,
    ]);
    const r = await report('breb', t.day);
    expect(r.lines.map((l) => [l[0], l[1], l[5], l[6]])).toEqual([[ids.brebToday!.provider, ids.brebToday!.our, 'COMPLETED', t.day]]);
    expect(Date.parse(r.lines[0]![8]!)).toBeLessThanOrEqual(Date.now());
    const empty = await report('ach', '2024-06-01');
    expect(empty.status).toBe(200);
    expect(empty.text).toBe(`${HEADER.join(',')}\r\nTRAILER,0,0,0\r\n`);
  });

  // ---- Discrepancies ---------------------------------------------------------------------------

  it('missing: drops the line (by our id), the trailer counts what is served; DELETE restores the report', async () => {
    const before = await report('ach', D);
    const r = await inject('ach', D, { kind: 'missing', ref: ids.achOk!.our });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^dsc_[0-9a-f]{24}$/),
      rail: 'ach',
      date: D,
      kind: 'missing',
      ref: ids.achOk!.our,
      createdAt: expect.any(String),
    });
    const after = await report('ach', D);
    expect(after.lines).toEqual(before.lines.filter((l) => l[1] !== ids.achOk!.our));
    expect(after.trailer).toEqual(['TRAILER', '1', '75000', '0']);
    expect((await call('DELETE', `/sandbox/reports/ach/${D}/discrepancies`)).body).toEqual({ deleted: 1 });
    expect(await report('ach', D)).toMatchObject({ lines: before.lines, trailer: before.trailer });
  });

  it('extra: a line we never sent, with a fresh provider id and no id of ours, the same on every download', async () => {
    const before = await report('breb', D);
    const r = await inject('breb', D, { kind: 'extra', amountCents: 777_00, counterparty: 'Desconocido' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      kind: 'extra',
      providerId: expect.stringMatching(/^brb_[0-9a-f]{24}$/),
      direction: 'OUT',
      amountCents: 77_700,
      feeCents: 0,
      status: 'COMPLETED',
      counterparty: 'Desconocido',
    });
    const after = await report('breb', D);
    expect(after.lines).toEqual([
      ...before.lines,
      [r.body.providerId, '', 'OUT', '77700', '0', 'COMPLETED', D, bog(D, '12:00:00.000'), bog(D, '12:00:00.000'), 'Desconocido'],
    ]);
    expect(after.trailer).toEqual(trailerOf(after.lines));
    expect((await report('breb', D)).text).toBe(after.text);
    const pseExtra = await inject('pse', D, { kind: 'extra' });
    expect(pseExtra.body).toMatchObject({
      providerId: expect.stringMatching(/^pse_[0-9a-f]{24}$/),
      direction: 'IN',
      amountCents: 100_000,
      status: 'PAID',
      counterparty: 'SIN IDENTIFICAR',
    });
  });

  it('amount: changes the amount (and the fee) of that line only, by provider id', async () => {
    const before = await report('breb', D);
    expect((await inject('breb', D, { kind: 'amount', ref: ids.brebOk!.provider, amountCents: 150_100, feeCents: 250 })).status).toBe(201);
    const after = await report('breb', D);
    expect(after.lines).toEqual([[...before.lines[0]!.slice(0, 3), '150100', '250', ...before.lines[0]!.slice(5)], before.lines[1]]);
    expect(after.trailer).toEqual(['TRAILER', '2', '400113', '250']);
  });

  it('status: changes the status of that line only', async () => {
    const before = await report('ach', D);
    await inject('ach', D, { kind: 'status', ref: ids.achFail!.our, status: 'COMPLETED' });
    const after = await report('ach', D);
    expect(after.lines).toEqual([before.lines[0], [...before.lines[1]!.slice(0, 5), 'COMPLETED', ...before.lines[1]!.slice(6)]]);
    expect(after.trailer).toEqual(before.trailer);
  });

  it('duplicate: serves the line twice, the trailer counts both', async () => {
    const before = await report('breb-inbound', D);
    await inject('breb-inbound', D, { kind: 'duplicate', ref: ids.in1!.provider });
    const after = await report('breb-inbound', D);
    expect(after.lines).toEqual([before.lines[0], before.lines[0], before.lines[1]]);
    expect(after.trailer).toEqual(['TRAILER', '3', '225000', '0']);
  });

  it("late_value_date: the line leaves its day's report and opens the next day's, with that value date and its original timestamps", async () => {
    const before = await report('pse', D);
    const nextBefore = await report('pse', NEXT);
    await inject('pse', D, { kind: 'late_value_date', ref: ids.psePaid!.our });
    const after = await report('pse', D);
    expect(after.lines).toEqual(before.lines.slice(1));
    expect(after.trailer).toEqual(trailerOf(before.lines.slice(1)));
    const next = await report('pse', NEXT);
    expect(next.lines).toEqual([[...before.lines[0]!.slice(0, 6), NEXT, ...before.lines[0]!.slice(7)], ...nextBefore.lines]);
    expect(next.trailer).toEqual(trailerOf(next.lines));
  });

  it("lineStatus picks one of a link's two lines the same day", async () => {
    const before = await report('pse', D);
    await inject('pse', D, { kind: 'missing', ref: ids.pseSameDayReversal!.our, lineStatus: 'REVERSED' });
    const after = await report('pse', D);
    expect(after.lines).toEqual(before.lines.filter((l) => !(l[1] === ids.pseSameDayReversal!.our && l[5] === 'REVERSED')));
    expect(after.lines.filter((l) => l[1] === ids.pseSameDayReversal!.our).map((l) => l[5])).toEqual(['PAID']);
  });

  it('trailer: states other figures than the lines served (a broken control total)', async () => {
    const before = await report('breb', D);
    await inject('breb', D, { kind: 'trailer', lines: 3 });
    const after = await report('breb', D);
    expect(after.lines).toEqual(before.lines);
    expect(after.trailer).toEqual(['TRAILER', '3', '400013', '0']);
  });

  it("lists a report's discrepancies in injection order and deletes one by id", async () => {
    const a = (await inject('breb', D, { kind: 'duplicate', ref: ids.brebOk!.our })).body;
    const b = (await inject('breb', D, { kind: 'status', ref: ids.brebFail!.our, status: 'COMPLETED' })).body;
    expect((await call('GET', `/sandbox/reports/breb/${D}/discrepancies`)).body).toEqual({ items: [a, b] });
    expect((await call('GET', `/sandbox/reports/breb/${NEXT}/discrepancies`)).body).toEqual({ items: [] });
    expect((await call('DELETE', `/sandbox/reports/breb/${D}/discrepancies/${a.id}`)).body).toEqual({ deleted: 1 });
    expect(await call('DELETE', `/sandbox/reports/breb/${D}/discrepancies/${a.id}`)).toMatchObject({ status: 404, body: { error: 'DISCREPANCY_NOT_FOUND' } });
    expect((await call('GET', `/sandbox/reports/breb/${D}/discrepancies`)).body).toEqual({ items: [b] });
    expect((await report('breb', D)).lines.map((l) => l[5])).toEqual(['COMPLETED', 'COMPLETED']);
  });

  // ---- Bad input -------------------------------------------------------------------------------

  it('answers 400 for a bad rail or date, 404 for a report not yet published', async () => {
    const bad = async (path: string) => {
      const r = await call('GET', path);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('INVALID_REQUEST');
      return (r.body.details.fields as Array<{ path: string }>).map((f) => f.path);
    };
    expect(await bad(`/sandbox/reports/swift/${D}.csv`)).toEqual(['path.rail']);
    expect(await bad('/sandbox/reports/breb/2025-02-30.csv')).toEqual(['path.date']);
    expect(await bad('/sandbox/reports/breb/14-03-2025.csv')).toEqual(['path.date']);
    expect(await bad(`/sandbox/reports/breb/${D}`)).toEqual(['path.date']);
    expect(await bad(`/sandbox/reports/breb/${D}.json`)).toEqual(['path.date']);
    expect(await bad('/sandbox/reports/BREB/yesterday.csv')).toEqual(['path.rail', 'path.date']);
    expect(await bad(`/sandbox/reports/wire/${D}/discrepancies`)).toEqual(['path.rail']);
    const future = await call('GET', '/sandbox/reports/breb/2999-01-01.csv');
    expect(future).toMatchObject({ status: 404, body: { error: 'REPORT_NOT_AVAILABLE' } });
    expect(future.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it("refuses a bad discrepancy: 400 for the body, 404 for a line the day's report does not have", async () => {
    const fields = async (body: unknown, rail = 'breb') => {
      const r = await inject(rail, D, body);
      expect(r.status).toBe(400);
      return (r.body.details.fields as Array<{ path: string }>).map((f) => f.path);
    };
    expect(await fields({ kind: 'teleport', ref: 'x' })).toEqual(['kind']);
    expect(await fields({ kind: 'missing' })).toEqual(['ref']);
    expect(await fields({ kind: 'extra', ref: 'x' })).toEqual(['ref']);
    expect(await fields({ kind: 'amount', ref: ids.brebOk!.our })).toEqual(['amountCents']);
    expect(await fields({ kind: 'amount', ref: ids.brebOk!.our, amountCents: 1.5 })).toEqual(['amountCents']);
    expect(await fields({ kind: 'status', ref: ids.brebOk!.our, status: 'PAID' })).toEqual(['status']);
    expect(await fields({ kind: 'missing', ref: ids.psePaid!.our, lineStatus: 'COMPLETED' }, 'pse')).toEqual(['lineStatus']);
    expect(await fields({ kind: 'trailer' })).toEqual(['lines']);
    expect((await call('POST', `/sandbox/reports/breb/${D}/discrepancies`, 'kind=missing', { 'content-type': 'text/plain' })).status).toBe(415);

    const nf = await inject('breb', D, { kind: 'missing', ref: 'no-such-transfer' });
    expect(nf).toMatchObject({ status: 404, body: { error: 'REPORT_LINE_NOT_FOUND' } });
    // A line of another day, a pending transfer, and a status the line does not have.
    expect((await inject('breb', D, { kind: 'duplicate', ref: ids.brebPrevDay!.our })).status).toBe(404);
    expect((await inject('ach', D, { kind: 'duplicate', ref: ids.achPending!.our })).status).toBe(404);
    expect((await inject('pse', D, { kind: 'missing', ref: ids.psePaid!.our, lineStatus: 'REVERSED' })).status).toBe(404);
    expect((await call('GET', `/sandbox/reports/breb/${D}/discrepancies`)).body).toEqual({ items: [] });
  });

  // ---- Streaming -------------------------------------------------------------------------------

  describe('a large report', () => {
    const BIG_DAY = '2025-01-10';
    const ROWS = 50_000;

    beforeAll(async () => {
      // Inserted directly: 50,000 ACH transfers settled on BIG_DAY, one every 1.7 s from 00:00 Bogotá.
      await sql.query(
        `
        insert into sandbox.transfers (provider_transfer_id, transaction_id, rail, amount_cents, status, callback_url, request,
                                       outcome_due_at, outcome_at, created_at)
        select 'ach_big_' || lpad(g::text, 8, '0'), 'big-' || g, 'ACH', 1000 + g, case when g % 10 = 0 then 'FAILED' else 'COMPLETED' end,
               'http://127.0.0.1:9/none', jsonb_build_object('bankCode', '1007', 'accountNumber', '99990000' || lpad((g % 1000)::text, 4, '0')),
               t, t, t - interval '3 seconds'
          from generate_series(1, $1::int) g, lateral (select $2::timestamptz + g * interval '1.7 seconds' as t) x`,
        [ROWS, bog(BIG_DAY, '00:00:00.000')],
      );
    }, 60_000);

    it(`streams ${ROWS.toLocaleString('en')} lines with bounded memory (prints time and RSS)`, async () => {
      global.gc?.();
      const rssBefore = process.memoryUsage().rss;
      let peak = rssBefore;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 20);
      const started = performance.now();
      const res = await fetch(`${sandbox.url}/sandbox/reports/ach/${BIG_DAY}.csv`);
      expect(res.status).toBe(200);
      expect(res.headers.get('transfer-encoding')).toBe('chunked');
      let records = 0;
      let bytes = 0;
      let sum = 0n;
      let last: string[] = [];
      let previous = '';
      let outOfOrder = 0;
      const parser = Readable.fromWeb(res.body as never)
        .on('data', (c: Buffer) => {
          bytes += c.length;
        })
        .pipe(parseCsv({ relax_column_count: true }));
      for await (const rec of parser as AsyncIterable<string[]>) {
        records += 1;
        if (records > 1 && rec[0] !== 'TRAILER') {
          sum += BigInt(rec[3]!);
          if (rec[8]! < previous) outOfOrder += 1; // settlement order
          previous = rec[8]!;
        }
        last = rec;
      }
      const ms = performance.now() - started;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      expect(records).toBe(ROWS + 2);
      expect(outOfOrder).toBe(0);
      expect(last).toEqual(['TRAILER', String(ROWS), String(sum), '0']);
      expect(sum).toBe(BigInt(ROWS) * 1000n + BigInt((ROWS * (ROWS + 1)) / 2));
      // Timings and memory are printed, not asserted (they depend on the machine).
      console.log(
        `settlement report: ${ROWS} lines, ${(bytes / 1e6).toFixed(1)} MB in ${ms.toFixed(0)} ms; ` +
          `RSS before ${(rssBefore / 2 ** 20).toFixed(0)} MiB, peak ${(peak / 2 ** 20).toFixed(0)} MiB (+${((peak - rssBefore) / 2 ** 20).toFixed(0)} MiB; client and server in this process)`,
      );
    }, 120_000);

    it('a download cut short releases its database connection (more aborted downloads than the pool holds)', async () => {
      for (let i = 0; i < 6; i++) {
        const ac = new AbortController();
        const res = await fetch(`${sandbox.url}/sandbox/reports/ach/${BIG_DAY}.csv`, { signal: ac.signal });
        const reader = res.body!.getReader();
        await reader.read();
        ac.abort();
        await reader.cancel().catch(() => undefined);
      }
      // The pool (4 connections) would be exhausted if any aborted download still held one.
      const r = await eventually(async () => {
        const rep = await report('breb', D);
        return rep.status === 200 ? rep : undefined;
      }, 10_000);
      expect(r.trailer).toEqual(['TRAILER', '2', '400013', '0']);
      expect((await call('GET', '/readyz')).status).toBe(200);
    }, 60_000);

    it('a failure while streaming cuts the response short: no trailer, the reader sees an error', async () => {
      const res = await fetch(`${sandbox.url}/sandbox/reports/ach/${BIG_DAY}.csv`);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = decoder.decode((await reader.read()).value, { stream: true });
      // The report's connection (idle in its transaction while the reader waits) is killed.
      const killed = await sql.query(
        `select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and query like 'fetch forward % from report_lines'`,
      );
      expect(killed.rowCount).toBe(1);
      await expect(
        (async () => {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            text += decoder.decode(value, { stream: true });
          }
        })(),
      ).rejects.toThrow();
      expect(text.startsWith(HEADER.join(','))).toBe(true);
      expect(text).not.toContain('TRAILER');
      const after = await eventually(async () => {
        const rep = await report('breb', D);
        return rep.status === 200 ? rep : undefined;
      }, 10_000);
      expect(after.trailer).toEqual(['TRAILER', '2', '400013', '0']);
    }, 60_000);

    it('HEAD answers the headers and releases its connection too', async () => {
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${sandbox.url}/sandbox/reports/ach/${BIG_DAY}.csv`, { method: 'HEAD' });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      }
      const r = await eventually(async () => {
        const rep = await report('breb', D);
        return rep.status === 200 ? rep : undefined;
      }, 10_000);
      expect(r.trailer).toEqual(['TRAILER', '2', '400013', '0']);
    }, 60_000);
  });
});
