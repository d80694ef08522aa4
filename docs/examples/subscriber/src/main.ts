// node dist/main.js — prints every transfer event once. Environment: NATS_URL (nats://127.0.0.1:4222),
// BUS_NAMESPACE (empty unless the installation uses one), DURABLE (the consumer name).
import { runSubscriber } from './subscriber.js';
import type { TransferEvent } from './handler.js';

const ns = process.env.BUS_NAMESPACE ?? '';
const controller = new AbortController();
process.once('SIGINT', () => controller.abort());
process.once('SIGTERM', () => controller.abort());

await runSubscriber<TransferEvent>({
  servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  stream: ns ? `${ns.toUpperCase()}_TRANSFERS` : 'TRANSFERS',
  durable: process.env.DURABLE ?? 'example-transfer-subscriber',
  filterSubject: ns ? `${ns}.transfer.>` : 'transfer.>',
  signal: controller.signal,
  async onEvent(e) {
    // Your effect here (in the same transaction as recording e.id when it writes to a database).
    console.log(`${e.time} ${e.type} transfer=${e.data.transferId} status=${e.data.status} amount=${e.data.amount} (centavos)`);
  },
  onOutcome(outcome, subject) {
    if (outcome !== 'handled') console.warn(`${subject}: ${outcome}`);
  },
});
