import { instantFromDate, instantMicros } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { LedgerClient } from '../../clients/ledger-client.js';
import { bogotaIso, pesos } from '../csv-cells.js';
import { MAX_JSON_STATEMENT_LINES, StatementQuery } from './statement.js';

/**
 * The statement builder over a scripted ledger (the real ledger is exercised in
 * services/ledger/test/integration/statement.test.ts and test/e2e/statements.test.ts): the JSON cap,
 * the CSV read one batch at a time as it is consumed, and the check opening + lines = closing.
 */
function scriptedLedger(lines: number, opts: { closingAvailable?: bigint } = {}) {
  let batchesRead = 0;
  const line = (i: number): ledgerV1.StatementLine => ({
    postingId: `p${i}`,
    postingKind: 'credit',
    postedAt: instantFromDate(new Date(1_700_000_000_000 + i)),
    effectCents: 1n,
    feeCents: 0n,
    ivaCents: 0n,
  });
  const headsAsked: ledgerV1.GetJournalHeadsRequest[] = [];
  const ledger = {
    async getBalanceAt(req: ledgerV1.GetBalanceAtRequest) {
      const closing = instantMicros(req.at) > 0n;
      return {
        rail: req.rail,
        at: req.at,
        pendingOutCents: 0n,
        postings: 0n,
        availableCents: closing ? (opts.closingAvailable ?? BigInt(lines)) : 0n,
      };
    },
    async getJournalHeads(req: ledgerV1.GetJournalHeadsRequest) {
      headsAsked.push(req);
      return { heads: [{ day: '2026-11-28', seq: 48_213n, hash: 'ab'.repeat(32), recordedAt: '2026-11-29T05:00:01.000000Z' }] };
    },
    async *streamStatement(req: ledgerV1.StreamStatementRequest) {
      for (let i = 0; i < lines; i += req.batchSize) {
        batchesRead++;
        yield { lines: Array.from({ length: Math.min(req.batchSize, lines - i) }, (_, j) => line(i + j)) };
      }
    },
  } as unknown as LedgerClient;
  return { ledger, batchesRead: () => batchesRead, headsAsked };
}

const req = { rail: 'BREB' as const, from: instantFromDate(new Date(0)), to: instantFromDate(new Date(1_800_000_000_000)) };
const company = { name: 'Empresa S.A.S.', nit: '900000001-1' };
const call = { requestId: 'r1' };

describe('StatementQuery', () => {
  it(`answers JSON up to ${MAX_JSON_STATEMENT_LINES} lines, and 422 asking for CSV past it`, async () => {
    const ok = await new StatementQuery(scriptedLedger(MAX_JSON_STATEMENT_LINES).ledger).json(req, company, call);
    expect(ok.lines).toHaveLength(MAX_JSON_STATEMENT_LINES);
    expect(ok.closing.availableCents).toBe(String(MAX_JSON_STATEMENT_LINES));
    // the journal's daily heads of the period's Bogotá days (docs/journal.md), as strings
    expect(ok.journalHeads).toEqual([{ day: '2026-11-28', seq: '48213', hash: 'ab'.repeat(32) }]);
    // a day's statement asks for that Bogotá day only: [from's day, the day of the instant before `to`]
    const day = scriptedLedger(0);
    await new StatementQuery(day.ledger).json(
      { rail: 'BREB', from: instantFromDate(new Date('2026-11-28T05:00:00Z')), to: instantFromDate(new Date('2026-11-29T05:00:00Z')) },
      company,
      call,
    );
    expect(day.headsAsked).toEqual([{ fromDay: '2026-11-28', toDay: '2026-11-28' }]);
    await expect(new StatementQuery(scriptedLedger(MAX_JSON_STATEMENT_LINES + 1).ledger).json(req, company, call)).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringContaining('format=csv'),
    });
  });

  it('refuses to answer a statement whose lines do not add up to the closing balance', async () => {
    await expect(new StatementQuery(scriptedLedger(3, { closingAvailable: 4n }).ledger).json(req, company, call)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
  });

  it('streams the CSV: the ledger is read one batch ahead of the consumer, never the whole range', async () => {
    const s = scriptedLedger(50_000);
    const csv = await new StatementQuery(s.ledger).csv(req, company, call);
    expect(s.batchesRead()).toBe(1); // the first batch, read before answering
    const it = csv[Symbol.asyncIterator]();
    await it.next();
    await it.next();
    expect(s.batchesRead()).toBeLessThanOrEqual(3);
    let text = '';
    for await (const chunk of csv) text += String(chunk);
    expect(s.batchesRead()).toBe(50);
    expect(text).toContain('"Número de líneas";"50000"');
    expect(text).toContain('"Saldo disponible final";"500,00"');
  });

  it('aborts the CSV download (an error, never a wrong file) when the lines do not add up', async () => {
    const csv = await new StatementQuery(scriptedLedger(3, { closingAvailable: 9n }).ledger).csv(req, company, call);
    await expect(
      (async () => {
        for await (const _ of csv) {
          /* read */
        }
      })(),
    ).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });

  it('writes pesos with a decimal comma and Bogotá time', () => {
    expect([pesos(0n), pesos(5n), pesos(-100_655n), pesos(123_456_789_012n)]).toEqual(['0,00', '0,05', '-1006,55', '1234567890,12']);
    expect(bogotaIso(new Date('2026-11-21T15:00:00Z'))).toBe('2026-11-21T10:00:00.000000-05:00');
  });
});
