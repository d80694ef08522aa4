import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@wallet/platform';
import { SANDBOX_ACH_ACCOUNT, createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox, type StartedSandbox } from '@wallet/sandbox/testing';
import { HttpRails, RAIL_MESSAGES } from '../../src/adapters/rails.client.js';
import type { DispatchResult } from '../../src/app/ports.js';
import type { TransferRecord } from '../../src/domain/transfer.js';
import { transferRecord } from './transfer-record.js';

/**
 * A batch page to the rails in bulk submissions (RailPort.dispatchMany, docs/sandbox.md "Bulk submission"),
 * against the real sandbox: each transfer's result is what its single dispatch would answer, and a call that
 * fails as a whole answers each transfer alike, or falls back to single dispatches.
 */
describe('bulk dispatch to the rails (HttpRails.dispatchMany)', () => {
  let tdb: TestDatabase;
  let sandbox: StartedSandbox;
  let rails: HttpRails;
  const log = createLogger('rail-bulk', process.env.TEST_LOG_LEVEL ?? 'silent');
  const CALLBACK = 'http://127.0.0.1:9/webhooks/rails/x';

  function transfer(
    o: { rail?: 'BREB' | 'ACH'; amount?: bigint; keyType?: string; keyValue?: string; accountNumber?: string; id?: string } = {},
  ): TransferRecord {
    const rail = o.rail ?? 'BREB';
    return transferRecord({
      ...(o.id ? { id: o.id } : {}),
      companyId: 'co-bulk',
      rail,
      state: 'RESERVED',
      amount: o.amount ?? 10_000n,
      destination:
        rail === 'BREB'
          ? {
              kind: 'BREB',
              keyType: (o.keyType ?? 'PHONE') as 'PHONE',
              keyValue: o.keyValue ?? '3001234567',
              anchorHandle: 'anh_x',
              bankName: null,
              bankAccountType: null,
            }
          : {
              kind: 'ACH',
              bankId: 1,
              bankName: 'BANCOLOMBIA',
              bankAchCode: '1007',
              accountTypeId: SANDBOX_ACH_ACCOUNT.accountTypeId,
              accountNumber: o.accountNumber ?? SANDBOX_ACH_ACCOUNT.accountNumber,
              documentTypeId: SANDBOX_ACH_ACCOUNT.documentTypeId,
              documentNumber: SANDBOX_ACH_ACCOUNT.documentNumber,
              holderFirstName: SANDBOX_ACH_ACCOUNT.holderFirstName,
              holderLastName: SANDBOX_ACH_ACCOUNT.holderLastName,
            },
      holdId: randomUUID(),
    });
  }
  const page = (ts: TransferRecord[]) => ts.map((t) => ({ t, callbackUrl: CALLBACK }));
  const atRail = async (t: TransferRecord) => {
    const res = await fetch(`${sandbox.url}/${t.rail === 'BREB' ? 'breb/rail' : 'ach'}/transfers/${t.id}`);
    return res.status === 200 ? ((await res.json()) as { providerTransferId: string; status: string }) : res.status;
  };
  const faults = (f: Record<string, string>) =>
    fetch(`${sandbox.url}/sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(f) });

  beforeAll(async () => {
    tdb = await createTestDatabase('tr_rail_bulk');
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { SANDBOX_BREB_CONFIRM_MS: '60000', SANDBOX_ACH_CONFIRM_MS: '60000' } });
    rails = new HttpRails({ breb: sandbox.url, ach: sandbox.url }, 5_000, log);
  }, 60_000);
  afterAll(async () => {
    await sandbox?.stop();
    await tdb?.drop();
  });
  afterEach(async () => {
    await faults({ brebRail: 'up', achRail: 'up' });
  });

  it('takes a page of both rails, each transfer answered in place with the providerTransferId the rail keeps', async () => {
    const ts = [transfer(), transfer({ rail: 'ACH' }), transfer({ amount: 2_013n }), transfer({ rail: 'ACH', amount: 7n }), transfer()];
    const results = await rails.dispatchMany(page(ts));
    expect(results).toHaveLength(5);
    for (const [i, t] of ts.entries()) {
      const r = results[i]!;
      expect(r).toEqual({ outcome: 'accepted', providerTransferId: expect.stringMatching(t.rail === 'BREB' ? /^brb_/ : /^ach_/) });
      expect(await atRail(t)).toMatchObject({ providerTransferId: (r as { providerTransferId: string }).providerTransferId, status: 'PENDING' });
    }
    // A second dispatch of the same transfers (a retry after an ambiguous answer) gets the same ids: the rail dedupes.
    expect(await rails.dispatchMany(page(ts))).toEqual(results);
  });

  it('answers each refused transfer as its single dispatch would, and takes the rest', async () => {
    const taken = transfer({ amount: 500n });
    expect(await rails.dispatch(taken, CALLBACK)).toMatchObject({ outcome: 'accepted' });
    const conflicting = { ...taken, amount: 600n };
    const invalidAccount = transfer({ rail: 'ACH', accountNumber: '0000000000' });
    const badKey = transfer({ keyType: 'PHONE', keyValue: 'no-es-un-telefono' });
    const good = transfer();
    const ts = [conflicting, invalidAccount, badKey, good];
    const bulk = await rails.dispatchMany(page(ts));
    expect(bulk).toEqual([
      { outcome: 'rejected', message: expect.stringMatching(/transactionId/) },
      { outcome: 'rejected', message: expect.any(String) },
      { outcome: 'rejected', message: RAIL_MESSAGES.requestRefused },
      { outcome: 'accepted', providerTransferId: expect.stringMatching(/^brb_/) },
    ]);
    // The single dispatch of each answers the same (the accepted one replays its id).
    const single: DispatchResult[] = [];
    for (const t of ts) single.push(await rails.dispatch(t, CALLBACK));
    expect(single).toEqual(bulk);
    expect(await atRail(invalidAccount)).toBe(404);
    expect(await atRail(badKey)).toBe(404);
  });

  it('splits a rail’s transfers into submissions of at most 200', async () => {
    const ts = Array.from({ length: 230 }, () => transfer());
    const results = await rails.dispatchMany(page(ts));
    expect(results.every((r) => r.outcome === 'accepted')).toBe(true);
    expect(new Set(results.map((r) => (r as { providerTransferId: string }).providerTransferId)).size).toBe(230);
    expect(await atRail(ts[229]!)).toMatchObject({ status: 'PENDING' });
  });

  it('a rail that is down takes nothing: each transfer unavailable, not ambiguous (the sweeper retries)', async () => {
    await faults({ brebRail: 'down' });
    const ts = [transfer(), transfer({ rail: 'ACH' })];
    const results = await rails.dispatchMany(page(ts));
    expect(results[0]).toEqual({ outcome: 'unavailable', ambiguous: false, error: 'http 503' });
    expect(results[1]).toEqual({ outcome: 'accepted', providerTransferId: expect.stringMatching(/^ach_/) });
    expect(await atRail(ts[0]!)).toBe(404);
  });

  it('an unreachable rail: each transfer unavailable and not ambiguous (nothing was sent)', async () => {
    const closed = new HttpRails({ breb: 'http://127.0.0.1:9', ach: 'http://127.0.0.1:9' }, 2_000, log);
    expect(await closed.dispatchMany(page([transfer(), transfer()]))).toEqual([
      { outcome: 'unavailable', ambiguous: false, error: 'ECONNREFUSED' },
      { outcome: 'unavailable', ambiguous: false, error: 'ECONNREFUSED' },
    ]);
  });

  describe('a rail without bulk submission', () => {
    let proxy: Server;
    let proxied: HttpRails;
    const seen: string[] = [];
    beforeAll(async () => {
      // The sandbox behind a front that answers 404 to …/bulk, as a provider without it would.
      const target = new URL(sandbox.url);
      proxy = createServer((req, res) => {
        seen.push(`${req.method} ${req.url}`);
        if (req.url?.endsWith('/bulk')) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"ROUTE_NOT_FOUND"}');
        const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        req.pipe(up);
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      proxied = new HttpRails({ breb: url, ach: url }, 5_000, log);
    });
    afterAll(async () => {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    });

    it('dispatches each transfer on its own, with the same answers', async () => {
      const ts = [transfer(), transfer({ rail: 'ACH' }), transfer({ rail: 'ACH', accountNumber: '0000000000' })];
      const results = await proxied.dispatchMany(page(ts));
      expect(results).toEqual([
        { outcome: 'accepted', providerTransferId: expect.stringMatching(/^brb_/) },
        { outcome: 'accepted', providerTransferId: expect.stringMatching(/^ach_/) },
        { outcome: 'rejected', message: expect.any(String) },
      ]);
      expect(seen.filter((s) => s.endsWith('/bulk'))).toHaveLength(2);
      expect(seen.filter((s) => s.startsWith('POST') && !s.endsWith('/bulk'))).toHaveLength(3);
      expect(await atRail(ts[0]!)).toMatchObject({ status: 'PENDING' });
    });
  });
});
