import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import { Redis } from 'ioredis';
import { Database, ERRORS, createLogger } from '@wallet/platform';
import { LATEST_API_VERSION, SUPPORTED_API_VERSIONS } from '../src/api-versions.js';
import { ApiKeyAuthenticator } from '../src/auth/api-key-authenticator.js';
import { loadConfig } from '../src/config.js';
import { apiVersioning, appliedApiVersion } from '../src/http/api-versions.js';
import { ClientIpResolver } from '../src/http/client-ip.js';
import { errorMiddleware } from '../src/http/errors.js';
import { requestIdMiddleware } from '../src/http/request-id.js';
import { defineRoute } from '../src/http/route.js';
import { buildRouter } from '../src/http/router.js';
import { ApiKeyStore } from '../src/persistence/api-key.store.js';
import { gatewayMigrations } from '../src/persistence/migrations/index.js';
import { RollingWindowLimiter } from '../src/ratelimit/rolling-window-limiter.js';
import { adminOf, client, type Client } from './support/http.js';
import { sql } from './support/sql.js';
import { startStack, type Stack } from './support/stack.js';

/**
 * API versions (docs/api-versioning.md) through the real gateway: keys pinned when issued, the
 * `Wallet-Version` header chosen, echoed and refused. A second app on the same database serves
 * routes declared here, to show what one released version cannot: a key pinned to an older version
 * than the newest, a retired pinned version, and a route being retired (Deprecation, Sunset, Link).
 */
let stack: Stack;
let api: Client;
let admin: ReturnType<typeof adminOf>;
let probe: Client;
let server: Server;
let db: Database;
let redis: Redis;
let limiter: RollingWindowLimiter;

/** Versions of the test-only app: the released one and a later one. */
const PROBE_VERSIONS = ['2026-11-29', '2027-06-01'];
const DEPRECATED_SINCE = '2026-12-01T00:00:00Z';
const SUNSET = '2027-06-01T00:00:00Z';

beforeAll(async () => {
  stack = await startStack({ RATE_LIMIT_READS: '100000' });
  api = client(stack.gw.url);
  admin = adminOf(api, stack.gw.adminToken);
  const config = loadConfig({ NODE_ENV: 'test' });
  const log = createLogger('versions-test', 'silent');
  db = await Database.open({ url: stack.db.url, schema: 'gateway', migrations: gatewayMigrations, logger: log });
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableOfflineQueue: false, lazyConnect: true });
  limiter = new RollingWindowLimiter(redis, { prefix: `rl:${stack.namespace}:versions`, windowSeconds: 60 });
  const router = buildRouter(
    [
      defineRoute({
        method: 'GET',
        path: '/probe',
        operationId: 'probe',
        summary: 'probe',
        tags: [],
        auth: { kind: 'apiKey', scope: 'READ' },
        responses: { 200: { description: 'ok' } },
        handler: async ({ ctx }) => ({ status: 200, body: { applied: appliedApiVersion(ctx) } }),
      }),
      defineRoute({
        method: 'GET',
        path: '/old-probe',
        operationId: 'oldProbe',
        summary: 'a route being retired',
        tags: [],
        auth: { kind: 'apiKey', scope: 'READ' },
        deprecated: { since: DEPRECATED_SINCE, sunset: SUNSET, replacement: 'GET /probe' },
        responses: { 200: { description: 'ok' } },
        handler: async () => ({ status: 200, body: { old: true } }),
      }),
    ],
    {
      authenticator: new ApiKeyAuthenticator(db, new ApiKeyStore(), { pepper: config.apiKeyPepper, prefix: config.apiKeyPrefix, cacheTtlMs: 0 }, log),
      limiter,
      clientIp: new ClientIpResolver([]),
      rateLimits: { perMinute: config.rateLimit.perMinute },
    },
  );
  // As compose.ts layers them: request id → errors → versions → routes.
  const app = new Koa();
  app.silent = true;
  app.use(requestIdMiddleware as never);
  app.use(errorMiddleware(log) as never);
  app.use(apiVersioning(PROBE_VERSIONS) as never);
  app.use(router.routes() as never);
  server = createServer(app.callback());
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  probe = client(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
}, 60_000);

afterAll(async () => {
  await new Promise<void>((res) => server?.close(() => res()));
  limiter?.close();
  redis?.disconnect();
  await db?.close();
  await stack?.stop();
});

const pin = (keyId: string, version: string) => sql(stack.db.url, 'update gateway.api_keys set api_version = $1 where id = $2', [version, keyId]);

