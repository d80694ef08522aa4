// CPU per event of the platform's durable inbox consumer (InboxConsumer), alone: events of a send's
// size published into a fresh stream at a steady rate by a child process, consumed here with a
// batch handler that writes nothing (so what is measured is JetStream delivery, the inbox
// transaction and the acknowledgement), this process's CPU divided by the events it handled.
// Usage: node test/bench/consumer-cost.mjs [events/s] [seconds] [burst]      (loopback NATS and Postgres only)
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Migration } from '@mikro-orm/migrations';
import { Bus, Database, InboxConsumer, createLogger, outboxInboxDdl } from '@wallet/platform';
import { createTestDatabase, deleteNamespaceStreams, testNamespace } from '@wallet/platform/testing';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const SCHEMA = 'consumer_cost';
/** A transfer event's payload is ~1.4 kB of JSON. */
const payload = (i) => ({ companyId: randomUUID(), transferId: randomUUID(), i, pad: 'x'.repeat(1300) });

if (process.argv[2] === '--publisher') {
  const [, , , ns, rate, seconds, burst] = process.argv;
  const bus = await Bus.connect({ url: NATS_URL, namespace: ns, name: 'cost-pub', logger: createLogger('cost-pub', 'silent') });
  const total = Number(rate) * Number(seconds);
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + (Math.floor(i / Number(burst)) * Number(burst) * 1000) / Number(rate);
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    void bus.publish({ id: randomUUID(), subject: 'ledger.credited', payload: payload(i), source: 'cost', time: new Date().toISOString() });
  }
  await bus.close();
  process.exit(0);
}

class CreateTables extends Migration {
  name = '0001_consumer_cost';
  async up() {
    for (const sql of outboxInboxDdl(SCHEMA)) this.addSql(sql);
  }
}

const rate = Number(process.argv[2] ?? 300);
const seconds = Number(process.argv[3] ?? 10);
/** Events published together (what a relay's batch does): 1 = one at a time. */
const burst = Number(process.argv[4] ?? 1);
const log = createLogger('consumer-cost', 'silent');
const tdb = await createTestDatabase('cc');
const ns = testNamespace();
const db = await Database.open({ url: tdb.url, schema: SCHEMA, migrations: [CreateTables], logger: log });
await db.migrate();
const bus = await Bus.connect({ url: NATS_URL, namespace: ns, name: 'consumer-cost', logger: log });
await bus.ensureStream('LEDGER');
let handled = 0;
let pages = 0;
const consumer = new InboxConsumer(db, bus, {
  stream: 'LEDGER',
  durable: 'cost',
  subject: 'ledger.>',
  log,
  handler: async () => {
    handled++;
    pages++;
  },
  batchHandler: async (evts) => {
    handled += evts.length;
    pages++;
  },
});
await consumer.start();
const total = rate * seconds;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const child = fork(fileURLToPath(import.meta.url), ['--publisher', ns, String(rate), String(seconds), String(burst)], { stdio: 'inherit' });
const deadline = Date.now() + (seconds + 30) * 1000;
while (handled < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
const cpu = process.cpuUsage(cpu0);
const wall = performance.now() - t0;
child.kill();
await consumer.stop();
await bus.close();
await db.close();
await deleteNamespaceStreams(NATS_URL, ns);
await tdb.drop();
console.log(
  `${handled}/${total} events at ${rate}/s (bursts of ${burst}) in ${(wall / 1000).toFixed(1)} s: consumer CPU ${((cpu.user + cpu.system) / handled).toFixed(0)} µs per event (user ${(cpu.user / handled).toFixed(0)}, system ${(cpu.system / handled).toFixed(0)}); ${(handled / pages).toFixed(1)} events per transaction`,
);
