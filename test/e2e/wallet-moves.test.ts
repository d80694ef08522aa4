import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { verifyWebhook, WebhookReceiver } from '../support/webhook-receiver.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * A move between a company's own wallets (docs/wallet-moves.md) through the real processes: gateway,
 * ledger (its outbox, the WALLETS stream), webhook service and an HTTP receiver. The webhook's data is
 * the move as the API shows it; the books stay balanced.
 */
describe('wallet moves end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const rx = new WebhookReceiver();
  let endpoint: any;
  /** What the receiver got for a move, and what the API answered for it. */
  const hits = new Map<string, { data: unknown; answer: unknown }>();

  beforeAll(async () => {
    stack = await startStack({ webhooks: true });
    co = await stack.provision('Traslados S.A.S.', { taxRegime: 'COMMON' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 2_000_000, reference: 'seed-ach' });
    await rx.start();
    const ep = await stack.http('POST', '/webhooks/endpoints', { token: co.writeKey, body: { url: rx.url, events: ['wallet.moved'] } });
    expect(ep.status).toBe(201);
    endpoint = ep.body;
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    await rx.stop();
  });
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('a move reaches the receiver as wallet.moved, signed, its data the move as GET /wallets/moves/{id} shows it', async () => {
    const moved = await stack.http('POST', '/wallets/moves', {
      token: co.writeKey,
      body: { from: 'ACH', to: 'BREB', amountCents: 750_000, reference: 'fondeo-breb' },
      headers: { 'Idempotency-Key': 'e2e-move-1' },
    });
    expect(moved.status).toBe(201);
    const got = await stack.http('GET', `/wallets/moves/${moved.body.id}`, { token: co.readKey });
    expect(got.body).toEqual(moved.body);
    const hit = await eventually(async () => rx.ofType('wallet.moved').find((h) => h.body.data.id === moved.body.id), 20_000, 100);
    expect(verifyWebhook(endpoint.secret, hit)).toBe(true);
    expect(hit.body.data).toEqual(moved.body);
    hits.set('move-1', { data: hit.body.data, answer: moved.body });
    const balance = await stack.http('GET', '/wallets/balance', { token: co.readKey });
    expect(balance.body.wallets.map((w: any) => [w.rail, w.availableCents])).toEqual([
      ['BREB', '750000'],
      ['ACH', '1250000'],
    ]);
  });

  // WalletMoved.occurredAt is the move's statement's instant, as its legs' createdAt (microseconds).
  it("the webhook's createdAt is the API's, to the microsecond (ledger: WalletMoved.occurredAt)", async () => {
    const seen = hits.get('move-1');
    expect(seen).toBeDefined();
    expect(seen!.data).toEqual(seen!.answer);
  });
});
