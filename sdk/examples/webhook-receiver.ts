// A webhook receiver: verifies every delivery's Standard Webhooks signature on the raw body before
// trusting it, answers 2xx fast, and deduplicates on the event id (deliveries are retried).
//   WEBHOOK_SECRET=whsec_… WEBHOOK_PORT=3000 node examples/webhook-receiver.ts
// Or let it register itself (outside production a loopback http URL is accepted):
//   WALLET_BASE_URL=… WALLET_API_KEY=wk_test_… WEBHOOK_PORT=3000 node examples/webhook-receiver.ts
// It then registers http://127.0.0.1:<port>/wallet-events, asks for a test ping, and deletes the
// endpoint when it stops. WEBHOOK_MAX_EVENTS=n stops after n verified events (for CI).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, WebhookVerificationError, type WebhookEventType } from '@wallet/client';
import { clientFromEnv } from './env.ts';

const port = Number(process.env.WEBHOOK_PORT ?? 3000);
const maxEvents = Number(process.env.WEBHOOK_MAX_EVENTS ?? Infinity);
let secret = process.env.WEBHOOK_SECRET;
const seen = new Set<string>();
let verified = 0;

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/wallet-events') return void res.writeHead(404).end();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    try {
      const event = verifyWebhook(raw, req.headers, secret ?? '');
      res.writeHead(204).end(); // acknowledge first; do the work after
      if (seen.has(event.id)) return console.log(`duplicate ${event.id} ignored`);
      seen.add(event.id);
      verified++;
      console.log(`verified ${event.type} ${event.id} ${JSON.stringify(event.data)}`);
      if (verified >= maxEvents) void stop(0);
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      console.warn(`refused a delivery: ${err.message}`);
      res.writeHead(400).end();
    }
  });
});

let registered: { id: string } | undefined;
const wallet = process.env.WALLET_API_KEY ? clientFromEnv() : undefined;

async function stop(code: number) {
  if (registered && wallet) await wallet.webhooks.endpoints.delete(registered.id).catch(() => undefined);
  server.close();
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

server.listen(port, '127.0.0.1', async () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wallet-events`;
  console.log(`listening on ${url}`);
  if (!secret) {
    if (!wallet) {
      console.error('Set WEBHOOK_SECRET, or WALLET_BASE_URL and WALLET_API_KEY to register an endpoint.');
      return stop(2);
    }
    const events = (process.env.WEBHOOK_EVENTS ?? 'transfer.completed,transfer.failed,deposit.paid').split(',') as Exclude<WebhookEventType, 'webhook.ping'>[];
    const endpoint = await wallet.webhooks.endpoints.create({ url, events, description: 'examples/webhook-receiver.ts' });
    registered = endpoint;
    secret = endpoint.secret;
    console.log(`registered endpoint ${endpoint.id} for ${events.join(', ')}`);
    await wallet.webhooks.endpoints.test(endpoint.id);
    console.log('asked for a webhook.ping');
  }
});
