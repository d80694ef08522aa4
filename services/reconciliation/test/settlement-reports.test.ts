import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createTestDatabase, eventually, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '@wallet/sandbox/testing';
import { HttpReportSource, ReportNotAvailableError } from '../src/adapters/http-report-source.js';
import { SpillSorter } from '../src/adapters/spill-sorter.js';
import { reconcile, type ReconcileResult } from '../src/app/reconcile.js';
import type { OurRecord } from '../src/domain/matching.js';
import { REPORT_RAILS, type ReportRail } from '../src/domain/report.js';
import { ArrayOurRecords, InMemoryBreakSink } from '../src/testing.js';

/**
 * The engine against the real sandbox (docs/sandbox.md "Settlement reports"): movements made
 * through the providers' APIs and moved by SQL to fixed Bogotá times (as the sandbox's own tests
 * do), reports downloaded over HTTP, our books built from the sandbox's own movements (what the
 * providers settled, before any discrepancy), then every kind of discrepancy injected: each is found
 * exactly, and nothing else.
 */

const D = '2025-03-14';
const NEXT = '2025-03-15';
const bog = (date: string, time: string) => new Date(`${date}T${time}-05:00`).toISOString();
const TRICKY_PAYER = 'Pérez, "Toño" & Cía\nLtda.';

let seq = 0;
const uid = (label: string) => `${label}-${process.pid}-${Date.now().toString(36)}-${++seq}`;

