import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { AppError } from '@wallet/platform';
import { PAGE_CSP, PAGE_SECURITY_HEADERS } from '../../http/static-answer.js';
import { DOCS_HEADERS, docsRoutes } from './docs.routes.js';
import { explorerLink, renderReference } from './reference-page.js';

/** A small document with what the reference draws: tags, shared parameters and headers, a body, answers, schemas. */
const DOC = {
  openapi: '3.1.0',
  info: { title: 'Prueba API', version: '1.2.3', description: 'Texto **en negrita** y <script>alert(1)</script>.' },
  servers: [{ url: 'http://localhost:8080', description: 'Local' }],
  tags: [{ name: 'Transfers', description: 'Envíos.' }],
  paths: {
    '/transfers/send': {
      post: {
        operationId: 'sendTransfer',
        tags: ['Transfers'],
        summary: 'Send money',
        description: 'Reserva y envía.',
        security: [{ apiKey: [] }],
        parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }, { name: 'dryRun', in: 'query', schema: { type: 'boolean', default: false } }],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/SendRequest' }, example: { amount: 1000 } } } },
        responses: {
          '201': {
            description: 'Creada.',
            headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Transfer' } } },
          },
          '400': {
            description: '`INVALID_REQUEST`: La solicitud no es válida.<br>`OTHER`: Otra.',
            content: {
              'application/json': {
                schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { error: { enum: ['INVALID_REQUEST', 'OTHER'] } } }] },
              },
            },
          },
        },
      },
    },
    '/wallets/{rail}': {
      get: {
        operationId: 'getWallet',
        tags: ['Wallets'],
        summary: 'One wallet',
        security: [],
        parameters: [{ name: 'rail', in: 'path', required: true, schema: { type: 'string', enum: ['BREB', 'ACH'] } }],
        responses: { '200': { description: 'La billetera.' } },
      },
    },
  },
  components: {
    schemas: {
      SendRequest: {
        type: 'object',
        required: ['amount', 'destination'],
        properties: {
          amount: { type: 'integer', minimum: 1, maximum: 9007199254740991, description: 'Centavos.' },
          destination: {
            oneOf: [
              { type: 'object', properties: { brebKey: { type: 'string' } } },
              { type: 'object', properties: { bankAccount: { type: 'string', pattern: '^[0-9]+$' } } },
            ],
          },
        },
      },
      Transfer: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, status: { $ref: '#/components/schemas/Status' } } },
      Status: { type: 'string', enum: ['PENDING', 'COMPLETED'] },
      Error: { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' } } },
    },
    parameters: {
      IdempotencyKey: { name: 'Idempotency-Key', in: 'header', schema: { type: 'string', maxLength: 255 }, description: 'Clave de idempotencia.' },
    },
    headers: { 'X-Request-Id': { description: 'El id de la solicitud.', schema: { type: 'string' } } },
    securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'La clave de API.' } },
  },
};

const ctxWith = (headers: Record<string, string> = {}) => ({ ctx: { get: (h: string) => headers[h] ?? '' } });
const text = (body: unknown) => String(body);

