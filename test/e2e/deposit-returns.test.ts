import { eventually } from '@wallet/platform/testing';
import { pdfText } from '../support/pdf.js';
import { startStack } from '../support/stack.js';
import { verifyWebhook, WebhookReceiver } from '../support/webhook-receiver.js';
import { PSE_PAYER } from '../support/fixtures.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * Returns (devoluciones) through the gateway (docs/returns.md): a credited Bre-B payment returned in part,
 * then the rest; the wallet's movement; the network's refusal and its release; another company's deposit;
 * bad input; the `deposit.returned` / `deposit.return_failed` webhooks verified with `standardwebhooks`;
 * `ledger:check` after each.
 */
describe('returns of Bre-B payments end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  let other: Awaited<ReturnType<Stack['provision']>>;
  const rx = new WebhookReceiver('/returns-events');
  let secret = '';
  const post = (path: string, body: unknown, key = co.writeKey) => stack.http('POST', path, { token: key, body });
  const get = (path: string, key = co.readKey) => stack.http('GET', path, { token: key });
  const balance = async () => BigInt((await get('/wallets/balance')).body.wallets.find((w: any) => w.rail === 'BREB').availableCents);

  /** A payment of `amountCents` to a new collect key of the company, once listed ASSIGNED. */
  const credited = async (externalId: string, amountCents: number) => {
    const key = await post('/breb/collect-keys', { externalId, name: 'Tienda' });
    expect(key.status).toBe(201);
    const res = await fetch(`${stack.sandbox!.url}/sandbox/breb/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ keyValue: key.body.key.value, amountCents, payerName: 'Pedro Pérez', payerDocument: 'CC 79123456', payerBank: 'Nequi' }),
    });
    expect(res.status).toBe(202);
    const transfer = ((await res.json()) as { providerTransferId: string }).providerTransferId;
    return eventually(
      async () => {
        const r = await get('/deposits?rail=BREB');
        return (r.body.deposits ?? []).find((d: any) => d.providerTransferId === transfer && d.status === 'ASSIGNED');
      },
      15_000,
      100,
    );
  };

  beforeAll(async () => {
    stack = await startStack({ deposits: true, collectKeys: true, webhooks: true, receipts: true });
    co = await stack.provision('Devoluciones S.A.S.');
    other = await stack.provision('Ajena S.A.S.');
    for (const c of [co, other]) await stack.admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1000 });
    await rx.start();
    const ep = await post('/webhooks/endpoints', { url: rx.url, events: ['deposit.returned', 'deposit.return_failed'] });
    expect(ep.status).toBe(201);
    secret = ep.body.secret;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await rx.stop();
  });
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('returns part of a payment, then the rest; the wallet pays each as a movement; webhooks verified', async () => {
    const d = await credited('dev-e2e-1', 80_000);
    const before = await balance();
    const first = await post(`/deposits/${d.id}/returns`, { amountCents: 30_000, reason: 'OVERPAYMENT', description: 'Pagó de más' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      id: expect.stringMatching(/^ret_[a-z0-9]{24}$/),
      depositId: d.id,
      rail: 'BREB',
      amountCents: '30000',
      currency: 'COP',
      reason: 'OVERPAYMENT',
      description: 'Pagó de más',
      status: 'RETURNED',
      failureCode: null,
      depositAmountCents: '80000',
      returnedAmountCents: '30000',
    });
    expect(await balance()).toBe(before - 30_000n);
    const movement = await get(`/wallets/transactions/${first.body.transactionId}`);
    expect(movement.status).toBe(200);
    expect(movement.body).toMatchObject({ type: 'TRANSFER_OUT', rail: 'BREB', status: 'COMPLETED', reference: first.body.id });
    // Its receipt: a PDF that names it a return, to the payer, for the amount.
    const receipt = await eventually(
      async () => {
        const r = await fetch(`${stack.gateway.url}/wallets/transactions/${first.body.transactionId}/receipt.pdf`, {
          headers: { authorization: `Bearer ${co.readKey}` },
        });
        return r.status === 200 ? pdfText(await r.arrayBuffer()) : undefined;
      },
      15_000,
      200,
    );
    expect(receipt.text).toContain('Comprobante de devolución');
    expect(receipt.text).toContain('Pedro Pérez');
    expect(receipt.text).toContain('$ 300,00');
    expect(receipt.text).toContain(first.body.id);

    const rest = await post(`/deposits/${d.id}/returns`, { reason: 'CUSTOMER_REQUEST' });
    expect([rest.status, rest.body.amountCents, rest.body.returnedAmountCents]).toEqual([201, '50000', '80000']);
    const over = await post(`/deposits/${d.id}/returns`, { amountCents: 1, reason: 'OTHER' });
    expect([over.status, over.body.error, over.body.details]).toEqual([
      422,
      'RETURN_EXCEEDS_PAYMENT',
      { grossCents: '80000', returnedCents: '80000', returnableCents: '0' },
    ]);

    const listed = await get(`/deposits/${d.id}/returns`);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((r: any) => [r.id, r.status])).toEqual([
      [first.body.id, 'RETURNED'],
      [rest.body.id, 'RETURNED'],
    ]);
    const hits = await eventually(async () => {
      const h = rx.hits.filter((x) => x.body.data?.depositId === d.id);
      return h.length >= 2 ? h : undefined;
    }, 20_000);
    expect(hits.map((h) => [h.body.type, h.body.data.id])).toEqual([
      ['deposit.returned', first.body.id],
      ['deposit.returned', rest.body.id],
    ]);
    for (const h of hits) expect(verifyWebhook(secret, h)).toBe(true);
  });

  it("another company's deposit is not found; READ keys cannot return; bad input is refused", async () => {
    const d = await credited('dev-e2e-2', 20_000);
    const foreign = await post(`/deposits/${d.id}/returns`, { reason: 'OTHER' }, other.writeKey);
    expect([foreign.status, foreign.body.error]).toEqual([404, 'DEPOSIT_NOT_FOUND']);
    expect((await get(`/deposits/${d.id}/returns`, other.readKey)).status).toBe(404);
    for (const body of [
      {},
      { reason: 'WHIM' },
      { reason: 'OTHER', amountCents: '100' },
      { reason: 'OTHER', amountCents: 0 },
      { reason: 'OTHER', amountCents: 1e20 },
      { reason: 'OTHER', extra: 1 },
    ]) {
      const r = await post(`/deposits/${d.id}/returns`, body);
      expect({ body, status: r.status, error: r.body.error }).toEqual({ body, status: 400, error: 'INVALID_REQUEST' });
    }
    const malformed = await fetch(`${stack.gateway.url}/deposits/${d.id}/returns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${co.writeKey}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: '{"reason":',
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as any).error).toBe('INVALID_REQUEST');
    const byRead = await post(`/deposits/${d.id}/returns`, { reason: 'OTHER' }, co.readKey);
    expect([byRead.status, byRead.body.error]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    expect((await post('/deposits/dep_nope/returns', { reason: 'OTHER' })).status).toBe(404);
  });

  it('a PSE payment is refunded through the PSE provider, from the ACH wallet, as a PSE movement; webhooks verified', async () => {
    const link = await post('/deposits/pse', { amountCents: 60_000, ...PSE_PAYER, internalRef: 'pedido-dev' });
    expect(link.status).toBe(201);
    const paid = await fetch(`${stack.sandbox!.url}/sandbox/pse/${link.body.id}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'APPROVED', payerBank: 'Bancolombia' }),
    });
    expect(paid.status).toBe(200);
    const d = await eventually(
      async () => {
        const r = await get('/deposits?rail=PSE');
        return (r.body.deposits ?? []).find((x: any) => x.id === link.body.id && x.status === 'ASSIGNED');
      },
      15_000,
      100,
    );
    const ach = async () => BigInt((await get('/wallets/balance')).body.wallets.find((w: any) => w.rail === 'ACH').availableCents);
    const before = await ach();
    const r = await post(`/deposits/${d.id}/returns`, { amountCents: 25_000, reason: 'CUSTOMER_REQUEST', description: 'Pedido cancelado' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      depositId: d.id,
      rail: 'PSE',
      amountCents: '25000',
      status: 'RETURNED',
      depositAmountCents: '60000',
      returnedAmountCents: '25000',
    });
    expect(await ach()).toBe(before - 25_000n);
    const movement = await get(`/wallets/transactions/${r.body.transactionId}`);
    expect(movement.body).toMatchObject({ type: 'TRANSFER_OUT', rail: 'PSE', status: 'COMPLETED', reference: r.body.id });
    expect((await get(`/deposits/${d.id}/returns`)).body.items.map((x: any) => x.id)).toEqual([r.body.id]);
    const foreign = await post(`/deposits/${d.id}/returns`, { reason: 'OTHER' }, other.writeKey);
    expect([foreign.status, foreign.body.error]).toEqual([404, 'DEPOSIT_NOT_FOUND']);
    const hit = await eventually(async () => rx.hits.find((x) => x.body.data?.id === r.body.id), 20_000);
    expect([hit.body.type, hit.body.data.rail]).toEqual(['deposit.returned', 'PSE']);
    expect(verifyWebhook(secret, hit)).toBe(true);
  });

  it('the network refuses a return: FAILED, the funds back in the wallet, deposit.return_failed', async () => {
    const d = await credited('dev-e2e-3', 40_000);
    const before = await balance();
    // The network has already returned part of this payment on another participant's request: it refuses more than is left.
    const taken = await fetch(`${stack.sandbox!.url}/breb/network/returns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ returnId: 'ext-return-1', providerTransferId: d.providerTransferId, amountCents: 30_000 }),
    });
    expect(taken.status).toBe(201);
    const r = await post(`/deposits/${d.id}/returns`, { amountCents: 20_000, reason: 'DUPLICATE' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'FAILED', failureCode: 'RETURN_EXCEEDS_PAYMENT', returnedAmountCents: '0' });
    expect(await balance()).toBe(before);
    const hit = await eventually(async () => rx.hits.find((x) => x.body.data?.id === r.body.id), 20_000);
    expect(hit.body.type).toBe('deposit.return_failed');
    expect(verifyWebhook(secret, hit)).toBe(true);
  });
});
