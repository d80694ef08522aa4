import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AppError } from '@wallet/platform';
import { toJsonText } from '../../http/json-text.js';
import { defineRoute, mediaTypes, type AnyRoute } from '../../http/route.js';
import { NOT_MODIFIED, PAGE_SECURITY_HEADERS, STATIC_HEADERS, staticAnswer } from '../../http/static-answer.js';

const here = dirname(fileURLToPath(import.meta.url));
/** src/openapi/assets (tests) or dist/openapi/assets (build): both sit two levels above http/routes. */
const ownAssets = join(here, '..', '..', 'openapi', 'assets');
const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only files served under /docs/assets: an allow-list, so no path ever reaches the file system. */
const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: join(swaggerDir, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: join(swaggerDir, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: join(swaggerDir, 'favicon-32x32.png'), type: 'image/png' },
  'docs-init.js': { file: join(ownAssets, 'docs-init.js'), type: 'text/javascript; charset=utf-8' },
};

const loaded = new Map<string, Buffer>();
function asset(name: string): { body: Buffer; type: string } {
  const a = ASSETS[name];
  if (!a) throw new AppError('ROUTE_NOT_FOUND');
  let body = loaded.get(name);
  if (!body) {
    body = readFileSync(a.file);
    loaded.set(name, body);
  }
  return { body, type: a.type };
}

const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export function docsRoutes(getDocument: () => unknown): AnyRoute[] {
  let page: Buffer | undefined;
  let documentText: Buffer | undefined;
  return [
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      tags: ['Docs'],
      summary: 'This OpenAPI 3.1 document',
      auth: { kind: 'public' },
      responses: {
        200: { description: 'The document (brotli or gzip when accepted; an ETag to revalidate).', contentType: 'application/json', headers: STATIC_HEADERS },
        304: NOT_MODIFIED,
      },
      handler: async ({ ctx }) => {
        documentText ??= Buffer.from(toJsonText(getDocument()));
        return staticAnswer(ctx, documentText, 'application/json; charset=utf-8', { 'Cache-Control': 'public, max-age=300' });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/docs',
      operationId: 'getApiReferencePage',
      tags: ['Docs'],
      summary: 'Rendered API reference (Swagger UI, served locally)',
      auth: { kind: 'public' },
      responses: {
        200: { description: 'HTML page (strict Content-Security-Policy, no framing).', contentType: 'text/html', headers: STATIC_HEADERS },
        304: NOT_MODIFIED,
      },
      handler: async ({ ctx }) => {
        page ??= readFileSync(join(ownAssets, 'docs.html'));
        return staticAnswer(ctx, page, 'text/html; charset=utf-8', {
          'Content-Security-Policy': DOCS_CSP,
          'Cache-Control': 'public, max-age=300',
          ...PAGE_SECURITY_HEADERS,
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/docs/assets/{file}',
      operationId: 'getApiReferenceAsset',
      tags: ['Docs'],
      summary: 'Static files of the reference page',
      auth: { kind: 'public' },
      params: z.object({ file: z.enum(Object.keys(ASSETS) as [string, ...string[]]) }),
      paramErrors: { file: 'ROUTE_NOT_FOUND' },
      responses: {
        200: {
          description: 'The file (brotli or gzip when accepted; an ETag to revalidate).',
          contentType: mediaTypes(Object.values(ASSETS).map((a) => a.type)),
          headers: STATIC_HEADERS,
        },
        304: NOT_MODIFIED,
      },
      errors: ['ROUTE_NOT_FOUND'],
      handler: async ({ params, ctx }) => {
        const a = asset(params.file);
        return staticAnswer(ctx, a.body, a.type, { 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' });
      },
    }),
  ];
}
