import { randomUUID } from 'node:crypto';
import { counterpartyEventsV1 } from '@wallet/proto';
import { dispatched, eventually, Receiver, startHarness, verify, type Harness, type Instance } from './harness.js';

/**
 * The transfer service's counterparty events (stream COUNTERPARTIES, docs/counterparties.md) become
 * the public `counterparty.verified` / `counterparty.verification_failed` webhooks: through the real
 * NATS stream, the dispatcher's durable consumer, Postgres and a real HTTP receiver, signed as
 * Standard Webhooks, with the counterparty as GET /counterparties/{id} shows it.
 */
describe('webhook service: counterparty events', () => {
  let h: Harness;
  let svc: Instance;

  beforeAll(async () => {
    h = await startHarness();
    svc = await h.start();
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  /** A CounterpartyEvent as the transfer service publishes it (an ACH counterparty whose prenote was rejected unless told). */
  async function publish(subject: string, companyId: string, id: string, verification: Record<string, unknown>): Promise<string> {
    const eventId = randomUUID();
    const now = new Date();
    const payload = counterpartyEventsV1.CounterpartyEvent.toJSON(
      counterpartyEventsV1.CounterpartyEvent.fromPartial({
        eventId,
        companyId,
        occurredAt: now,
        counterparty: {
          id,
          name: 'Nómina Ana',
          rail: 'ACH',
          bankAccount: { bankId: 1, bankName: 'Bancolombia', accountTypeId: 20, accountNumberMasked: '****4517' },
          documentTypeId: 1,
          documentNumber: '1020304050',
          holderName: 'Ana Pérez',
          tags: ['nomina'],
          verification: { method: 'PRENOTE', requestedAt: now, decidedAt: now, ...verification },
          createdAt: now,
          updatedAt: now,
          version: 2,
        },
      }),
    );
    await h.bus.publish({ id: eventId, subject, payload, time: now.toISOString(), source: 'test' });
    return eventId;
  }

  it('delivers counterparty.verification_failed, signed, with the counterparty (account masked), to the subscribed endpoint of its company only', async () => {
    const rx = new Receiver();
    const other = new Receiver();
    await rx.up();
    await other.up();
    const co = `co-${randomUUID()}`;
    const { endpoint: ep, secret } = await svc.client.createEndpoint({ url: rx.url, events: ['counterparty.verification_failed'] }, h.ctx(co));
    const stranger = `co-${randomUUID()}`;
    const { endpoint: theirs } = await svc.client.createEndpoint(
      { url: other.url, events: ['counterparty.verification_failed', 'counterparty.verified'] },
      h.ctx(stranger),
    );

    const id = `cpty_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    await publish('counterparty.verification_failed', co, id, {
      status: 'FAILED',
      reasonCode: 'R17',
      reason: 'La identificación del titular no corresponde a la cuenta',
    });
    // Not subscribed to by this company's endpoint: nothing for it.
    await publish('counterparty.verified', co, id, { status: 'VERIFIED' });

    const [got] = await eventually(async () => (rx.delivered().length >= 1 ? rx.delivered() : undefined));
    // Every published event handled: the deliveries it made are written (in the consumer's transaction).
    await dispatched(svc);
    const deliveries = (await svc.client.listDeliveries({ endpointId: ep!.id, limit: 10 }, h.ctx(co))).items;
    expect(deliveries.map((d) => [d.eventType, d.resourceId])).toEqual([['counterparty.verification_failed', id]]);
    expect(rx.received.map((r) => r.body.type)).toEqual(['counterparty.verification_failed']);
    expect(verify(got!, secret)).toEqual({ ok: true });
    expect(got!.body.data).toMatchObject({
      id,
      rail: 'ACH',
      brebKey: null,
      bankAccount: { bankId: 1, bankName: 'Bancolombia', accountTypeId: 20, accountNumberMasked: '****4517' },
      holderName: 'Ana Pérez',
      tags: ['nomina'],
      verification: { status: 'FAILED', method: 'PRENOTE', reasonCode: 'R17', reason: 'La identificación del titular no corresponde a la cuenta' },
      version: 2,
    });
    // Another company's endpoint hears nothing of it.
    expect((await svc.client.listDeliveries({ endpointId: theirs!.id, limit: 10 }, h.ctx(stranger))).items).toEqual([]);
    expect(other.received).toEqual([]);
    await rx.down();
    await other.down();
  });

  it('refuses an endpoint subscribing to an unknown counterparty event type', async () => {
    const err = await svc.client
      .createEndpoint({ url: 'http://127.0.0.1:9/x', events: ['counterparty.created'] }, h.ctx(`co-${randomUUID()}`))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_REQUEST' });
  });
});
