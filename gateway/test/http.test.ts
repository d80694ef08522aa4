import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { ERRORS, signPayload } from '@wallet/platform';
import { PAGE_CSP } from '../src/http/static-answer.js';
import { startStack, type Stack } from './support/stack.js';
import { adminOf, client, expectNoInternals, type Client } from './support/http.js';
import { sql } from './support/sql.js';

let stack: Stack;
let api: Client;
let admin: ReturnType<typeof adminOf>;
let token: string;

beforeAll(async () => {
  // fatal: the 500 test makes the gateway log the (expected) database error with its stack.
  stack = await startStack({ RATE_LIMIT_READS: '100000', LOG_LEVEL: 'fatal' });
  api = client(stack.gw.url);
  token = stack.gw.adminToken;
  admin = adminOf(api, token);
});
afterAll(() => stack?.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request id', () => {
  it('is generated when absent and echoed when well-formed', async () => {
    const a = await api.get('/nope');
    expect(a.headers.get('x-request-id')).toMatch(UUID);
    const b = await api.get('/nope', { headers: { 'x-request-id': 'abc.DEF_123-xyz' } });
    expect(b.headers.get('x-request-id')).toBe('abc.DEF_123-xyz');
    const ok = await api.get('/openapi.json', { headers: { 'x-request-id': 'req-1' } });
    expect(ok.headers.get('x-request-id')).toBe('req-1');
  });

  it('is replaced when malformed or too long', async () => {
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', '<script>']) {
      const r = await api.get('/nope', { headers: { 'x-request-id': bad } });
      expect(r.headers.get('x-request-id')).toMatch(UUID);
    }
    const max = 'y'.repeat(128);
    expect((await api.get('/nope', { headers: { 'x-request-id': max } })).headers.get('x-request-id')).toBe(max);
  });
});

describe('error answers', () => {
  it('unknown route or method → 404 ROUTE_NOT_FOUND', async () => {
    for (const r of [
      await api.get('/nope'),
      await api.del('/wallets/balance'),
      await api.get('/wallets/balance/extra'),
      await api.post('/auth/nope', { body: {} }),
    ]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'ROUTE_NOT_FOUND', message: ERRORS.ROUTE_NOT_FOUND.message });
      expect(r.headers.get('x-request-id')).toBeTruthy();
    }
  });

  it('malformed JSON → 400 INVALID_REQUEST with details.fields', async () => {
    for (const raw of ['{"name": ', '{name: 1}', 'nul', '\u00ff\u00fe']) {
      const r = await api.post('/admin/companies', { token, raw, headers: { 'content-type': 'application/json' } });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('INVALID_REQUEST');
      expect(r.body.message).toBe(ERRORS.INVALID_REQUEST.message);
      expect(r.body.details.fields).toEqual([{ path: '', message: expect.any(String) }]);
      expectNoInternals(r.text);
    }
    const badUtf8 = await api.post('/admin/companies', { token, raw: Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), headers: { 'content-type': 'application/json' } });
    expect(badUtf8.status).toBe(400);
  });

  it('a non-JSON content type on a body route → 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const body = JSON.stringify({ name: 'X', nit: '900123456', taxRegime: 'COMMON' });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const r = await api.post('/admin/companies', { token, raw: body, headers: { 'content-type': type } });
      expect(r.status).toBe(415);
      expect(r.body).toEqual({ error: 'UNSUPPORTED_MEDIA_TYPE', message: ERRORS.UNSUPPORTED_MEDIA_TYPE.message });
    }
    const gz = await api.post('/admin/companies', { token, raw: body, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    expect(gz.status).toBe(415);
    // application/json with a charset, and +json types, are JSON.
    const ok = await api.post('/admin/companies', { token, raw: body, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(ok.status).toBe(201);
  });

  it('a body over 1 MiB → 413 PAYLOAD_TOO_LARGE (declared or streamed)', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), nit: '900123456', taxRegime: 'COMMON' });
    const r = await api.post('/admin/companies', { token, raw: big, headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ error: 'PAYLOAD_TOO_LARGE', message: ERRORS.PAYLOAD_TOO_LARGE.message });
    // Chunked (no Content-Length): detected while streaming.
    const port = new URL(stack.gw.url).port;
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/admin/companies',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 20; i++) req.write('x'.repeat(64 * 1024));
      req.end();
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).error).toBe('PAYLOAD_TOO_LARGE');
    // Just under the limit is read (and then validated).
    const under = JSON.stringify({ name: 'x'.repeat(1024 * 1024 - 200), nit: '900123456', taxRegime: 'COMMON' });
    const u = await api.post('/admin/companies', { token, raw: under, headers: { 'content-type': 'application/json' } });
    expect(u.status).toBe(400);
    expect(u.body.details.fields.map((f: any) => f.path)).toEqual(['name']);
  });

  it('an unexpected failure → 500 INTERNAL_ERROR with no stack, SQL or host names', async () => {
    const c = await admin.createCompany();
    await sql(stack.db.url, 'alter table gateway.api_keys rename to api_keys_moved');
    try {
      const r = await api.get(`/admin/companies/${c.id}/api-keys`, { token });
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ error: 'INTERNAL_ERROR', message: ERRORS.INTERNAL_ERROR.message });
      expectNoInternals(r.text);
      expect(r.text).not.toContain('api_keys');
    } finally {
      await sql(stack.db.url, 'alter table gateway.api_keys_moved rename to api_keys');
    }
    expect((await api.get(`/admin/companies/${c.id}/api-keys`, { token })).status).toBe(200);
  });

  it('every error body is { error, message, details? } and JSON', async () => {
    const replies = [
      await api.get('/wallets/balance'),
      await api.get('/wallets/balance', { token: 'bad' }),
      await api.post('/admin/companies', { token, body: {} }),
      await api.get('/nope'),
    ];
    for (const r of replies) {
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Object.keys(r.body).every((k) => ['error', 'message', 'details'].includes(k))).toBe(true);
      expect(r.body.error).toMatch(/^[A-Z_]+$/);
      expectNoInternals(r.text);
    }
  });
});