describe('the gateway', () => {
  it('pins a new key to the newest version, shows it in the admin answers, and applies it to the key when a request names none', async () => {
    const company = await admin.createCompany();
    const key = await admin.issueKey(company.id, 'READ');
    expect(key.apiVersion).toBe(LATEST_API_VERSION);
    const listed = await api.get(`/admin/companies/${company.id}/api-keys`, { token: stack.gw.adminToken });
    expect(listed.body.items).toEqual([expect.objectContaining({ id: key.id, apiVersion: LATEST_API_VERSION })]);
    const [row] = await sql(stack.db.url, 'select api_version from gateway.api_keys where id = $1', [key.id]);
    expect(row.api_version).toBe(LATEST_API_VERSION);
    // Any answer, errors included, says which version applied.
    const r = await api.get('/wallets/balance', { token: key.key });
    expect(r.headers.get('wallet-version')).toBe(LATEST_API_VERSION);
    expect((await api.get('/wallets/balance')).headers.get('wallet-version')).toBe(LATEST_API_VERSION);
  });

  it('applies the version a request names, and refuses one it does not support (400 UNSUPPORTED_API_VERSION, before routing too)', async () => {
    const named = await api.get('/openapi.json', { headers: { 'wallet-version': '2026-11-29' } });
    expect(named.status).toBe(200);
    expect(named.headers.get('wallet-version')).toBe('2026-11-29');
    for (const [path, version] of [
      ['/openapi.json', '2020-01-01'],
      ['/openapi.json', 'v2'],
      ['/wallets/balance', '2099-12-31'],
      ['/nope', '2020-01-01'],
    ] as const) {
      const r = await api.get(path, { headers: { 'wallet-version': version } });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({
        error: 'UNSUPPORTED_API_VERSION',
        message: ERRORS.UNSUPPORTED_API_VERSION.message,
        details: { requested: version, supported: [...SUPPORTED_API_VERSIONS] },
      });
      expect(r.headers.get('wallet-version')).toBeNull();
      expect(r.headers.get('x-request-id')).toBeTruthy();
    }
  });

  it('documents the header, the refusal and the version list', async () => {
    const doc = (await api.get('/openapi.json')).body;
    expect(doc.info.version).toBe(LATEST_API_VERSION);
    expect(doc.components.parameters.WalletVersion).toMatchObject({ name: 'Wallet-Version', in: 'header', required: false });
    const balance = doc.paths['/wallets/balance'].get;
    expect(balance.parameters).toContainEqual({ $ref: '#/components/parameters/WalletVersion' });
    expect(balance.responses['200'].headers['Wallet-Version']).toEqual({ $ref: '#/components/headers/Wallet-Version' });
    expect(balance.responses['400'].description).toContain('UNSUPPORTED_API_VERSION');
    expect(doc['x-responses-before-routing'].unrouted['400']).toEqual({ $ref: '#/components/responses/UnsupportedApiVersion' });
  });
});

describe('pinning and retiring (test-only app with a later version)', () => {
  it('a key pinned to an older version keeps it until a request names another; a retired pin moves to the oldest supported version after it', async () => {
    const company = await admin.createCompany();
    const key = await admin.issueKey(company.id, 'READ');
    await pin(key.id, '2026-11-29');
    let r = await probe.get('/probe', { token: key.key });
    expect(r.body).toEqual({ applied: '2026-11-29' });
    expect(r.headers.get('wallet-version')).toBe('2026-11-29');
    r = await probe.get('/probe', { token: key.key, headers: { 'wallet-version': '2027-06-01' } });
    expect(r.headers.get('wallet-version')).toBe('2027-06-01');
    // The app's own refusals carry the pinned version too, once the key is known.
    await pin(key.id, '2027-06-01');
    r = await probe.get('/probe', { token: key.key });
    expect(r.headers.get('wallet-version')).toBe('2027-06-01');
    // 2026-01-01 was retired: the key gets the oldest version still supported after it.
    await pin(key.id, '2026-01-01');
    r = await probe.get('/probe', { token: key.key });
    expect(r.headers.get('wallet-version')).toBe('2026-11-29');
    // No key (refused before authentication): the newest.
    expect((await probe.get('/probe')).headers.get('wallet-version')).toBe('2027-06-01');
  });

  it('a route being retired answers with Deprecation (RFC 9745), Sunset (RFC 8594) and a deprecation Link, refusals included', async () => {
    const company = await admin.createCompany();
    const key = await admin.issueKey(company.id, 'READ');
    for (const r of [await probe.get('/old-probe', { token: key.key }), await probe.get('/old-probe')]) {
      expect([200, 401]).toContain(r.status);
      expect(r.headers.get('deprecation')).toBe(`@${Date.parse(DEPRECATED_SINCE) / 1000}`);
      expect(r.headers.get('deprecation')).toBe('@1796083200');
      expect(r.headers.get('sunset')).toBe('Tue, 01 Jun 2027 00:00:00 GMT');
      expect(r.headers.get('link')).toBe('</docs>; rel="deprecation"; type="text/html"');
    }
    const current = await probe.get('/probe', { token: key.key });
    expect(current.headers.get('deprecation')).toBeNull();
    expect(current.headers.get('sunset')).toBeNull();
  });
});
