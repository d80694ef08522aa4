import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import { Redis } from 'ioredis';
import { Database, ERRORS, createLogger } from '@wallet/platform';
import { ApiKeyAuthenticator } from '../src/auth/api-key-authenticator.js';
import { loadConfig } from '../src/config.js';
import { ClientIpResolver } from '../src/http/client-ip.js';
import { errorMiddleware } from '../src/http/errors.js';
import { requestIdMiddleware } from '../src/http/request-id.js';
import { defineRoute } from '../src/http/route.js';
import { buildRouter } from '../src/http/router.js';
import { ApiKeyStore } from '../src/persistence/api-key.store.js';
import { gatewayMigrations } from '../src/persistence/migrations/index.js';
import { RollingWindowLimiter } from '../src/ratelimit/rolling-window-limiter.js';
import { adminOf, client, type Client } from './support/http.js';
import { startStack, type Stack } from './support/stack.js';

/**
 * The gateway serves no client WRITE route yet (sends, quotes… arrive with the transfer service),
 * so the scope rule is exercised with the real pipeline — router, authenticator, keys issued by
 * the real admin API and stored in Postgres — around WRITE and READ routes declared here.
 */
let stack: Stack;
let admin: ReturnType<typeof adminOf>;
let probe: Client;
let server: Server;
let db: Database;
let redis: Redis;
let limiter: RollingWindowLimiter;

beforeAll(async () => {
  stack = await startStack();
  admin = adminOf(client(stack.gw.url), stack.gw.adminToken);
  const config = loadConfig({ NODE_ENV: 'test' });
  const log = createLogger('scope-test', 'silent');
  db = await Database.open({ url: stack.db.url, schema: 'gateway', migrations: gatewayMigrations, logger: log });
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableOfflineQueue: false, lazyConnect: true });
  limiter = new RollingWindowLimiter(redis, { prefix: `rl:${stack.namespace}:scope`, windowSeconds: 60 });
  const route = (method: 'POST' | 'GET', scope: 'READ' | 'WRITE') =>
    defineRoute({
      method,
      path: '/probe',
      operationId: `probe${method}`,
      summary: 'probe',
      tags: [],
      auth: { kind: 'apiKey', scope },
      responses: { 200: { description: 'ok' } },
      handler: async ({ principal, call }) => ({ status: 200, body: { companyId: principal!.companyId, apiKeyId: call.apiKeyId, actor: call.actor } }),
    });
  const router = buildRouter([route('POST', 'WRITE'), route('GET', 'READ')], {
    authenticator: new ApiKeyAuthenticator(db, new ApiKeyStore(), { pepper: config.apiKeyPepper, prefix: config.apiKeyPrefix, cacheTtlMs: 0 }, log),
    limiter,
    clientIp: new ClientIpResolver([]),
    rateLimits: { perMinute: config.rateLimit.perMinute },
  });
  const app = new Koa();
  app.silent = true;
  app.use(requestIdMiddleware as never);
  app.use(errorMiddleware(log) as never);
  app.use(router.routes() as never);
  server = createServer(app.callback());
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  probe = client(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
});

afterAll(async () => {
  await new Promise<void>((res) => server?.close(() => res()));
  limiter?.close();
  redis?.disconnect();
  await db?.close();
  await stack?.stop();
});

describe('scopes', () => {
  it('a READ key on a WRITE route → 403 INSUFFICIENT_SCOPE with required and granted', async () => {
    const company = await admin.createCompany();
    const read = await admin.issueKey(company.id, 'READ');
    const denied = await probe.post('/probe', { token: read.key, body: {} });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'INSUFFICIENT_SCOPE', required: 'WRITE', granted: 'READ', message: ERRORS.INSUFFICIENT_SCOPE.message });
    expect((await probe.get('/probe', { token: read.key })).status).toBe(200);
  });

  it('a WRITE key passes WRITE and READ routes; the call context names the company and key', async () => {
    const company = await admin.createCompany();
    const write = await admin.issueKey(company.id, 'WRITE');
    for (const r of [await probe.post('/probe', { token: write.key, body: {} }), await probe.get('/probe', { token: write.key })]) {
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ companyId: company.id, apiKeyId: write.id, actor: `apikey:${write.id}` });
    }
  });
});
