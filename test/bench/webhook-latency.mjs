// Webhook delivery latency with two replicas of the webhook service (one durable consumer per stream, pulled by
// both): from an event's publication to NATS to its delivery reaching the endpoint, for a steady stream of
// transfers (created, then completed, per transfer), and whether any resource's events arrived out of order.
// Measures what the per-resource stream order costs (docs/webhooks.md "Order": a delivery waits until the
// consumer's ack floor has passed its event; the floors are read from JetStream at each pass of the worker).
//
//   node test/bench/webhook-latency.mjs [--transfers 1500] [--rate 150]
//
// Uses the machine's Postgres and NATS (a database and a bus namespace of its own, removed at the end). Prints
// one JSON line: { transfers, rate, deliveries, p50Ms, p90Ms, p99Ms, maxMs, outOfOrder, seconds }. For an A/B,
// run it from two checkouts (a worktree with node_modules linked to the main checkout's) one after the other.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Bus, createLogger } from '@wallet/platform';
import { createTestDatabase, deleteNamespaceStreams, policyClient, testNamespace } from '@wallet/platform/testing';
import { transferEventsV1, webhookV1 } from '@wallet/proto';
import { startWebhook, webhookAccess } from '@wallet/webhook/testing';

const argv = process.argv.slice(2);
const arg = (name, def) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : def;
};
const TRANSFERS = arg('transfers', 1500);
const RATE = arg('rate', 150); // transfers per second (two events each)
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const published = new Map(); // `${transferId} ${type}` → publish time (ms, performance.now)
const arrived = new Map(); // the same → first arrival
const order = new Map(); // transferId → types in arrival order
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const key = `${body.data.id} ${body.type}`;
    if (!arrived.has(key)) {
      arrived.set(key, performance.now());
      order.set(body.data.id, [...(order.get(body.data.id) ?? []), body.type]);
    }
    res.writeHead(204).end();
  });
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));

const tdb = await createTestDatabase('webhook');
const namespace = testNamespace();
const bus = await Bus.connect({ url: NATS_URL, namespace, name: 'webhook-bench', logger: createLogger('bench', 'silent') });
await bus.ensureStream('TRANSFERS');
// two replicas on one database and one namespace: they share the durable consumers (production's poll interval)
const env = { WEBHOOK_POLL_INTERVAL_MS: '1000', WEBHOOK_DB_POOL_MAX: '6' };
const replicas = [];
for (let r = 0; r < 2; r++) replicas.push(await startWebhook({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, env }));
const client = policyClient(webhookV1.WebhookServiceClient, replicas[0].address, 'webhook', webhookAccess, 15_000);
const companyId = `co-${randomUUID()}`;
await client.createEndpoint(
  { url: `http://127.0.0.1:${receiver.address().port}/hooks`, events: ['transfer.created', 'transfer.completed'], enabled: true },
  { requestId: randomUUID(), companyId },
);

const payload = (transferId, status, eventId) => {
  const now = new Date();
  return transferEventsV1.TransferEvent.toJSON(
    transferEventsV1.TransferEvent.fromPartial({
      eventId,
      transferId,
      companyId,
      rail: 'RAIL_BREB',
      status,
      amount: 1_000_000n,
      totalFee: 5_000n,
      ivaAmount: 950n,
      netAmount: 1_000_000n,
      targetName: 'Ana Gómez',
      targetDocument: '1020304050',
      createdAt: now,
      occurredAt: now,
    }),
  );
};
const publish = async (transferId, subject, status) => {
  const id = randomUUID();
  published.set(`${transferId} ${subject}`, performance.now());
  await bus.publish({ id, subject, payload: payload(transferId, status, id), time: new Date().toISOString(), source: 'bench' });
};

// Warm-up: both replicas' consumers pulling and a worker delivering, before anything is timed.
{
  const t = randomUUID();
  await publish(t, 'transfer.created', 'MOVEMENT_STATUS_PENDING');
  await publish(t, 'transfer.completed', 'MOVEMENT_STATUS_COMPLETED');
  const until = Date.now() + 30_000;
  while (arrived.size < 2 && Date.now() < until) await sleep(50);
  if (arrived.size < 2) throw new Error('warm-up: nothing delivered in 30 s');
  published.clear();
  arrived.clear();
  order.clear();
}

const started = performance.now();
const inFlight = [];
for (let i = 0; i < TRANSFERS; i++) {
  const due = started + (i * 1000) / RATE;
  const wait = due - performance.now();
  if (wait > 0) await sleep(wait);
  const t = randomUUID();
  inFlight.push(
    (async () => {
      await publish(t, 'transfer.created', 'MOVEMENT_STATUS_PENDING');
      await sleep(20); // the completion follows shortly, as a fast Bre-B confirmation does
      await publish(t, 'transfer.completed', 'MOVEMENT_STATUS_COMPLETED');
    })(),
  );
}
await Promise.all(inFlight);
const until = Date.now() + 60_000;
while (arrived.size < published.size && Date.now() < until) await sleep(100);
const seconds = (performance.now() - started) / 1000;

const latencies = [...published].filter(([k]) => arrived.has(k)).map(([k, t]) => arrived.get(k) - t);
latencies.sort((a, b) => a - b);
const q = (p) => +(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN).toFixed(1);
const outOfOrder = [...order.values()].filter((types) => types.indexOf('transfer.completed') < types.indexOf('transfer.created')).length;
console.log(
  JSON.stringify({
    transfers: TRANSFERS,
    rate: RATE,
    deliveries: latencies.length,
    missing: published.size - latencies.length,
    p50Ms: q(0.5),
    p90Ms: q(0.9),
    p99Ms: q(0.99),
    maxMs: q(1),
    outOfOrder,
    seconds: +seconds.toFixed(1),
  }),
);

client.close();
for (const r of replicas) await r.stop();
await bus.close();
await deleteNamespaceStreams(NATS_URL, namespace);
await tdb.drop();
receiver.close();