describe('the API reference (/docs)', () => {
  const routes = docsRoutes(() => DOC, [{ href: '/docs/changelog', text: 'Cambios' }]);
  const route = (path: string) => {
    const r = routes.find((x) => x.path === path);
    if (!r) throw new Error(`no route ${path}`);
    return r;
  };
  const get = (path: string, opts: { params?: Record<string, string>; headers?: Record<string, string> } = {}) =>
    route(path).handler({ ...ctxWith(opts.headers), params: opts.params ?? {} } as never);

  it('is public GET routes in the Docs tag: the document, the index, each operation, the schemas, the console, the files', () => {
    expect(routes.map((r) => r.path)).toEqual([
      '/openapi.json',
      '/docs',
      '/docs/operations/{operationId}',
      '/docs/schemas',
      '/docs/explorer',
      '/docs/assets/{file}',
    ]);
    for (const r of routes) expect(r).toMatchObject({ method: 'GET', auth: { kind: 'public' }, tags: ['Docs'] });
  });

  it("sends the dashboard's security headers on every page and file: its CSP (no inline script or style), nosniff, no framing, no referrer", async () => {
    expect(DOCS_HEADERS).toEqual({ 'Content-Security-Policy': PAGE_CSP, ...PAGE_SECURITY_HEADERS });
    const answers = [
      await get('/docs'),
      await get('/docs/operations/{operationId}', { params: { operationId: 'sendTransfer' } }),
      await get('/docs/schemas'),
      await get('/docs/explorer'),
      ...(await Promise.all(
        ['docs.css', 'docs.js', 'explorer.css', 'explorer-init.js', 'swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'].map((file) =>
          get('/docs/assets/{file}', { params: { file } }),
        ),
      )),
    ];
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.headers).toMatchObject({
        'Content-Security-Policy': PAGE_CSP,
        'X-Content-Type-Options': 'nosniff',
        'X-Frame-Options': 'DENY',
        'Referrer-Policy': 'no-referrer',
        ETag: expect.stringMatching(/^"[\w-]{32}"$/),
      });
    }
    expect(answers[0]!.headers).toMatchObject({ 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'public, max-age=300' });
    expect(answers.at(-1)!.headers).toMatchObject({ 'Content-Type': 'image/png', 'Cache-Control': 'public, max-age=86400' });
  });

  it('compresses pages and files with brotli or gzip as accepted, and answers 304 to a current ETag', async () => {
    const plain = await get('/docs');
    const br = await get('/docs', { headers: { 'Accept-Encoding': 'gzip, br' } });
    expect(br.headers).toMatchObject({ 'Content-Encoding': 'br', Vary: 'Accept-Encoding', ETag: plain.headers!.ETag });
    expect(brotliDecompressSync(br.body as Buffer).equals(plain.body as Buffer)).toBe(true);
    const js = await get('/docs/assets/{file}', { params: { file: 'docs.js' }, headers: { 'Accept-Encoding': 'gzip' } });
    expect(js.headers).toMatchObject({ 'Content-Encoding': 'gzip', 'Content-Type': 'text/javascript; charset=utf-8' });
    expect(gunzipSync(js.body as Buffer).toString()).toContain('DOMParser');
    const again = await get('/docs', { headers: { 'If-None-Match': plain.headers!.ETag! } });
    expect(again).toMatchObject({ status: 304, body: null });
    expect(again.headers).toMatchObject({ 'Content-Security-Policy': PAGE_CSP, 'X-Frame-Options': 'DENY' });
  });

  it('the index: lang="es", landmarks, a skip link, each operation as a disclosure that loads its own page, no inline script or style', async () => {
    const html = text((await get('/docs')).body);
    expect(html).toMatch(/^<!doctype html>\n<html lang="es">/);
    expect(html).toContain('<a class="skip" href="#main">');
    expect(html).toMatch(/<header class="top">[\s\S]*<nav aria-label="Documentos">[\s\S]*<nav class="toc" aria-label="Operaciones">[\s\S]*<main id="main">/);
    expect(html).toContain(
      '<details data-src="/docs/operations/sendTransfer"><summary><h3 id="op-sendTransfer-h"><span class="method method-post">POST</span> <code class="path">/transfers/send</code>',
    );
    expect(html).toContain('<a href="/docs/operations/getWallet">'); // without the script, the line links to the page
    expect(html).toContain('<a href="/docs/changelog">Cambios</a>');
    expect(html).toContain('<a href="/docs/explorer">');
    // The document's description is Markdown; raw HTML in it is shown as text, never run.
    expect(html).toContain('Texto <strong>en negrita</strong> y &lt;script&gt;alert(1)&lt;/script&gt;.');
    expect(html).not.toMatch(/<script>|<style|\sstyle="|\son[a-z]+="/);
    expect(html.match(/<script /g)).toEqual(['<script ']);
    expect(html).toContain('<script src="/docs/assets/docs.js" defer></script>');
    // Shared answer headers and the security schemes are described once, here.
    expect(html).toContain('<dt id="header-X-Request-Id">');
    expect(html).toContain('<dt id="auth-apiKey">');
  });

  it("an operation's page: authentication, parameters (shared ones resolved), body with its example, answers, and a link to try it", async () => {
    const html = text((await get('/docs/operations/{operationId}', { params: { operationId: 'sendTransfer' } })).body);
    const body = html.slice(html.indexOf('id="op-body"'));
    expect(body).toContain('Autenticación: <a href="/docs#auth-apiKey">apiKey</a>');
    expect(body).toContain('<a href="/docs/explorer#/Transfers/sendTransfer">Probar');
    expect(body).toMatch(
      /<th scope="row"><code>Idempotency-Key<\/code><\/th><td>cabecera<\/td><td>string<div class="facts">longitud ≤ 255<\/div><\/td><td><p>Clave de idempotencia.<\/p>/,
    );
    expect(body).toContain('por defecto <code>false</code>');
    expect(body).toContain('Esquema <a href="/docs/schemas#schema-SendRequest">SendRequest</a>');
    expect(body).toContain('&quot;amount&quot;: 1000');
    expect(body).toContain('<span class="status status-ok">201</span>');
    expect(body).toContain('Cabeceras comunes: <a href="/docs#header-X-Request-Id"><code>X-Request-Id</code></a>');
    expect(body).toContain('<code>INVALID_REQUEST</code>: La solicitud no es válida.<br>'); // the error list, one per line
    expect(body).toContain('uno de <code>&quot;INVALID_REQUEST&quot;</code>, <code>&quot;OTHER&quot;</code>');
    const wallet = text((await get('/docs/operations/{operationId}', { params: { operationId: 'getWallet' } })).body);
    expect(wallet).toContain('Autenticación: ninguna (ruta pública).');
    expect(wallet).toContain('<td>ruta</td>');
  });

  it('an unknown operation, or a file not on the allow-list, is 404 ROUTE_NOT_FOUND', async () => {
    await expect(get('/docs/operations/{operationId}', { params: { operationId: 'nope' } })).rejects.toEqual(new AppError('ROUTE_NOT_FOUND'));
    expect(route('/docs/operations/{operationId}').params!.safeParse({ operationId: '../etc' }).success).toBe(false);
    expect(route('/docs/assets/{file}').params!.safeParse({ file: 'package.json' }).success).toBe(false);
  });

  it('the schemas page: every schema with its properties, required fields, bounds, alternatives and enums', async () => {
    const html = text((await get('/docs/schemas')).body);
    for (const name of ['SendRequest', 'Transfer', 'Status', 'Error']) expect(html).toContain(`<article class="schema" id="schema-${name}"`);
    expect(html).toMatch(/<code>amount<\/code> <span class="req">requerido<\/span><\/th><td>integer<div class="facts">≥ 1; ≤ 9007199254740991<\/div>/);
    expect(html).toContain('Exactamente una de estas formas');
    expect(html).toContain('patrón <code>^[0-9]+$</code>');
    expect(html).toContain('uno de <code>&quot;PENDING&quot;</code>, <code>&quot;COMPLETED&quot;</code>');
  });

  it("links an operation in the console by Swagger UI's deep links (tag spaces as _)", () => {
    expect(explorerLink('/docs/explorer', 'Collect keys', 'createCollectKey')).toBe('/docs/explorer#/Collect_keys/createCollectKey');
    expect(renderReference(DOC, { explorer: '/x' }).operations.size).toBe(2);
  });
});
