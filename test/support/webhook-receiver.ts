import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** One delivery as the receiver got it: the headers, the raw body (what the signature covers), the parsed JSON. */
export interface Hit {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

/** A company's webhook receiver on loopback (answers 204 to every delivery and keeps them in order). */
export class WebhookReceiver {
  server: Server | undefined;
  hits: Hit[] = [];
  url = '';
  constructor(private readonly path = '/wallet-events') {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        this.hits.push({ headers: req.headers, raw, body: JSON.parse(raw) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${this.path}`;
  }

  ofType(type: string): Hit[] {
    return this.hits.filter((h) => h.body.type === type);
  }

  async stop(): Promise<void> {
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
  }
}

/**
 * What docs/webhooks.md tells an integrator to do: verify with the Standard Webhooks reference
 * library (`standardwebhooks` on npm), on the raw body and the delivery's headers. Not our code.
 */
export function verifyWebhook(secret: string, hit: Hit): boolean {
  try {
    new Webhook(secret).verify(hit.raw, hit.headers as Record<string, string>);
    return true;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return false;
    throw err;
  }
}
