import { readFileSync } from 'node:fs';
import { asyncApiRoutes, ASYNCAPI_FILE } from './asyncapi.routes.js';

describe('GET /asyncapi.json', () => {
  const [route] = asyncApiRoutes();

  it('is one public GET route in the Docs tag', () => {
    expect(route).toMatchObject({ method: 'GET', path: '/asyncapi.json', auth: { kind: 'public' }, tags: ['Docs'] });
  });

  it('answers the committed AsyncAPI 3 document as JSON, cacheable', async () => {
    const res = await route!.handler({ ctx: { get: () => '' } } as never);
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'public, max-age=300', ETag: expect.any(String) });
    const doc = JSON.parse(String(res.body));
    expect(doc.asyncapi).toBe('3.0.0');
    expect(Object.keys(doc.channels)).toEqual(
      expect.arrayContaining(['ledger.credited', 'transfer.created', 'transfer.awaiting_approval', 'deposit.paid', 'collectkey.created']),
    );
    expect(String(res.body)).toBe(readFileSync(ASYNCAPI_FILE, 'utf8'));
  });
});
