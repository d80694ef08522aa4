import { OpenApiResponses, UndocumentedResponseError, requestLineOf, type Exchange } from './openapi-check.js';

/** A small document in the gateway's style: component schemas, shared headers, before-routing answers. */
const doc = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {
    '/things/{id}': {
      get: {
        operationId: 'getThing',
        responses: {
          '200': {
            description: 'ok',
            headers: {
              'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
              'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
            },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
          '400': {
            description: 'bad id',
            content: {
              'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { error: { const: 'BAD_THING_ID' } } }] } },
            },
          },
          '404': { $ref: '#/components/responses/Error' },
        },
      },
      delete: {
        operationId: 'deleteThing',
        responses: { '204': { description: 'gone', headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } } } },
      },
    },
    '/things/special': {
      get: {
        operationId: 'getSpecialThing',
        responses: {
          '200': {
            description: 'ok',
            content: {
              'application/json': { schema: { type: 'object', properties: { special: { const: true } }, required: ['special'], additionalProperties: false } },
            },
          },
        },
      },
    },
    '/things/{id}/receipt.pdf': {
      get: {
        operationId: 'getReceipt',
        responses: {
          '200': { description: 'pdf', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } },
          default: { $ref: '#/components/responses/Error' },
        },
      },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          amountCents: { type: 'string', pattern: '^-?\\d+$' },
          createdAt: { type: 'string', format: 'date-time' },
          owner: { $ref: '#/components/schemas/Owner' },
        },
        required: ['id', 'amountCents', 'createdAt', 'owner'],
        additionalProperties: false,
      },
      Owner: { type: 'object', properties: { name: { type: 'string', example: 'Ana' } }, required: ['name'], additionalProperties: false },
      Error: {
        type: 'object',
        properties: { error: { type: 'string' }, message: { type: 'string' } },
        required: ['error', 'message'],
        additionalProperties: false,
      },
    },
    headers: {
      'X-Request-Id': { required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' } },
      'RateLimit-Remaining': { schema: { type: 'integer', minimum: 0 } },
    },
    responses: {
      Error: {
        description: 'error',
        headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
      RouteNotFound: {
        description: 'no route',
        content: {
          'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { error: { const: 'ROUTE_NOT_FOUND' } } }] } },
        },
      },
      MalformedRequest: {
        description: 'malformed',
        content: {
          'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { error: { const: 'INVALID_REQUEST' } } }] } },
        },
      },
      HeadersTooLarge: {
        description: 'too large',
        content: {
          'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { error: { const: 'HEADERS_TOO_LARGE' } } }] } },
        },
      },
    },
  },
  'x-responses-before-routing': {
    unrouted: { '404': { $ref: '#/components/responses/RouteNotFound' } },
    protocol: { '400': { $ref: '#/components/responses/MalformedRequest' }, '431': { $ref: '#/components/responses/HeadersTooLarge' } },
  },
};

const thing = { id: 't1', amountCents: '1500', createdAt: '2026-11-24T10:00:00.000Z', owner: { name: 'Ana' } };
const json = (status: number, body: unknown, headers: Record<string, string> = {}, method = 'GET', path = '/things/t1'): Exchange => ({
  method,
  path,
  status,
  headers: new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-1', ...headers }),
  text: JSON.stringify(body),
});

