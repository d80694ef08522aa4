import { randomUUID } from 'node:crypto';
import { ledgerV1, walletEventsV1 } from '@wallet/proto';
import { dispatched, eventually, Receiver, startHarness, verify, type Harness, type Instance } from './harness.js';

/**
 * The ledger's `wallet.moved` (stream WALLETS, docs/wallet-moves.md) becomes the public `wallet.moved`
 * webhook: through the real NATS stream, the dispatcher's durable consumer, Postgres and a real HTTP
 * receiver, signed as Standard Webhooks, with the move as GET /wallets/moves/{id} shows it.
 */
describe('webhook service: moves between a company’s own wallets', () => {
  let h: Harness;
  let svc: Instance;

  beforeAll(async () => {
    h = await startHarness();
    svc = await h.start();
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  /** A WalletMoved as the ledger publishes it (proto3 JSON; the posting's instant with its microseconds). */
  async function publish(companyId: string, moveId: string): Promise<string> {
    const eventId = randomUUID();
    const payload = {
      ...(walletEventsV1.WalletMoved.toJSON(
        walletEventsV1.WalletMoved.fromPartial({
          eventId,
          companyId,
          moveId,
          fromRail: ledgerV1.Rail.ACH,
          toRail: ledgerV1.Rail.BREB,
          amountCents: 250_000n,
          reference: 'fondeo-breb',
          description: 'Fondeo del día',
          debitMovementId: '0d6a4e57-93b1-4c0e-8f2d-61a9b3c7e5d2',
          creditMovementId: 'a8c2f1e4-5d7b-4e93-b0a6-2f4d8c1e9b37',
        }),
      ) as Record<string, unknown>),
      occurredAt: '2026-11-29T14:05:31.482913Z',
    };
    await h.bus.publish({ id: eventId, subject: 'wallet.moved', payload, time: new Date().toISOString(), source: 'test' });
    return eventId;
  }

  it('delivers wallet.moved, signed, with the move, to the subscribed endpoint of its company only', async () => {
    const rx = new Receiver();
    const other = new Receiver();
    await rx.up();
    await other.up();
    const co = `co-${randomUUID()}`;
    const { endpoint: ep, secret } = await svc.client.createEndpoint({ url: rx.url, events: ['wallet.moved'] }, h.ctx(co));
    const stranger = `co-${randomUUID()}`;
    const { endpoint: theirs } = await svc.client.createEndpoint({ url: other.url, events: ['wallet.moved'] }, h.ctx(stranger));

    const moveId = randomUUID();
    await publish(co, moveId);

    const [got] = await eventually(async () => (rx.delivered().length >= 1 ? rx.delivered() : undefined));
    await dispatched(svc);
    const deliveries = (await svc.client.listDeliveries({ endpointId: ep!.id, limit: 10 }, h.ctx(co))).items;
    expect(deliveries.map((d) => [d.eventType, d.resourceId])).toEqual([['wallet.moved', moveId]]);
    expect(verify(got!, secret)).toEqual({ ok: true });
    expect(got!.body).toMatchObject({ type: 'wallet.moved', createdAt: '2026-11-29T14:05:31.482000Z' });
    expect(got!.body.data).toEqual({
      id: moveId,
      from: 'ACH',
      to: 'BREB',
      amountCents: 250_000,
      status: 'COMPLETED',
      reference: 'fondeo-breb',
      description: 'Fondeo del día',
      debitTransactionId: '0d6a4e57-93b1-4c0e-8f2d-61a9b3c7e5d2',
      creditTransactionId: 'a8c2f1e4-5d7b-4e93-b0a6-2f4d8c1e9b37',
      createdAt: '2026-11-29T14:05:31.482913Z',
    });
    // Another company's endpoint hears nothing of it.
    expect((await svc.client.listDeliveries({ endpointId: theirs!.id, limit: 10 }, h.ctx(stranger))).items).toEqual([]);
    expect(other.received).toEqual([]);
    await rx.down();
    await other.down();
  });
});
