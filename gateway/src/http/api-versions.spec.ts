import { buildOpenApiDocument } from '../openapi/document.js';
import { RATE_CLASSES, type RateClass } from '../ratelimit/rate-classes.js';
import { effectiveApiVersion } from '../api-versions.js';
import { deprecationHeaders } from './api-versions.js';
import { defineRoute } from './route.js';

describe('API versions', () => {
  it('a pinned version applies while supported; a retired one moves to the oldest supported version after it; none → the newest', () => {
    const supported = ['2026-11-29', '2027-06-01', '2028-01-15'];
    expect(effectiveApiVersion('2027-06-01', supported)).toBe('2027-06-01');
    expect(effectiveApiVersion('2027-01-01', supported)).toBe('2027-06-01');
    expect(effectiveApiVersion('2025-01-01', supported)).toBe('2026-11-29');
    expect(effectiveApiVersion('2029-01-01', supported)).toBe('2028-01-15');
    expect(effectiveApiVersion(undefined, supported)).toBe('2028-01-15');
  });

  it('Deprecation is an RFC 9745 date (@ + Unix seconds), Sunset an HTTP-date, and a bad date fails at start', () => {
    expect(deprecationHeaders({ since: '2026-12-01' })).toEqual({ Deprecation: '@1796083200', Link: '</docs>; rel="deprecation"; type="text/html"' });
    expect(deprecationHeaders({ since: '2026-12-01T00:00:00Z', sunset: '2027-06-01' }).Sunset).toBe('Tue, 01 Jun 2027 00:00:00 GMT');
    expect(() => deprecationHeaders({ since: 'pronto' })).toThrow(/not an ISO 8601 date/);
  });

  it('the document marks a deprecated route and declares its headers on every answer', () => {
    const route = (deprecated?: { since: string; sunset?: string }) =>
      defineRoute({
        method: 'GET',
        path: deprecated ? '/old' : '/new',
        operationId: deprecated ? 'old' : 'current',
        summary: 's',
        tags: [],
        auth: { kind: 'apiKey', scope: 'READ' },
        ...(deprecated ? { deprecated } : {}),
        responses: { 200: { description: 'ok' } },
        handler: async () => ({ status: 200, body: {} }),
      });
    const perMinute = Object.fromEntries(Object.keys(RATE_CLASSES).map((c) => [c, 1])) as Record<RateClass, number>;
    const doc = buildOpenApiDocument([route({ since: '2026-12-01', sunset: '2027-06-01' }), route()], { version: 'x', perMinute }) as any;
    const old = doc.paths['/old'].get;
    expect(old.deprecated).toBe(true);
    expect(old.description).toContain('**Deprecated** since 2026-12-01; may stop answering after 2027-06-01');
    for (const status of ['200', '401', '500']) {
      expect(Object.keys(old.responses[status].headers)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link', 'Wallet-Version']));
    }
    const current = doc.paths['/new'].get;
    expect(current.deprecated).toBeUndefined();
    expect(Object.keys(current.responses['200'].headers)).not.toContain('Deprecation');
    expect(doc.components.headers.Deprecation.required).toBe(true);
  });
});