describe('OpenApiResponses (the check every e2e answer goes through)', () => {
  const responses = new OpenApiResponses(doc);

  it('accepts a documented answer, following $refs into components (nested ones too)', () => {
    expect(responses.problems(json(200, thing))).toEqual([]);
    expect(responses.problems(json(200, thing, { 'ratelimit-remaining': '7' }))).toEqual([]);
    expect(responses.problems(json(404, { error: 'THING_NOT_FOUND', message: 'No existe.' }))).toEqual([]);
    expect(() => responses.check(json(200, thing))).not.toThrow();
  });

  it('fails on a renamed field, a missing field, a wrong type and a bad format, naming each', () => {
    const renamed = responses.problems(json(200, { ...thing, amountCents: undefined, amount_cents: '1500' }));
    expect(renamed.join('\n')).toMatch(/must have required property 'amountCents'/);
    expect(renamed.join('\n')).toMatch(/must NOT have additional properties \(amount_cents\)/);
    expect(responses.problems(json(200, { ...thing, owner: { fullName: 'Ana' } })).join('\n')).toMatch(/\/owner must have required property 'name'/);
    expect(responses.problems(json(200, { ...thing, amountCents: 1500 })).join('\n')).toMatch(/\/amountCents must be string/);
    expect(responses.problems(json(200, { ...thing, createdAt: 'ayer' })).join('\n')).toMatch(/\/createdAt must match format "date-time"/);
  });

  it('fails on an undeclared status, with the statuses that are declared', () => {
    expect(responses.problems(json(409, { error: 'CONFLICT', message: 'x' }))).toEqual([
      'status 409 is not declared for getThing (GET /things/{id}); declared: 200, 400, 404',
    ]);
    // `default` covers every status of an operation that declares it.
    expect(responses.problems(json(409, { error: 'CONFLICT', message: 'x' }, {}, 'GET', '/things/t1/receipt.pdf'))).toEqual([]);
  });

  it('fails on an undeclared content type, and on a JSON content type whose body is not JSON', () => {
    expect(responses.problems({ ...json(200, thing), headers: new Headers({ 'content-type': 'text/html', 'x-request-id': 'r' }) })).toEqual([
      'content type text/html is not declared for 200; declared: application/json',
    ]);
    expect(responses.problems({ ...json(200, thing), text: '<html>' })).toEqual(['the body is not JSON although the content type is application/json']);
    const pdf = (type: string): Exchange => ({ method: 'GET', path: '/things/t1/receipt.pdf', status: 200, headers: new Headers({ 'content-type': type }) });
    expect(responses.problems(pdf('application/pdf'))).toEqual([]);
    expect(responses.problems(pdf('application/json'))).toEqual(['content type application/json is not declared for 200; declared: application/pdf']);
  });

  it('checks required headers and the schema of any declared header present', () => {
    expect(responses.problems({ ...json(200, thing), headers: new Headers({ 'content-type': 'application/json' }) })).toEqual([
      'header X-Request-Id is required and missing',
    ]);
    expect(responses.problems(json(200, thing, { 'ratelimit-remaining': '-1' })).join('\n')).toMatch(/header RateLimit-Remaining: "-1" \(root\) must be >= 0/);
    expect(responses.problems(json(200, thing, { 'x-request-id': 'a b' })).join('\n')).toMatch(/header X-Request-Id: "a b" \(root\) must match pattern/);
  });

  it('an answer without a declared body must have none', () => {
    const del = (text: string): Exchange => ({ method: 'DELETE', path: '/things/t1', status: 204, headers: new Headers({ 'x-request-id': 'r' }), text });
    expect(responses.problems(del(''))).toEqual([]);
    expect(responses.problems({ ...del('{"id":"t1"}'), status: 204 })).toEqual([]); // a 204 carries no body whatever the server wrote
    expect(responses.problems({ method: 'GET', path: '/things/special', status: 200, headers: new Headers(), text: '' })).toEqual([
      'no Content-Type; declared: application/json',
    ]);
  });

  it('matches concrete paths to templates, the most specific first; HEAD is served by GET', () => {
    expect(responses.match('GET', '/things/special?x=1')?.operationId).toBe('getSpecialThing');
    expect(responses.match('GET', '/things/other')?.operationId).toBe('getThing');
    expect(responses.match('HEAD', '/things/other')?.operationId).toBe('getThing');
    expect(responses.match('GET', '/things/a/receipt.pdf')?.operationId).toBe('getReceipt');
    expect(responses.match('GET', '/things/a/b')).toBeUndefined();
    expect(responses.match('POST', '/things/a')).toBeUndefined();
  });

  it('an unserved method or path: only the before-routing answers the document declares', () => {
    expect(responses.problems(json(404, { error: 'ROUTE_NOT_FOUND', message: 'No existe.' }, {}, 'POST', '/things/t1'))).toEqual([]);
    expect(responses.problems(json(404, { error: 'THING_NOT_FOUND', message: 'No existe.' }, {}, 'GET', '/nowhere')).join('\n')).toMatch(
      /\/error must be equal to constant \("ROUTE_NOT_FOUND"\)/,
    );
    expect(responses.problems(json(200, thing, {}, 'GET', '/nowhere'))).toEqual([
      'no operation serves GET /nowhere, and 200 is not an answer the document declares before routing (x-responses-before-routing: 404)',
    ]);
  });

  it("the HTTP server's own refusals are accepted only for deliberately malformed requests", () => {
    const refused = json(431, { error: 'HEADERS_TOO_LARGE', message: 'Demasiado grandes.' });
    expect(responses.problems(refused)).toEqual(['status 431 is not declared for getThing (GET /things/{id}); declared: 200, 400, 404']);
    expect(responses.problems(refused, { malformedHttp: true })).toEqual([]);
    // A status the operation declares with other codes: the server's refusal is accepted for malformed HTTP only.
    const malformed = json(400, { error: 'INVALID_REQUEST', message: 'No válida.' });
    expect(responses.problems(malformed).join('\n')).toMatch(/\/error must be equal to constant \("BAD_THING_ID"\)/);
    expect(responses.problems(malformed, { malformedHttp: true })).toEqual([]);
    expect(responses.problems(json(431, { error: 'OTHER', message: 'x' }), { malformedHttp: true }).join('\n')).toMatch(/must be equal to constant/);
  });

  it('throws one error naming the method, path, status, the differences and an excerpt of the body', () => {
    let err: unknown;
    try {
      responses.check(json(200, { ...thing, amount: '1500', amountCents: undefined }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UndocumentedResponseError);
    const message = (err as Error).message;
    expect(message).toMatch(/^GET \/things\/t1 → 200 application\/json; charset=utf-8: not what GET \/openapi.json declares/);
    expect(message).toContain("must have required property 'amountCents'");
    expect(message).toContain('must NOT have additional properties (amount)');
    expect(message).toContain('body: "{\\"id\\":\\"t1\\"');
  });

  it('refuses a document that is not OpenAPI 3.1, and reads request lines of raw requests', () => {
    expect(() => new OpenApiResponses({ swagger: '2.0' })).toThrow(/not an OpenAPI 3.1 document/);
    expect(requestLineOf('GET /wallets/balance?x=1 HTTP/1.1\r\nHost: x\r\n\r\n')).toEqual({ method: 'GET', path: '/wallets/balance?x=1' });
  });
});
