import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { NATS_URL, startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

describe('foundation end to end: provision → keys → fund → balance', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    const report = await stack.invariants();
    expect(report.violations).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('a funded company reads its balances through the gateway, exactly as documented', async () => {
    const co = await stack.provision('Acme S.A.S.');
    expect(co.raw).toMatchObject({ name: 'Acme S.A.S.', taxRegime: 'COMMON', status: 'ACTIVE', multiSigThreshold: 0 });

    const credit = await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 150_000_000, reference: 'fund-1' });
    expect(credit.status).toBe(201);
    expect(credit.body).toMatchObject({ type: 'BALANCE_ADD', rail: 'BREB', status: 'COMPLETED', amount: '150000000', reference: 'fund-1' });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 5_000, reference: 'fund-2' });

    const res = await stack.http('GET', '/wallets/balance', { token: co.readKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, max-age=10');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const { body } = res;
    expect(body.currency).toBe('COP');
    expect(body.wallets.map((w: any) => w.rail)).toEqual(['BREB', 'ACH']);
    const [breb, ach] = body.wallets;
    expect(breb).toEqual({
      rail: 'BREB',
      type: 'FAST',
      availableCents: '150000000',
      pendingOutCents: '0',
      totalCents: '150000000',
      version: 1,
      maxTransferAmount: 150_000_000,
    });
    expect(ach).toMatchObject({ rail: 'ACH', type: 'ACH', availableCents: '5000', version: 1, maxTransferAmount: 5000 });
    expect(body.consolidated).toEqual({ availableCents: '150005000', pendingOutCents: '0', totalCents: '150005000', currency: 'COP' });
  });

  it('maxTransferAmount accounts for fees, IVA and the rail cap', async () => {
    const co = await stack.provision('Fees S.A.S.', { taxRegime: 'COMMON' });
    // BREB: 500 fixed + 50 bps for this company only; IVA 19% on the fee.
    const fee = await stack.admin('PUT', '/admin/fees/BREB_OUTFLOW', { fixedFeeCents: 500, variableBps: 50, companyId: co.id });
    expect(fee.status).toBe(200);
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 1_000_000, reference: 'f1' });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 5_000_000_000, reference: 'f2' });
    const { body } = await stack.http('GET', '/wallets/balance', { token: co.readKey });
    const breb = body.wallets[0];
    // Brute-force the definition: the largest amount a with a + fee(a) + iva(a) <= available.
    const total = (a: number) => {
      const sub = 500 + Math.floor((a * 50 * 2 + 10000) / 20000);
      return a + sub + Math.floor((sub * 19 * 2 + 100) / 200);
    };
    expect(total(breb.maxTransferAmount)).toBeLessThanOrEqual(1_000_000);
    expect(total(breb.maxTransferAmount + 1)).toBeGreaterThan(1_000_000);
    // ACH (no fee configured): capped at... the available 50,000,000 COP is under the ACH cap.
    expect(body.wallets[1].maxTransferAmount).toBe(5_000_000_000);
    // Another company is untouched by this company's fee.
    const other = await stack.provision('NoFees S.A.S.');
    await stack.admin('POST', `/admin/companies/${other.id}/wallets/BREB/credit`, { amountCents: 1_000_000, reference: 'f3' });
    const o = await stack.http('GET', '/wallets/balance', { token: other.readKey });
    expect(o.body.wallets[0].maxTransferAmount).toBe(1_000_000);
  });

  it('keeps companies apart: each key sees only its own company', async () => {
    const a = await stack.provision('A S.A.S.');
    const b = await stack.provision('B S.A.S.');
    await stack.admin('POST', `/admin/companies/${a.id}/wallets/BREB/credit`, { amountCents: 777, reference: 'a' });
    const ra = await stack.http('GET', '/wallets/balance', { token: a.readKey });
    const rb = await stack.http('GET', '/wallets/balance', { token: b.writeKey });
    expect(ra.body.wallets[0].availableCents).toBe('777');
    expect(rb.body.wallets[0].availableCents).toBe('0');
  });

  it('provisioning errors: no wallets and no Bre-B wallet', async () => {
    const none = await stack.provision('None S.A.S.', { wallets: [] });
    const achOnly = await stack.provision('AchOnly S.A.S.', { wallets: ['ACH'] });
    const r1 = await stack.http('GET', '/wallets/balance', { token: none.readKey });
    expect(r1.status).toBe(404);
    expect(r1.body.error).toBe('WALLET_NOT_PROVISIONED');
    const r2 = await stack.http('GET', '/wallets/balance', { token: achOnly.readKey });
    expect(r2.status).toBe(404);
    expect(r2.body.error).toBe('FAST_WALLET_MISSING');
  });

  it('concurrent credits on one wallet lose no update; a duplicated reference credits once', async () => {
    const co = await stack.provision('Busy S.A.S.');
    const distinct = Array.from({ length: 40 }, (_, i) =>
      stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 1000 + i, reference: `c-${i}` }),
    );
    const dup = Array.from({ length: 10 }, () =>
      stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 50_000, reference: 'same' }),
    );
    const results = await Promise.all([...distinct, ...dup]);
    expect(results.every((r) => r.status === 201)).toBe(true);
    expect(new Set(results.slice(40).map((r) => r.body.id)).size).toBe(1);
    const expected = Array.from({ length: 40 }, (_, i) => 1000 + i).reduce((s, x) => s + x, 0) + 50_000;
    const { body } = await stack.http('GET', '/wallets/balance', { token: co.readKey });
    expect(body.wallets[1]).toMatchObject({ availableCents: String(expected), version: 41 });
  });

  it('serves its own reference as documented: /openapi.json, /docs and every file it loads, /asyncapi.json', async () => {
    const doc = await stack.http('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    const page = await stack.http('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    // The reference and its console load only files the document lists (each answer checked by stack.http).
    const explorer = await stack.http('GET', '/docs/explorer');
    expect(explorer.status).toBe(200);
    const files = [...`${page.text}${explorer.text}`.matchAll(/(?:href|src)="\/docs\/assets\/([^"]+)"/g)].map((m) => m[1]!);
    expect([...new Set(files)].sort()).toEqual([
      'docs.css',
      'docs.js',
      'explorer-init.js',
      'explorer.css',
      'favicon-32x32.png',
      'swagger-ui-bundle.js',
      'swagger-ui.css',
    ]);
    for (const f of new Set(files)) expect((await stack.http('GET', `/docs/assets/${f}`)).status).toBe(200);
    const operation = await stack.http('GET', '/docs/operations/sendTransfer');
    expect([operation.status, (await stack.http('GET', '/docs/schemas')).status]).toEqual([200, 200]);
    expect(operation.text).toContain('<code class="path">/transfers/send</code>');
    expect((await stack.http('GET', '/docs/operations/noSuchOperation')).status).toBe(404);
    const missing = await stack.http('GET', '/docs/assets/package.json');
    expect([missing.status, missing.body.error]).toEqual([404, 'ROUTE_NOT_FOUND']);
    const events = await stack.http('GET', '/asyncapi.json');
    expect(events.status).toBe(200);
    expect(events.body.asyncapi).toMatch(/^3\./);
  });

  it('publishes ledger events on JetStream with CloudEvents headers', async () => {
    const co = await stack.provision('Events S.A.S.');
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 4242, reference: 'ev-1' });
    const nc = await connect({ servers: NATS_URL });
    try {
      const js = jetstream(nc);
      const stream = `${stack.namespace.toUpperCase()}_LEDGER`;
      const consumer = await js.consumers.get(stream); // ordered, ephemeral
      const found = await (async () => {
        const iter = await consumer.fetch({ max_messages: 500, expires: 3000 });
        for await (const m of iter) {
          const p = m.json<any>();
          if (m.subject.endsWith('ledger.credited') && p.companyId === co.id) return { m, p };
        }
        return undefined;
      })();
      expect(found).toBeDefined();
      expect(found!.m.headers?.get('ce-type')).toBe('ledger.credited');
      expect(found!.m.headers?.get('ce-id')).toBe(found!.p.eventId);
      const sum = found!.p.entries.reduce((s: bigint, e: any) => s + BigInt(e.amount), 0n);
      expect(sum).toBe(0n);
      expect(found!.p.entries).toEqual(expect.arrayContaining([{ account: `wallet_available:${co.id}:BREB`, amount: '4242' }]));
    } finally {
      await nc.close();
    }
  });
});