describe("reconciling the sandbox's settlement reports", () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let callbacks: Server;
  let callbackUrl: string;
  let sql: pg.Client;
  let source: HttpReportSource;
  let ours: ArrayOurRecords;

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${sandbox.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  const inject = async (rail: ReportRail, date: string, body: Record<string, unknown>) => {
    const r = await call('POST', `/sandbox/reports/${rail}/${date}/discrepancies`, body);
    expect(r.status).toBe(201);
    return r.body as { id: string; providerId?: string };
  };

  /** One reconciliation run: the report over HTTP, a sort that spills every 2 lines (runs on disk even here). */
  async function recon(rail: ReportRail, date: string, sink = new InMemoryBreakSink()): Promise<{ r: ReconcileResult; sink: InMemoryBreakSink }> {
    const r = await reconcile(rail, date, await source.open(rail, date), { ours, sink, sorter: () => new SpillSorter({ runLines: 2 }) });
    return { r, sink };
  }
  const reconciled = (r: ReconcileResult) => {
    if (r.outcome !== 'RECONCILED') throw new Error(`rejected: ${r.reason} ${r.detail}`);
    return r;
  };

  // ---- The day's movements (as in services/sandbox/test/settlement-reports.test.ts) -------------

  const ids: Record<string, { our: string; provider: string }> = {};

  async function breb(name: string, amountCents: number): Promise<void> {
    const key = '3001234567';
    const entry = (await call('GET', `/breb/directory/keys/${key}`)).body;
    const transactionId = uid(name);
    const r = await call('POST', '/breb/rail/transfers', {
      transactionId,
      amountCents,
      anchorHandle: entry.anchorHandle,
      keyType: 'AUTO',
      keyValue: key,
      targetName: 'CAMILO MARIN',
      targetDocument: '40828038',
      callbackUrl,
    });
    expect(r.status).toBe(202);
    ids[name] = { our: transactionId, provider: r.body.providerTransferId };
    await eventually(async () => (await call('GET', `/breb/rail/transfers/${transactionId}`)).body.status !== 'PENDING');
  }
  async function ach(name: string, amountCents: number, outcome?: 'complete' | 'fail'): Promise<void> {
    const transactionId = uid(name);
    const r = await call('POST', '/ach/transfers', {
      transactionId,
      amountCents,
      bankCode: '1007',
      accountTypeId: 20,
      accountNumber: '12345678901',
      documentTypeId: 1,
      documentNumber: '40828038',
      holderName: 'CAMILO MARIN',
      callbackUrl,
    });
    expect(r.status).toBe(202);
    ids[name] = { our: transactionId, provider: r.body.providerTransferId };
    if (outcome) expect((await call('POST', `/sandbox/rails/ach/transfers/${transactionId}/${outcome}`, {})).status).toBe(200);
  }
  async function pse(name: string, amountCents: number, outcome?: 'APPROVED' | 'REJECTED', payerName = 'Ana María Gómez'): Promise<void> {
    const depositId = `dep_${uid(name)}`;
    const r = await call('POST', '/pse/links', {
      depositId,
      amountCents,
      companyName: 'Ferretería El Tornillo',
      payerName,
      payerEmail: 'ana@example.com',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      callbackUrl,
    });
    expect(r.status).toBe(201);
    const [row] = (await sql.query('select provider_transfer_id from sandbox.pse_links where deposit_id = $1', [depositId])).rows;
    ids[name] = { our: depositId, provider: row.provider_transfer_id };
    if (outcome) expect((await call('POST', `/sandbox/pse/${depositId}/pay`, { outcome, payerBank: 'Bancolombia' })).status).toBe(200);
  }
  async function inbound(name: string, keyValue: string, amountCents: number, payerName: string): Promise<void> {
    const r = await call('POST', '/sandbox/breb/incoming', { keyValue, amountCents, payerName, payerDocument: 'CC 79123456', payerBank: 'Davivienda' });
    expect(r.status).toBe(202);
    ids[name] = { our: `dep_in_${r.body.providerTransferId}`, provider: r.body.providerTransferId };
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

  /**
   * Our books, as the owning services would report them: one record per settlement the providers
   * made (transfers' outcomes, PSE payments, rejections and reversals, inbound payments), read
   * here from the sandbox's own movements because this slice has no owning service to ask yet.
   */
  async function booksFromSandbox(): Promise<ArrayOurRecords> {
    const iso = (c: string) => `to_char(${c} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    const transfers = (
      await sql.query(`select transaction_id, provider_transfer_id, rail, status, amount_cents::text, ${iso('outcome_at')} as at
                                          from sandbox.transfers where status <> 'PENDING'`)
    ).rows;
    const rec = (ourId: string, providerId: string, status: OurRecord['status'], amount: string, settledAt: string): OurRecord => ({
      ourId,
      providerId,
      status,
      amountCents: BigInt(amount),
      settledAt,
    });
    const links = (
      await sql.query(`select deposit_id, provider_transfer_id, status, amount_cents::text, ${iso('paid_at')} as paid,
                                           ${iso('reversed_at')} as reversed, ${iso('outcome_at')} as outcome from sandbox.pse_links`)
    ).rows;
    const incoming = (await sql.query(`select provider_transfer_id, amount_cents::text, ${iso('received_at')} as at from sandbox.breb_incoming`)).rows;
    return new ArrayOurRecords(
      {
        breb: transfers.filter((t) => t.rail === 'BREB').map((t) => rec(t.transaction_id, t.provider_transfer_id, t.status, t.amount_cents, t.at)),
        ach: transfers.filter((t) => t.rail === 'ACH').map((t) => rec(t.transaction_id, t.provider_transfer_id, t.status, t.amount_cents, t.at)),
        pse: links.flatMap((l) => [
          ...(l.paid ? [rec(l.deposit_id, l.provider_transfer_id, 'ASSIGNED', l.amount_cents, l.paid)] : []),
          ...(l.reversed ? [rec(l.deposit_id, l.provider_transfer_id, 'REVERSED', l.amount_cents, l.reversed)] : []),
          ...(l.status === 'FAILED' ? [rec(l.deposit_id, l.provider_transfer_id, 'FAILED', l.amount_cents, l.outcome)] : []),
        ]),
        'breb-inbound': incoming.map((i) => ({ ...rec(`dep_in_${i.provider_transfer_id}`, i.provider_transfer_id, 'ASSIGNED', i.amount_cents, i.at) })),
      },
      2,
    );
  }

  beforeAll(async () => {
    tdb = await createTestDatabase('recon_reports');
    callbacks = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end('{}'));
    });
    await new Promise<void>((r) => callbacks.listen(0, '127.0.0.1', r));
    callbackUrl = `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/webhooks`;
    sandbox = await startSandbox({
      databaseUrl: tdb.url,
      port: 0,
      env: { SANDBOX_CALLBACK_SECRET: 'recon-test-secret', SANDBOX_POLL_MS: '50', SANDBOX_BREB_CONFIRM_MS: '100', SANDBOX_ACH_CONFIRM_MS: '3600000' },
    });
    sql = new pg.Client({ connectionString: tdb.url });
    await sql.connect();
    source = new HttpReportSource({ reportsUrl: `${sandbox.url}/sandbox/reports`, headersTimeoutMs: 10_000, idleTimeoutMs: 10_000 });

    await breb('brebOk', 150_000);
    await breb('brebFail', 250_013); // the 13 rule: FAILED
    await breb('brebNext', 90_000);
    await ach('achOk', 1_200_000, 'complete');
    await ach('achFail', 75_000, 'fail');
    await ach('achPending', 44_000);
    await pse('psePaid', 500_000, 'APPROVED', TRICKY_PAYER);
    await pse('pseSameDayReversal', 210_000, 'APPROVED');
    await pse('pseReversedNextDay', 320_000, 'APPROVED');
    await pse('pseFailed', 99_000, 'REJECTED');
    await pse('psePending', 12_000);
    for (const name of ['pseSameDayReversal', 'pseReversedNextDay']) expect((await call('POST', `/sandbox/pse/${ids[name]!.our}/reverse`)).status).toBe(200);
    const key = `@recon-${process.pid.toString(36)}-${Date.now().toString(36)}`;
    expect(
      (
        await call('POST', '/breb/directory/registrations', {
          keyValue: key,
          keyType: 'ALPHANUM',
          holderName: 'Ferretería El Tornillo',
          participantCallbackUrl: callbackUrl,
        })
      ).status,
    ).toBe(201);
    await inbound('in1', key, 80_000, 'Luis Pérez');
    await inbound('inLast', key, 65_000, 'Marta Ruiz');

    await setTransfer('brebOk', bog(D, '08:00:00.000'), bog(D, '08:00:03.250'));
    await setTransfer('brebFail', bog(D, '09:00:00.000'), bog(D, '09:00:03.000'));
    await setTransfer('brebNext', bog(NEXT, '00:00:00.000'), bog(NEXT, '00:00:02.000'));
    await setTransfer('achOk', bog(D, '07:00:00.000'), bog(D, '10:00:00.000'));
    await setTransfer('achFail', bog(D, '07:30:00.000'), bog(D, '11:00:00.000'));
    await setLink('psePaid', { created: bog(D, '11:00:00.000'), paid: bog(D, '12:00:00.000') });
    await setLink('pseSameDayReversal', { created: bog(D, '12:30:00.000'), paid: bog(D, '13:00:00.000'), reversed: bog(D, '15:00:00.000') });
    await setLink('pseReversedNextDay', { created: bog(D, '13:30:00.000'), paid: bog(D, '14:00:00.000'), reversed: bog(NEXT, '09:00:00.000') });
    await setLink('pseFailed', { created: bog(D, '15:30:00.000'), outcome: bog(D, '16:00:00.000') });
    await sql.query('update sandbox.breb_incoming set received_at = $2 where provider_transfer_id = $1', [ids.in1!.provider, bog(D, '17:00:00.000')]);
    await sql.query('update sandbox.breb_incoming set received_at = $2 where provider_transfer_id = $1', [ids.inLast!.provider, bog(D, '23:59:59.999')]);
    ours = await booksFromSandbox();
  }, 60_000);

  afterAll(async () => {
    await source?.close();
    await sql?.end();
    await sandbox?.stop();
    callbacks?.closeAllConnections();
    await new Promise((r) => callbacks?.close(r));
    await tdb?.drop();
  });
  afterEach(async () => {
    for (const rail of REPORT_RAILS) for (const date of [D, NEXT]) await call('DELETE', `/sandbox/reports/${rail}/${date}/discrepancies`);
  });

  // ---- Clean reports ----------------------------------------------------------------------------

  it('clean reports of every rail, two days: every line matched to one of our records, zero breaks', async () => {
    const lines: Record<string, number> = {
      [`breb ${D}`]: 2,
      [`ach ${D}`]: 2,
      [`pse ${D}`]: 5,
      [`breb-inbound ${D}`]: 2,
      [`breb ${NEXT}`]: 1,
      [`ach ${NEXT}`]: 0,
      [`pse ${NEXT}`]: 1,
      [`breb-inbound ${NEXT}`]: 0,
    };
    for (const date of [D, NEXT]) {
      for (const rail of REPORT_RAILS) {
        const { r, sink } = await recon(rail, date);
        const ok = reconciled(r);
        expect([`${rail} ${date}`, ok.report.lines, ok.matched.count, ok.ours.count, ok.breaks.total]).toEqual([
          `${rail} ${date}`,
          lines[`${rail} ${date}`],
          lines[`${rail} ${date}`],
          lines[`${rail} ${date}`],
          0,
        ]);
        expect(ok.matched.amountCents).toBe(ok.report.amountCents);
        expect(sink.calls).toBe(0);
      }
    }
  });

  // ---- One discrepancy of each kind ---------------------------------------------------------------

  it('missing: the line is not served → missing at the provider, our id', async () => {
    await inject('ach', D, { kind: 'missing', ref: ids.achOk!.our });
    const { r, sink } = await recon('ach', D);
    expect(sink.keys()).toEqual([`ach:${D}:missing_at_provider:${ids.achOk!.our}`]);
    expect(reconciled(r).matched.count).toBe(1);
    expect(sink.byKey.get(`ach:${D}:missing_at_provider:${ids.achOk!.our}`)).toMatchObject({
      ourId: ids.achOk!.our,
      ours: { amountCents: 1_200_000n, status: 'COMPLETED' },
    });
  });

  it("extra: a line we never sent → missing in our books, the provider's id", async () => {
    const extra = await inject('breb', D, { kind: 'extra', amountCents: 77_700 });
    const { r, sink } = await recon('breb', D);
    expect(sink.keys()).toEqual([`breb:${D}:missing_in_our_books:${extra.providerId}`]);
    expect(sink.byKey.get(sink.keys()[0]!)).toMatchObject({ theirs: { amountCents: 77_700n, ourId: null, counterparty: 'SIN IDENTIFICAR' } });
    expect(reconciled(r).matched.count).toBe(2);
  });

  it('amount: another amount (and fee) on one line → one amount mismatch, both figures on the break', async () => {
    await inject('breb', D, { kind: 'amount', ref: ids.brebOk!.provider, amountCents: 150_100, feeCents: 250 });
    const { sink } = await recon('breb', D);
    expect(sink.keys()).toEqual([`breb:${D}:amount_mismatch:${ids.brebOk!.provider}`]);
    expect(sink.byKey.get(sink.keys()[0]!)).toMatchObject({ ours: { amountCents: 150_000n }, theirs: { amountCents: 150_100n, feeCents: 250n } });
  });

  it('status: a failed transfer reported COMPLETED → one status mismatch', async () => {
    await inject('ach', D, { kind: 'status', ref: ids.achFail!.our, status: 'COMPLETED' });
    const { sink } = await recon('ach', D);
    expect(sink.keys()).toEqual([`ach:${D}:status_mismatch:${ids.achFail!.provider}`]);
    expect(sink.byKey.get(sink.keys()[0]!)).toMatchObject({ ours: { status: 'FAILED' }, theirs: { status: 'COMPLETED' } });
  });

  it('duplicate: an inbound payment served twice → matched once, one duplicate break', async () => {
    await inject('breb-inbound', D, { kind: 'duplicate', ref: ids.in1!.provider });
    const { r, sink } = await recon('breb-inbound', D);
    expect(sink.keys()).toEqual([`breb-inbound:${D}:duplicate:${ids.in1!.provider}`]);
    expect(sink.byKey.get(sink.keys()[0]!)).toMatchObject({ copies: 1, ourId: ids.in1!.our });
    expect(reconciled(r).matched.count).toBe(2);
  });

  it("late_value_date: the line moves to the next day's report → missing at the provider that day, a value-date break the next", async () => {
    await inject('pse', D, { kind: 'late_value_date', ref: ids.psePaid!.our });
    const day = await recon('pse', D);
    expect(day.sink.keys()).toEqual([`pse:${D}:missing_at_provider:${ids.psePaid!.our}:payment`]);
    const next = await recon('pse', NEXT);
    expect(next.sink.keys()).toEqual([`pse:${NEXT}:value_date_mismatch:${ids.psePaid!.provider}:payment`]);
    expect(next.sink.byKey.get(next.sink.keys()[0]!)).toMatchObject({
      ourId: ids.psePaid!.our,
      ours: { settledDate: D },
      theirs: { valueDate: NEXT, counterparty: TRICKY_PAYER },
    });
    expect(reconciled(next.r).matched.count).toBe(1); // the day's own reversal
  });

  it('trailer: control totals that do not add up → the report is rejected, nothing matched, nothing opened', async () => {
    await inject('breb', D, { kind: 'trailer', lines: 3 });
    const { r, sink } = await recon('breb', D);
    expect(r).toMatchObject({ outcome: 'REJECTED', reason: 'TRAILER_MISMATCH', detail: expect.stringContaining('lines 3 stated, 2 read') });
    expect(sink.calls).toBe(0);
  });

  it('a transfer our books still hold PENDING (its callback never came) while the provider settled it → one status break', async () => {
    const all = await booksFromSandbox();
    const breb: OurRecord[] = [];
    for await (const batch of all.settled('breb', D)) breb.push(...batch);
    const waiting = new ArrayOurRecords({
      breb: breb.map((r) => (r.ourId === ids.brebOk!.our ? { ...r, status: 'PENDING' as const, settledAt: null } : r)),
    });
    const sink = new InMemoryBreakSink();
    const r = reconciled(await reconcile('breb', D, await source.open('breb', D), { ours: waiting, sink, sorter: () => new SpillSorter() }));
    expect(sink.keys()).toEqual([`breb:${D}:status_mismatch:${ids.brebOk!.provider}`]);
    expect(sink.byKey.get(sink.keys()[0]!)).toMatchObject({ ours: { status: 'PENDING' }, theirs: { status: 'COMPLETED', amountCents: 150_000n } });
    expect([r.matched.count, r.ours.count]).toEqual([1, 1]);
  });

  // ---- Together, and again ----------------------------------------------------------------------

  it('five kinds on one PSE report (legs told apart), found exactly; a re-run finds the same keys and opens nothing', async () => {
    await inject('pse', D, { kind: 'missing', ref: ids.pseFailed!.our });
    await inject('pse', D, { kind: 'amount', ref: ids.psePaid!.our, amountCents: 499_900 });
    await inject('pse', D, { kind: 'status', ref: ids.pseSameDayReversal!.our, lineStatus: 'REVERSED', status: 'PAID' });
    await inject('pse', D, { kind: 'duplicate', ref: ids.pseReversedNextDay!.our });
    const extra = await inject('pse', D, { kind: 'extra' });
    const sink = new InMemoryBreakSink();
    const first = reconciled((await recon('pse', D, sink)).r);
    const expected = [
      `pse:${D}:missing_at_provider:${ids.pseFailed!.our}:payment`,
      `pse:${D}:amount_mismatch:${ids.psePaid!.provider}:payment`,
      `pse:${D}:status_mismatch:${ids.pseSameDayReversal!.provider}:reversal`,
      `pse:${D}:duplicate:${ids.pseReversedNextDay!.provider}:payment`,
      `pse:${D}:missing_in_our_books:${extra.providerId}:payment`,
    ].sort();
    expect(sink.keys()).toEqual(expected);
    expect([first.breaks.total, first.breaks.opened, first.matched.count]).toEqual([5, 5, 2]); // the reversal's payment leg and pseReversedNextDay
    const second = reconciled((await recon('pse', D, sink)).r);
    expect([second.breaks.total, second.breaks.opened]).toEqual([5, 0]);
    expect(sink.keys()).toEqual(expected);
  });

  it('a report not yet published: ReportNotAvailableError, nothing reconciled', async () => {
    await expect(source.open('breb', '2999-01-01')).rejects.toBeInstanceOf(ReportNotAvailableError);
  });
});
