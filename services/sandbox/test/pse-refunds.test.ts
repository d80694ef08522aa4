import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { CallbackReceiver, SECRET, api, txId } from './support.js';

/**
 * PSE refunds (docs/sandbox.md "PSE gateway"): POST /pse/refunds refunds all or part of a paid link
 * to its payer, several times, while the refunds' sum stays within the paid amount; decided under the
 * link's row lock. The pse settlement report shows each refund as a REFUNDED (OUT) line.
 */

const D = '2025-03-14';
const bog = (date: string, time: string) => new Date(`${date}T${time}-05:00`).toISOString();
const retId = () => `ret_${[...Array<number>(24)].map(() => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(Math.random() * 36)]).join('')}`;

describe('PSE gateway: refunds', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let receiver: CallbackReceiver;
  let sql: pg.Client;
  const call = api(() => sandbox.url);

  /** A link, paid (APPROVED) unless told otherwise; its depositId and providerTransferId. */
  async function link(name: string, amountCents: number, outcome: 'APPROVED' | 'REJECTED' | null = 'APPROVED', expiresAt?: string) {
    const depositId = txId(`dep_${name}`);
    const r = await call('POST', '/pse/links', {
      depositId,
      amountCents,
      companyName: 'Ferretería El Tornillo S.A.S.',
      payerName: 'Ana María Gómez',
      payerEmail: 'ana@example.com',
      expiresAt: expiresAt ?? new Date(Date.now() + 3_600_000).toISOString(),
      callbackUrl: receiver.urlFor(name),
    });
    expect(r.status).toBe(201);
    if (outcome) expect((await call('POST', `/sandbox/pse/${depositId}/pay`, { outcome, payerBank: 'Bancolombia' })).status).toBe(200);
    const [row] = (await sql.query('select provider_transfer_id from sandbox.pse_links where deposit_id = $1', [depositId])).rows;
    return { depositId, providerTransferId: row.provider_transfer_id as string };
  }
  const refund = (depositId: string, amountCents: unknown, refundId = retId()) => call('POST', '/pse/refunds', { refundId, depositId, amountCents });

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_pse_refunds');
    receiver = await CallbackReceiver.start();
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { SANDBOX_CALLBACK_SECRET: SECRET, SANDBOX_POLL_MS: '50' } });
    sql = new pg.Client({ connectionString: tdb.url });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await sandbox?.stop();
    await receiver?.close();
    await tdb?.drop();
  });
  afterEach(async () => {
    await call('POST', '/sandbox/faults', { pse: 'up' });
  });

  it('refunds part of a paid payment, then more, up to its amount; the answer names the link', async () => {
    const { depositId, providerTransferId } = await link('partial', 100_000);
    const first = retId();
    const a = await refund(depositId, 30_000, first);
    expect(a.status).toBe(201);
    expect(a.headers.get('idempotent-replayed')).toBeNull();
    expect(a.body).toEqual({
      refundId: first,
      depositId,
      providerTransferId,
      status: 'REFUNDED',
      amountCents: 30_000,
      refundedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    const b = await refund(depositId, 50_000);
    expect(b).toMatchObject({ status: 201, body: { status: 'REFUNDED', amountCents: 50_000 } });
    const c = await refund(depositId, 20_000);
    expect(c).toMatchObject({ status: 201, body: { amountCents: 20_000 } });
    const over = await refund(depositId, 1);
    expect(over).toMatchObject({ status: 409, body: { error: 'REFUND_EXCEEDS_PAYMENT', details: { remainingCents: 0 } } });
    expect(over.body.message).toBe('El pago ya fue reembolsado por completo.');
    const rows = (await sql.query('select amount_cents::int as a from sandbox.pse_refunds where deposit_id = $1 order by refunded_at', [depositId])).rows;
    expect(rows.map((r) => r.a)).toEqual([30_000, 50_000, 20_000]);
  });

  it('the same refundId again: the same terms replay (200, same refundedAt), other terms are 409 ALREADY_REFUNDED', async () => {
    const { depositId } = await link('replay', 80_000);
    const other = await link('replay-other', 80_000);
    const id = retId();
    const a = await refund(depositId, 10_000, id);
    expect(a.status).toBe(201);
    const again = await refund(depositId, 10_000, id);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(a.body);
    expect(await refund(depositId, 10_001, id)).toMatchObject({ status: 409, body: { error: 'ALREADY_REFUNDED' } });
    expect(await refund(other.depositId, 10_000, id)).toMatchObject({ status: 409, body: { error: 'ALREADY_REFUNDED' } });
    const { rows } = await sql.query('select count(*)::int as n, sum(amount_cents)::int as s from sandbox.pse_refunds where deposit_id = any($1)', [
      [depositId, other.depositId],
    ]);
    expect(rows[0]).toEqual({ n: 1, s: 10_000 });
  });

  it('over the remaining amount: 409 REFUND_EXCEEDS_PAYMENT with details.remainingCents, nothing recorded', async () => {
    const { depositId } = await link('over', 50_000);
    expect((await refund(depositId, 20_000)).status).toBe(201);
    const r = await refund(depositId, 30_001);
    expect(r).toMatchObject({ status: 409, body: { error: 'REFUND_EXCEEDS_PAYMENT', details: { remainingCents: 30_000 } } });
    expect(r.body.message).toBe('El reembolso supera el saldo por reembolsar del pago (quedan 30000 centavos).');
    expect((await refund(depositId, 30_000)).status).toBe(201);
    expect((await sql.query('select count(*)::int as n from sandbox.pse_refunds where deposit_id = $1', [depositId])).rows[0].n).toBe(2);
  });

  it('a link not paid (pending, expired, failed, reversed) is 409 NOT_PAID; an unknown deposit 404; bad input 400', async () => {
    const pending = await link('pending', 40_000, null);
    const expired = await link('expired', 40_000, null, new Date(Date.now() + 1_000).toISOString());
    await sql.query(`update sandbox.pse_links set expires_at = now() - interval '1 minute' where deposit_id = $1`, [expired.depositId]);
    const failed = await link('failed', 40_000, 'REJECTED');
    const reversed = await link('reversed', 40_000);
    expect((await call('POST', `/sandbox/pse/${reversed.depositId}/reverse`)).status).toBe(200);
    for (const [l, status] of [
      [pending, 'PENDING'],
      [expired, 'EXPIRED'],
      [failed, 'FAILED'],
      [reversed, 'REVERSED'],
    ] as const) {
      const r = await refund(l.depositId, 1_000);
      expect(r).toMatchObject({ status: 409, body: { error: 'NOT_PAID', details: { status } } });
      expect(r.body.message).toBe(`Solo un pago aprobado se puede reembolsar (estado: ${status}).`);
    }
    expect(await refund('dep_unknown', 1_000)).toMatchObject({ status: 404, body: { error: 'LINK_NOT_FOUND' } });
    const paid = await link('bad-input', 40_000);
    for (const amount of [0, -5, 10.5, '1000', null]) {
      const r = await refund(paid.depositId, amount);
      expect(r).toMatchObject({ status: 400, body: { error: 'INVALID_REQUEST' } });
      expect(r.body.details.fields.map((f: { path: string }) => f.path)).toEqual(['amountCents']);
    }
    expect((await call('POST', '/pse/refunds', { depositId: paid.depositId, amountCents: 1_000 })).status).toBe(400);
    expect((await sql.query('select count(*)::int as n from sandbox.pse_refunds where deposit_id = $1', [paid.depositId])).rows[0].n).toBe(0);
  });

  it('a provider reversal of a refunded link is refused: 409 ALREADY_REFUNDED, the link stays PAID', async () => {
    const { depositId } = await link('no-reverse', 60_000);
    expect((await refund(depositId, 1_000)).status).toBe(201);
    const r = await call('POST', `/sandbox/pse/${depositId}/reverse`);
    expect(r).toMatchObject({ status: 409, body: { error: 'ALREADY_REFUNDED' } });
    expect((await sql.query('select status from sandbox.pse_links where deposit_id = $1', [depositId])).rows[0].status).toBe('PAID');
    expect((await refund(depositId, 59_000)).status).toBe(201);
  });

  it('answers 503 while the pse fault is down, recording nothing', async () => {
    const { depositId } = await link('down', 60_000);
    await call('POST', '/sandbox/faults', { pse: 'down' });
    const id = retId();
    expect(await refund(depositId, 1_000, id)).toMatchObject({ status: 503, body: { error: 'SERVICE_UNAVAILABLE' } });
    await call('POST', '/sandbox/faults', { pse: 'up' });
    expect((await sql.query('select count(*)::int as n from sandbox.pse_refunds where deposit_id = $1', [depositId])).rows[0].n).toBe(0);
    expect((await refund(depositId, 1_000, id)).status).toBe(201);
  });

  it('refunds racing for the last peso: exactly one passes', async () => {
    const { depositId } = await link('race', 10_000);
    expect((await refund(depositId, 9_000)).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 8 }, () => refund(depositId, 1_000)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(7);
    for (const r of refused) expect(r.body).toMatchObject({ error: 'REFUND_EXCEEDS_PAYMENT', details: { remainingCents: 0 } });
    expect((await sql.query('select sum(amount_cents)::int as s from sandbox.pse_refunds where deposit_id = $1', [depositId])).rows[0].s).toBe(10_000);
  });

  it('the pse report has one REFUNDED (OUT) line per refund: our_id the refund id, the link provider id, the refund amount, on the day of the refund', async () => {
    const { depositId, providerTransferId } = await link('report', 90_000);
    const [r1, r2, r3] = [retId(), retId(), retId()];
    for (const [id, amount] of [
      [r1, 10_000],
      [r2, 25_000],
      [r3, 5_000],
    ] as const)
      expect((await refund(depositId, amount, id)).status).toBe(201);
    await sql.query('update sandbox.pse_links set created_at = $2, paid_at = $3, outcome_at = $3 where deposit_id = $1', [
      depositId,
      bog(D, '09:00:00.000'),
      bog(D, '10:00:00.000'),
    ]);
    const times: Record<string, string> = { [r1]: bog(D, '11:00:00.000'), [r2]: bog(D, '23:59:59.999'), [r3]: bog('2025-03-15', '00:00:00.000') };
    for (const [id, at] of Object.entries(times)) await sql.query('update sandbox.pse_refunds set refunded_at = $2 where refund_id = $1', [id, at]);
    const csv = async (date: string) => {
      const res = await fetch(`${sandbox.url}/sandbox/reports/pse/${date}.csv`);
      expect(res.status).toBe(200);
      return (await res.text())
        .trimEnd()
        .split('\r\n')
        .map((l) => l.split(','))
        .filter((l) => l[0] === providerTransferId);
    };
    const line = (ourId: string, dir: string, amount: number, status: string, settled: string, valueDate = D) => [
      providerTransferId,
      ourId,
      dir,
      String(amount),
      '0',
      status,
      valueDate,
      bog(D, '09:00:00.000'),
      settled,
      'Ana María Gómez',
    ];
    expect(await csv(D)).toEqual([
      line(depositId, 'IN', 90_000, 'PAID', bog(D, '10:00:00.000')),
      line(r1, 'OUT', 10_000, 'REFUNDED', times[r1]!),
      line(r2, 'OUT', 25_000, 'REFUNDED', times[r2]!),
    ]);
    expect(await csv('2025-03-15')).toEqual([line(r3, 'OUT', 5_000, 'REFUNDED', times[r3]!, '2025-03-15')]);
    // A refund's line is a discrepancy's ref by its refund id.
    const miss = await call('POST', `/sandbox/reports/pse/${D}/discrepancies`, { kind: 'missing', ref: r2 });
    expect(miss.status).toBe(201);
    expect((await csv(D)).map((l) => l[1])).toEqual([depositId, r1]);
  });
});
