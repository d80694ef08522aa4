import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { ReceivedEvent } from '@wallet/platform';
import type { StreamFloor } from '../../src/app/ports.js';
import { SqlWebhookStore } from '../../src/persistence/webhook.store.js';
import { startHarness, transferPayload, type Harness, type Instance } from './harness.js';

/**
 * A resource's deliveries go out in its events' stream order, whatever order the consumer's replicas recorded
 * them in, each once the stream's ack floor has passed it (docs/webhooks.md "Order"). The stream names here are
 * the test's own: the service's worker has no floor for them and never claims their deliveries; the test claims
 * them itself with the floors it chooses.
 */
describe('delivery order: stream order, gated by the consumer ack floor', () => {
  let h: Harness;
  let svc: Instance;
  let store: SqlWebhookStore;

  beforeAll(async () => {
    h = await startHarness();
    svc = await h.start();
    store = new SqlWebhookStore(svc.service.db, 86_400);
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  const LIFE = ['transfer.created', 'transfer.awaiting_approval', 'transfer.approved', 'transfer.completed'] as const;

  /** A company with one endpoint hearing a transfer's whole life, and a fresh stream name. */
  async function company() {
    const co = `co-${randomUUID()}`;
    const endpoint = (await svc.client.createEndpoint({ url: 'http://127.0.0.1:9/hooks', events: [...LIFE], enabled: true }, h.ctx(co))).endpoint!.id;
    return { co, endpoint, stream: `ORDER_${randomUUID().slice(0, 8)}` };
  }
  const eventOf = (co: string, transferId: string, stream: string, streamSeq: number): ReceivedEvent => ({
    id: randomUUID(),
    subject: LIFE[streamSeq - 1]!,
    payload: transferPayload({ transferId, companyId: co }, 'x'),
    time: new Date().toISOString(),
    traceparent: undefined,
    redelivered: false,
    stream,
    streamSeq,
  });
  /** Records one event as a consumer replica does: in its own transaction. */
  const record = (evt: ReceivedEvent) => svc.service.db.preparedTx((tx) => svc.service.dispatcher.batchHandler(() => undefined)([evt], tx));
  /** Claims the endpoint's due deliveries (as a worker would), sends them (succeeds at once): their event types. */
  async function sendDue(endpoint: string, floors: StreamFloor[]): Promise<string[]> {
    const sent: string[] = [];
    for (;;) {
      const claimed = (await store.claimDue(100, 60, floors)).filter((c) => c.endpointId === endpoint);
      if (claimed.length === 0) return sent;
      for (const c of claimed) {
        await store.markSucceeded(c.id, 204, 1);
        sent.push((JSON.parse(c.body) as { type: string }).type);
      }
    }
  }

  it('a later event recorded first waits for the floor, then for the earlier one recorded after it', async () => {
    const { co, endpoint, stream } = await company();
    const t = randomUUID();
    await record(eventOf(co, t, stream, 4)); // completed, recorded first (the replica that held `created` is slow)
    expect(await sendDue(endpoint, [])).toEqual([]); // no floor known for the stream: it waits
    expect(await sendDue(endpoint, [{ stream, seq: 3 }])).toEqual([]); // the floor is below it: earlier events may still come
    await record(eventOf(co, t, stream, 1)); // created, recorded second
    expect(await sendDue(endpoint, [{ stream, seq: 4 }])).toEqual(['transfer.created', 'transfer.completed']);
  });

  it('any order of recording and any lagging floor: sent in stream order, each once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray([1, 2, 3, 4], { minLength: 4, maxLength: 4 }),
        fc.array(fc.nat(3), { minLength: 4, maxLength: 4 }),
        async (order, lag) => {
          const { co, endpoint, stream } = await company();
          const t = randomUUID();
          const recorded = new Set<number>();
          const sent: string[] = [];
          for (const [i, seq] of order.entries()) {
            await record(eventOf(co, t, stream, seq));
            recorded.add(seq);
            // the floor: the longest recorded prefix of the stream, as JetStream computes it, read up to `lag` behind
            let floor = 0;
            while (recorded.has(floor + 1)) floor++;
            sent.push(...(await sendDue(endpoint, [{ stream, seq: Math.max(0, floor - lag[i]!) }])));
          }
          sent.push(...(await sendDue(endpoint, [{ stream, seq: 4 }])));
          expect(sent).toEqual([...LIFE]);
        },
      ),
      { numRuns: 25 },
    );
  });
});
