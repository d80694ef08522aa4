// Micro-benchmark behind the `noAsyncTraces` NATS connection option (services/platform/src/bus/bus.ts):
// CPU µs of this client per JetStream publish (a request to the server) and per consumed message
// acknowledged with ackAck (another request), with the option off (the library default) and on.
// Usage: node test/bench/nats-traces.mjs [messages per round]   (NATS at NATS_URL, default 127.0.0.1:4222)
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, AckPolicy } from '@nats-io/jetstream';

const N = Number(process.argv[2] ?? 3000);
const servers = (process.env.NATS_URL ?? 'nats://127.0.0.1:4222').split(',');
const stream = `BENCHTRACES_${process.pid}`;
const subject = `benchtraces${process.pid}.x`;

async function round(noAsyncTraces) {
  const nc = await connect({ servers, noAsyncTraces });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [subject] });
  await jsm.consumers.add(stream, { durable_name: 'c', ack_policy: AckPolicy.Explicit });
  const payload = JSON.stringify({ companyId: '0f0c3a4e-1111-4c1d-9f1e-2d1e3a4b5c6d', amount: '1000', status: 'PENDING' });
  // Publish as the outbox relay does (a few at a time, each awaited for its PubAck).
  let c0 = process.cpuUsage(),
    t0 = performance.now();
  for (let i = 0; i < N; i += 8) {
    await Promise.all(Array.from({ length: 8 }, (_, k) => js.publish(subject, payload, { msgID: `m-${noAsyncTraces}-${i + k}` })));
  }
  let c = process.cpuUsage(c0);
  const pub = { cpuUs: (c.user + c.system) / N, wallMs: performance.now() - t0 };
  // Consume as the InboxConsumer does: one message at a time, ackAck each.
  const consumer = await js.consumers.get(stream, 'c');
  const messages = await consumer.consume({ max_messages: 100 });
  c0 = process.cpuUsage();
  t0 = performance.now();
  let n = 0;
  for await (const m of messages) {
    m.json();
    await m.ackAck();
    if (++n === N) break;
  }
  c = process.cpuUsage(c0);
  const con = { cpuUs: (c.user + c.system) / N, wallMs: performance.now() - t0 };
  await jsm.streams.delete(stream);
  await nc.close();
  return { pub, con };
}

const rows = [];
for (let r = 0; r < 3; r++) {
  for (const opt of [false, true]) rows.push({ opt, ...(await round(opt)) });
}
const avg = (opt, k) => rows.filter((r) => r.opt === opt).reduce((a, r) => a + r[k].cpuUs, 0) / 3;
for (const r of rows)
  console.log(
    `noAsyncTraces=${String(r.opt).padEnd(5)} publish ${r.pub.cpuUs.toFixed(1)} µs CPU (${(N / (r.pub.wallMs / 1000)).toFixed(0)}/s)  consume+ackAck ${r.con.cpuUs.toFixed(1)} µs CPU (${(N / (r.con.wallMs / 1000)).toFixed(0)}/s)`,
  );
console.log(
  `mean of 3 rounds, CPU µs per message: publish ${avg(false, 'pub').toFixed(1)} → ${avg(true, 'pub').toFixed(1)}; consume+ackAck ${avg(false, 'con').toFixed(1)} → ${avg(true, 'con').toFixed(1)}`,
);
