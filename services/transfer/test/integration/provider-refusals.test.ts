import { createServer, type Server } from 'node:http';
import { metricsRegistry } from '@wallet/platform';
import { RAIL_MESSAGES } from '../../src/adapters/rails.client.js';
import { achSend, expectLedgerOk, failure, newCompany, send, startHarness, wallet, Rail, type Harness } from './harness.js';

/**
 * A provider that refuses (400) a request our own validation accepted: the client gets the
 * documented code with a message that says what happened (never the provider's generic text), and
 * nothing stays reserved.
 */
describe('provider refusals of requests we accepted', () => {
  let h: Harness;
  let rail: Server;
  const refusal = JSON.stringify({
    error: 'INVALID_REQUEST',
    message: 'La solicitud no es válida.',
    details: { fields: [{ path: 'accountNumber', message: 'Entre 4 y 20 dígitos.' }] },
  });

  beforeAll(async () => {
    h = await startHarness({ startTransferService: false });
    rail = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(400, { 'content-type': 'application/json' }).end(refusal));
    });
    await new Promise<void>((r) => rail.listen(0, '127.0.0.1', r));
    const addr = rail.address();
    await h.startTransferInstance({ ACH_RAIL_URL: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
    await new Promise((r) => rail?.close(r));
  });

  it('an ACH account validation refused with 400 → INVALID_BANK_ACCOUNT with its own message; nothing reserved', async () => {
    const co = await newCompany(h, { ach: 100_000n });
    const err = await failure(send(h, co, achSend(co, 10_000n, {}, { accountNumber: '123456789012345678901234' })));
    expect(err.code).toBe('INVALID_BANK_ACCOUNT');
    expect(err.message).toBe(RAIL_MESSAGES.accountRefused);
    expect(err.message).not.toBe('La solicitud no es válida.');
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 100_000n, pending: 0n });
    await expectLedgerOk(h);
  });

  it('counts each rail call by outcome with its duration, and reports the oldest live transfer per rail and state (the alerts read them)', async () => {
    const series = async (line: string) => {
      const text = await metricsRegistry.metrics();
      const found = text.split('\n').find((l) => l.startsWith(`${line} `));
      return found === undefined ? undefined : Number(found.slice(line.length + 1));
    };
    const refused = 'wallet_rail_requests_total{rail="ACH",operation="validate_account",outcome="refused"}';
    const timed = 'wallet_rail_request_duration_seconds_count{rail="ACH",operation="validate_account"}';
    const [refusedBefore, timedBefore] = [(await series(refused)) ?? 0, (await series(timed)) ?? 0];
    const co = await newCompany(h, { ach: 100_000n });
    await failure(send(h, co, achSend(co, 10_000n, {}, { accountNumber: '123456789012345678901234' })));
    expect(await series(refused)).toBe(refusedBefore + 1);
    expect(await series(timed)).toBe(timedBefore + 1);
    // Nothing live in this company's saga: the gauge still has every rail and live state (0 when none).
    expect(await series('wallet_transfer_saga_oldest_seconds{rail="ACH",state="DISPATCHED"}')).toBeGreaterThanOrEqual(0);
    expect(await series('wallet_transfer_saga_oldest_seconds{rail="BREB",state="COMPLETING"}')).toBeGreaterThanOrEqual(0);
  });
});