describe('OpenAPI and the reference page', () => {
  it('serves the document with every route', async () => {
    const r = await api.get('/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    expect(Object.keys(r.body.paths)).toEqual(
      expect.arrayContaining([
        '/wallets/balance',
        '/dictionaries/banks/ach',
        '/admin/companies',
        '/admin/companies/{id}',
        '/admin/companies/{id}/api-keys',
        '/admin/companies/{id}/api-keys/{keyId}',
        '/admin/companies/{id}/wallets/{rail}/credit',
        '/admin/fees/{operation}',
      ]),
    );
  });

  it('renders /docs on the server (no external URL), and the Swagger UI console at /docs/explorer, both from local files', async () => {
    const page = await api.get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('<code class="path">/transfers/send</code>');
    expect(page.text).not.toMatch(/(?:src|href)="https?:\/\//);
    const explorer = await api.get('/docs/explorer');
    expect(explorer.status).toBe(200);
    expect(explorer.text).toContain('swagger-ui-bundle.js');
    expect(explorer.text).not.toMatch(/https?:\/\//);
    for (const asset of ['docs.css', 'docs.js', 'swagger-ui.css', 'swagger-ui-bundle.js', 'explorer-init.js']) {
      const a = await api.get(`/docs/assets/${asset}`);
      expect(a.status).toBe(200);
      expect(a.text.length).toBeGreaterThan(100);
    }
    expect((await api.get('/docs/assets/..%2Fpackage.json')).status).toBe(404);
    expect((await api.get('/docs/assets/index.html')).status).toBe(404);
  });

  it('serves the documents, the page and its assets compressed once and revalidated by ETag; the page with the security headers of every page of ours', async () => {
    // node:http, not fetch: fetch would ask for and undo the compression by itself.
    const raw = (path: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
        const req = httpRequest(new URL(path, stack.gw.url), { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        });
        req.on('error', reject);
        req.end();
      });
    for (const path of ['/openapi.json', '/asyncapi.json', '/docs', '/docs/schemas', '/docs/assets/swagger-ui-bundle.js']) {
      const plain = await raw(path);
      expect(plain.status).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      const etag = String(plain.headers.etag);
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
      expect(plain.headers.vary).toMatch(/Accept-Encoding/);
      const br = await raw(path, { 'accept-encoding': 'gzip, deflate, br' });
      expect(br.headers['content-encoding']).toBe('br');
      expect(br.headers.etag).toBe(etag);
      expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
      expect(br.body.length).toBeLessThan(plain.body.length / 3);
      const gz = await raw(path, { 'accept-encoding': 'br;q=0, gzip' });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
      const current = await raw(path, { 'if-none-match': etag, 'accept-encoding': 'br' });
      expect(current.status).toBe(304);
      expect(current.body.length).toBe(0);
      expect((await raw(path, { 'if-none-match': '"another"' })).status).toBe(200);
    }
    for (const path of ['/docs', '/docs/operations/sendTransfer', '/docs/explorer', '/docs/assets/docs.css']) {
      const page = await raw(path);
      expect(page.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' });
      expect(page.headers['content-security-policy']).toBe(PAGE_CSP);
    }
    // The served document is the one the routes build (the ETag names these bytes).
    expect(JSON.parse((await raw('/openapi.json')).body.toString('utf8')).openapi).toBe('3.1.0');
  });
});

describe('inbound Bre-B notifications (POST /webhooks/breb/incoming)', () => {
  it('a signed payment to a key value with no key here → 503 SERVICE_UNAVAILABLE (the network retries), never 200 with nothing booked', async () => {
    const now = new Date().toISOString();
    const providerTransferId = `brb_in_gw_${Date.now()}`;
    const raw = JSON.stringify({
      eventId: `evt-${providerTransferId}`,
      providerTransferId,
      keyValue: '@nadieaqui123',
      amountCents: 10_000,
      payerName: 'Ana',
      payerDocument: 'CC 1',
      payerBank: 'Nequi',
      receivedAt: now,
      occurredAt: now,
    });
    const send = () =>
      fetch(`${stack.gw.url}/webhooks/breb/incoming`, {
        method: 'POST',
        body: raw,
        headers: { 'content-type': 'application/json', 'x-provider-signature': signPayload('dev-rail-callback-secret', raw, Math.floor(Date.now() / 1000)) },
      });
    for (let i = 0; i < 2; i++) {
      // the network's retry gets the same answer while nothing can book it
      const r = await send();
      expect(r.status).toBe(503);
      const body = (await r.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ error: 'SERVICE_UNAVAILABLE' });
      expect(body).not.toHaveProperty('received');
      expect(JSON.stringify(body)).not.toContain('@nadieaqui123');
    }
    expect(await sql(stack.db.url, `select 1 from collect_key.payments where provider_transfer_id = $1`, [providerTransferId])).toHaveLength(0);
  });
});
