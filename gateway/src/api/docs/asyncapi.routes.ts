import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { NOT_MODIFIED, STATIC_HEADERS, staticAnswer } from '../../http/static-answer.js';

const here = dirname(fileURLToPath(import.meta.url));
/**
 * The event catalogue (AsyncAPI 3), generated from the proto event messages by
 * gateway/scripts/asyncapi.mjs into src/openapi/assets (copied to dist/openapi/assets at build).
 */
export const ASYNCAPI_FILE = join(here, '..', '..', 'openapi', 'assets', 'asyncapi.json');

/** GET /asyncapi.json: every NATS subject, stream, payload and header (docs/asyncapi.md is the same, rendered). */
export function asyncApiRoutes(file = ASYNCAPI_FILE): AnyRoute[] {
  let body: Buffer | undefined;
  return [
    defineRoute({
      method: 'GET',
      path: '/asyncapi.json',
      operationId: 'getAsyncApiDocument',
      tags: ['Docs'],
      summary: 'The event catalogue: an AsyncAPI 3 document of every NATS subject, stream, payload and header',
      auth: { kind: 'public' },
      responses: {
        200: {
          description: 'The AsyncAPI 3.0 document (brotli or gzip when accepted; an ETag to revalidate).',
          contentType: 'application/json',
          headers: STATIC_HEADERS,
        },
        304: NOT_MODIFIED,
      },
      handler: async ({ ctx }) => {
        body ??= readFileSync(file);
        return staticAnswer(ctx, body, 'application/json; charset=utf-8', { 'Cache-Control': 'public, max-age=300' });
      },
    }),
  ];
}
