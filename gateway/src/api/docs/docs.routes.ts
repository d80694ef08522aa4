import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AppError } from '@wallet/platform';
import { toJsonText } from '../../http/json-text.js';
import { defineRoute, mediaTypes, type AnyRoute } from '../../http/route.js';
import { NOT_MODIFIED, PAGE_CSP, PAGE_SECURITY_HEADERS, STATIC_HEADERS, staticAnswer } from '../../http/static-answer.js';
import { OPERATIONS_PATH, REFERENCE_PATH, renderReference, SCHEMAS_PATH, type ReferenceLinks, type ReferencePages } from './reference-page.js';

const here = dirname(fileURLToPath(import.meta.url));
/** src/openapi/assets (tests) or dist/openapi/assets (build): both sit two levels above http/routes. */
const ownAssets = join(here, '..', '..', 'openapi', 'assets');
const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only files served under /docs/assets: an allow-list, so no path ever reaches the file system. */
const ASSETS: Record<string, { file: string; type: string }> = {
  'docs.css': { file: join(ownAssets, 'docs.css'), type: 'text/css; charset=utf-8' },
  'docs.js': { file: join(ownAssets, 'docs.js'), type: 'text/javascript; charset=utf-8' },
  'explorer.css': { file: join(ownAssets, 'explorer.css'), type: 'text/css; charset=utf-8' },
  'explorer-init.js': { file: join(ownAssets, 'explorer-init.js'), type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { file: join(swaggerDir, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: join(swaggerDir, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: join(swaggerDir, 'favicon-32x32.png'), type: 'image/png' },
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

/**
 * Every answer under /docs carries the dashboard's security headers: its Content-Security-Policy (scripts and
 * styles from this origin only, no inline ones, no framing) and no sniffing, no framing, no referrer.
 */
export const DOCS_HEADERS = { 'Content-Security-Policy': PAGE_CSP, ...PAGE_SECURITY_HEADERS } as const;
const PAGE_CACHE = { 'Cache-Control': 'public, max-age=300' };
const ASSET_CACHE = { 'Cache-Control': 'public, max-age=86400' };

/** Where the interactive console is: the reference links each operation there. */
export const EXPLORER_PATH = '/docs/explorer';

/**
 * GET /openapi.json, the reference (/docs, /docs/operations/*, /docs/schemas), the interactive console
 * (/docs/explorer) and their files.
 * `links.extra` adds links to the reference's header (e.g. a changelog page).
 */
export function docsRoutes(getDocument: () => unknown, extraLinks: ReferenceLinks['extra'] = []): AnyRoute[] {
  const links: ReferenceLinks = { explorer: EXPLORER_PATH, extra: [{ href: '/asyncapi.json', text: 'Eventos (AsyncAPI)' }, ...extraLinks] };
  let explorer: Buffer | undefined;
  let pages: { index: Buffer; schemas: Buffer; operations: Map<string, Buffer> } | undefined;
  /** Rendered once, on the first request for any of them (the document does not change while the process runs). */
  const reference = () => {
    if (!pages) {
      const r: ReferencePages = renderReference(getDocument(), links);
      pages = {
        index: Buffer.from(r.index),
        schemas: Buffer.from(r.schemas),
        operations: new Map([...r.operations].map(([id, html]) => [id, Buffer.from(html)])),
      };
    }
    return pages;
  };
  const html = (ctx: Parameters<typeof staticAnswer>[0], body: Buffer) =>
    staticAnswer(ctx, body, 'text/html; charset=utf-8', { ...PAGE_CACHE, ...DOCS_HEADERS });
  const PAGE_RESPONSES = {
    200: { description: 'HTML page (strict Content-Security-Policy, no framing).', contentType: 'text/html', headers: STATIC_HEADERS },
    304: NOT_MODIFIED,
  };
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
      path: REFERENCE_PATH,
      operationId: 'getApiReferencePage',
      tags: ['Docs'],
      summary: 'The API reference (web page): every operation of this document, rendered on the server',
      description:
        'Plain HTML built from GET /openapi.json once per process: it paints as it arrives, with no script to run first. ' +
        "Each operation's details are its own page (GET /docs/operations/{operationId}), loaded into the index when a reader opens the operation; " +
        'every schema is on GET /docs/schemas; GET /docs/explorer sends requests ("Try it out").',
      auth: { kind: 'public' },
      responses: PAGE_RESPONSES,
      handler: async ({ ctx }) => html(ctx, reference().index),
    }),
    defineRoute({
      method: 'GET',
      path: `${OPERATIONS_PATH}/{operationId}`,
      operationId: 'getApiReferenceOperationPage',
      tags: ['Docs'],
      summary: "One operation's reference (web page): description, authentication, parameters, body, answers",
      auth: { kind: 'public' },
      params: z.object({ operationId: z.string().regex(/^[A-Za-z0-9_-]{1,200}$/) }),
      paramErrors: { operationId: 'ROUTE_NOT_FOUND' },
      responses: PAGE_RESPONSES,
      errors: ['ROUTE_NOT_FOUND'],
      handler: async ({ params, ctx }) => {
        const body = reference().operations.get(params.operationId);
        if (!body) throw new AppError('ROUTE_NOT_FOUND');
        return html(ctx, body);
      },
    }),
    defineRoute({
      method: 'GET',
      path: SCHEMAS_PATH,
      operationId: 'getApiReferenceSchemasPage',
      tags: ['Docs'],
      summary: 'Every schema of this document (web page)',
      auth: { kind: 'public' },
      responses: PAGE_RESPONSES,
      handler: async ({ ctx }) => html(ctx, reference().schemas),
    }),
    defineRoute({
      method: 'GET',
      path: EXPLORER_PATH,
      operationId: 'getApiExplorerPage',
      tags: ['Docs'],
      summary: 'The interactive console (web page): Swagger UI, served locally, to send requests from the browser ("Try it out")',
      auth: { kind: 'public' },
      responses: PAGE_RESPONSES,
      handler: async ({ ctx }) => {
        explorer ??= readFileSync(join(ownAssets, 'explorer.html'));
        return html(ctx, explorer);
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
        return staticAnswer(ctx, a.body, a.type, { ...ASSET_CACHE, ...DOCS_HEADERS });
      },
    }),
  ];
}
