import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startStack } from '../support/stack.js';
import { send } from '../support/hostile.js';
import { slowClient, type SlowClient } from '../support/raw-http.js';
import { checkRawDocumented } from '../support/openapi-check.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * Slow clients (slowloris): headers that never end, a body that trickles, a connection that
 * never speaks. The gateway's HTTP server must cut them off (headersTimeout / requestTimeout,
 * enforced by Node on its 30 s connection-check interval) and keep serving everyone else.
 * Mostly waiting: it runs beside the other suites.
 */
describe('slow clients', () => {
  let stack: Stack;
  let slow: Record<'headers' | 'body' | 'idle', SlowClient>;
  let key: string;

  beforeAll(async () => {
    stack = await startStack({ RATE_LIMIT_READS: '100000' });
    slow = { headers: slowClient(stack.gateway.port, 'headers'), body: slowClient(stack.gateway.port, 'body'), idle: slowClient(stack.gateway.port, 'idle') };
    key = (await stack.provision('Lenta S.A.S.')).readKey;
  }, 60_000);
  afterAll(async () => {
    for (const c of Object.values(slow ?? {})) c.destroy();
    await stack?.stop();
  });

  it('the HTTP server has finite header and request timeouts', () => {
    const server = readFileSync(fileURLToPath(new URL('../../gateway/src/server.ts', import.meta.url)), 'utf8');
    const opts = /createServer\(\{([^}]*)\}/.exec(server)?.[1] ?? '';
    const num = (name: string) => Number(new RegExp(`${name}:\\s*([\\d_]+)`).exec(opts)?.[1]?.replace(/_/g, '') ?? NaN);
    expect(num('requestTimeout')).toBeGreaterThan(0);
    expect(num('requestTimeout')).toBeLessThanOrEqual(60_000);
    expect(num('headersTimeout')).toBeGreaterThan(0);
    expect(num('headersTimeout')).toBeLessThanOrEqual(num('requestTimeout'));
  });

  it('slow clients do not hold the server: others are served meanwhile', async () => {
    const crowd = Array.from({ length: 40 }, (_, i) => slowClient(stack.gateway.port, i % 2 ? 'headers' : 'body'));
    try {
      for (let i = 0; i < 5; i++) expect((await send(stack.gateway.url, 'GET', '/wallets/balance', { token: key, hangMs: 10_000 })).status).toBe(200);
    } finally {
      for (const c of crowd) c.destroy();
    }
  });

  it('a client that trickles headers or body, and one that never sends a request, are cut off by the server', async () => {
    const bound = <T>(p: Promise<T>) =>
      Promise.race([
        p,
        new Promise<T>((_, rej) => setTimeout(() => rej(new Error('HANG: the server kept a slow client open for 2 minutes')), 120_000).unref()),
      ]);
    const [h, b, i] = await Promise.all([bound(slow.headers.closed), bound(slow.body.closed), bound(slow.idle.closed)]);
    expect({ headers: h.closedByServer, body: b.closedByServer, idle: i.closedByServer }).toEqual({ headers: true, body: true, idle: true });
    // A timed-out request gets 408 or a bare close; never a 2xx or a 5xx.
    for (const s of [h.status, b.status]) if (s !== undefined) expect(s).toBe(408);
    // Whatever answer there was is one the document declares (the HTTP server's own 408).
    await checkRawDocumented(stack.gateway.url, slow.headers.head, h.response);
    await checkRawDocumented(stack.gateway.url, slow.body.head, b.response);
    // And the server is still fine.
    expect((await send(stack.gateway.url, 'GET', '/wallets/balance', { token: key })).status).toBe(200);
  }, 130_000);
});
