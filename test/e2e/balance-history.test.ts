import { instantFromMicros, instantMicros } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { SANDBOX_ACH_ACCOUNT, instantMark } from '../support/fixtures.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * GET /wallets/balance/history through the real gateway, transfer service, ledger and sandbox rails:
 * the balance at instants before, between and after a credit, a completed send and a failed one,
 * equal to GET /wallets/balance at "now"; company isolation; bad input. Every answer is checked
 * against the served /openapi.json by stack.http.
 */
describe('balance history end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  let other: Awaited<ReturnType<Stack['provision']>>;

  /** An instant after everything done so far and before anything that follows. */
  const mark = instantMark;
  const history = (rail: string, at: string, key = co.readKey) =>
    stack.http('GET', `/wallets/balance/history?rail=${rail}&at=${encodeURIComponent(at)}`, { token: key });
  const balance = async (key = co.readKey) => {
    const r = await stack.http('GET', '/wallets/balance', { token: key });
    return Object.fromEntries(r.body.wallets.map((w: any) => [w.rail, w])) as Record<'BREB' | 'ACH', any>;
  };
  const settled = (id: string) =>
    eventually(
      async () => {
        const r = await stack.http('GET', `/wallets/transactions/${id}`, { token: co.readKey });
        return ['COMPLETED', 'FAILED'].includes(r.body?.status) ? r.body : undefined;
      },
      15_000,
      100,
    );
  const achBody = (amount: number) => ({
    amount,
    destination: {
      bankAccount: { ...SANDBOX_ACH_ACCOUNT },
    },
    description: 'Pago proveedor',
  });

  let t0: string;
  let t1: string;
  let t2: string;
  let t3: string;

  beforeAll(async () => {
    stack = await startStack({ transfers: true });
    co = await stack.provision('Historia S.A.S.', { taxRegime: 'COMMON' });
    other = await stack.provision('Otra Empresa S.A.S.', { taxRegime: 'SIMPLE' });
    for (const c of [co, other]) await stack.admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('PUT', '/admin/fees/ACH_OUTFLOW', { fixedFeeCents: 300, variableBps: 0, companyId: co.id });
    await stack.admin('POST', `/admin/companies/${other.id}/wallets/ACH/credit`, { amountCents: 777_777, reference: 'other-seed' });

    t0 = await mark();
    expect((await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 1_000_000, reference: 'hist-seed' })).status).toBe(201);
    t1 = await mark();
    const ok = await stack.http('POST', '/transfers/send', { token: co.writeKey, body: achBody(200_000) });
    expect(ok.status).toBe(201);
    expect((await settled(ok.body.id)).status).toBe('COMPLETED');
    t2 = await mark();
    const bad = await stack.http('POST', '/transfers/send', { token: co.writeKey, body: achBody(100_013) }); // the sandbox fails amounts ending in 13
    expect(bad.status).toBe(201);
    expect((await settled(bad.body.id)).status).toBe('FAILED');
    t3 = await mark();
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    const report = await stack.invariants();
    expect(report.violations).toEqual([]);
  });

  it('before, between and after a credit, a completed send and a failed send', async () => {
    const at0 = await history('ACH', t0);
    expect(at0.status).toBe(200);
    expect(at0.body).toEqual({ rail: 'ACH', at: t0, currency: 'COP', availableCents: '0', pendingOutCents: '0', totalCents: '0', version: 0 });
    expect((await history('ACH', t1)).body).toMatchObject({ availableCents: '1000000', pendingOutCents: '0', totalCents: '1000000', version: 1 });
    // 200,000 + fee 300 + IVA 19% of the fee (57), committed
    expect((await history('ACH', t2)).body).toMatchObject({ availableCents: String(1_000_000 - 200_357), pendingOutCents: '0', version: 3 });
    // the failed send reserved and released: available back where it was
    const after = await history('ACH', t3);
    expect(after.body).toMatchObject({ availableCents: String(1_000_000 - 200_357), pendingOutCents: '0', version: 5 });
    // now equals the live balance
    const now = await mark();
    const live = (await balance()).ACH;
    expect((await history('ACH', now)).body).toMatchObject({
      availableCents: live.availableCents,
      pendingOutCents: live.pendingOutCents,
      totalCents: live.totalCents,
      version: live.version,
    });
    // an offset names the same instant: t1 in Bogotá time
    const bogota = new Date(Date.parse(t1) - 5 * 3_600_000).toISOString().replace('Z', '-05:00');
    expect((await history('ACH', bogota)).body).toMatchObject({ at: t1, availableCents: '1000000' });
    // the BREB wallet saw nothing; before the company existed, zeros
    expect((await history('BREB', t3)).body).toMatchObject({ rail: 'BREB', availableCents: '0', version: 0 });
    expect((await history('ACH', '2000-01-01T00:00:00Z')).body).toMatchObject({
      at: '2000-01-01T00:00:00.000000Z',
      availableCents: '0',
      pendingOutCents: '0',
      version: 0,
    });
  });

  it("a movement's own createdAt (microseconds) as `at` counts it; one microsecond earlier does not", async () => {
    const items = (await stack.http('GET', '/wallets/transactions?rail=ACH&type=BALANCE_ADD', { token: co.readKey })).body.items as Array<{
      createdAt: string;
    }>;
    expect(items).toHaveLength(1);
    const at = items[0]!.createdAt;
    expect(at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect((await history('ACH', at)).body).toMatchObject({ at, availableCents: '1000000', version: 1 });
    const before = instantFromMicros(instantMicros(at) - 1n);
    expect((await history('ACH', before)).body).toMatchObject({ at: before, availableCents: '0', version: 0 });
    // nine fraction digits: past the sixth truncated, the same instant
    expect((await history('ACH', `${at.slice(0, -1)}999Z`)).body).toMatchObject({ at, version: 1 });
  });

  it("never shows another company's postings", async () => {
    const now = await mark();
    expect((await history('ACH', now, other.readKey)).body).toMatchObject({ availableCents: '777777', version: 1 });
    expect((await history('ACH', t0, co.readKey)).body).toMatchObject({ availableCents: '0', version: 0 });
  });

  it('a READ key is enough; no key → 401; a wallet the company lacks → 404', async () => {
    expect((await history('ACH', t1, co.writeKey)).status).toBe(200);
    const none = await stack.http('GET', `/wallets/balance/history?rail=ACH&at=${encodeURIComponent(t1)}`);
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('AUTH_REQUIRED');
    const brebOnly = await stack.provision('Solo Breb S.A.S.', { wallets: ['BREB'] });
    const missing = await history('ACH', t1, brebOnly.readKey);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('WALLET_NOT_PROVISIONED');
  });

  it('bad input: 400 INVALID_REQUEST for a missing or wrong parameter, 422 VALIDATION_ERROR for the future', async () => {
    const q = (qs: string) => stack.http('GET', `/wallets/balance/history?${qs}`, { token: co.readKey });
    const at = encodeURIComponent(t1);
    for (const qs of [
      `at=${at}`,
      'rail=ACH',
      `rail=PSE&at=${at}`,
      `rail=ach&at=${at}`,
      'rail=ACH&at=2026-11-21',
      'rail=ACH&at=2026-11-21T10:00:00',
      'rail=ACH&at=ayer',
      'rail=ACH&at=2026-13-45T10:00:00Z',
      `rail=ACH&at=${at}&extra=1`,
      `rail=ACH&rail=BREB&at=${at}`,
      // ten fraction digits, a leap second, Feb 30: not an instant
      'rail=ACH&at=2026-11-21T10:00:00.1234567890Z',
      'rail=ACH&at=2026-11-21T10:00:60Z',
      'rail=ACH&at=2026-02-30T10:00:00Z',
    ]) {
      const r = await q(qs);
      expect({ qs, status: r.status, error: r.body?.error }).toEqual({ qs, status: 400, error: 'INVALID_REQUEST' });
      expect(typeof r.body.message).toBe('string');
    }
    const future = await q(`rail=ACH&at=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`);
    expect(future.status).toBe(422);
    expect(future.body.error).toBe('VALIDATION_ERROR');
    expect(future.body.message).toMatch(/futuro/);
  });
});
