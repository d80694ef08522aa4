import fc from 'fast-check';
import { operationsOf, RequestFactory } from './requests.js';

/**
 * The converter alone (no stack): on a small document using every keyword the served one uses,
 * each drawn request is one the document allows (checked by Ajv), and the keywords really shape
 * what is drawn. The e2e contract fuzz test then drives the served document itself.
 */
const doc = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {
    '/things/{id}': {
      post: {
        operationId: 'postThing',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^thg_[a-z0-9]{6,12}$' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          { name: 'at', in: 'query', schema: { type: 'string', format: 'date-time' } },
          { name: 'day', in: 'query', schema: { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } },
          { name: 'cursor', in: 'query', schema: { type: 'string' } },
          { $ref: '#/components/parameters/Key' },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
        responses: { '200': { description: 'ok' } },
      },
    },
  },
  components: {
    parameters: { Key: { name: 'Idempotency-Key', in: 'header', schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]{1,255}$' } } },
    schemas: {
      Money: { type: 'integer', minimum: 100, maximum: 200_000_000_000 },
      Destination: {
        oneOf: [
          {
            type: 'object',
            properties: {
              brebKey: {
                type: 'object',
                properties: { value: { type: 'string', minLength: 3, maxLength: 40 } },
                required: ['value'],
                additionalProperties: false,
              },
            },
            required: ['brebKey'],
            additionalProperties: false,
          },
          {
            type: 'object',
            properties: {
              bankAccount: { type: 'object', properties: { accountNumber: { type: 'string', pattern: '^\\d{5,20}$' } }, required: ['accountNumber'] },
            },
            required: ['bankAccount'],
            additionalProperties: false,
          },
        ],
      },
      Target: {
        type: 'object',
        properties: { destination: { type: 'string', minLength: 1 }, handle: { type: 'string', minLength: 1 }, note: { type: 'string' } },
        additionalProperties: false,
        oneOf: [{ required: ['destination'] }, { required: ['handle'] }],
      },
      Thing: {
        allOf: [
          {
            type: 'object',
            properties: {
              amount: { $ref: '#/components/schemas/Money' },
              destination: { $ref: '#/components/schemas/Destination' },
              kind: { type: 'string', enum: ['A', 'B'] },
              version: { const: 2 },
              email: { type: 'string', format: 'email' },
              uuid: { type: 'string', format: 'uuid' },
              note: { type: ['string', 'null'], maxLength: 20 },
              tags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 5 }, maxItems: 3, uniqueItems: true },
              callbackUrl: { type: 'string', format: 'uri' },
              rate: { type: 'number', minimum: 0, exclusiveMaximum: 1 },
              target: { $ref: '#/components/schemas/Target' },
            },
            required: ['amount', 'destination'],
            additionalProperties: false,
          },
          { required: ['kind'] },
        ],
      },
    },
  },
};

describe('requests drawn from an OpenAPI document', () => {
  const factory = new RequestFactory(doc, 'http://127.0.0.1:9/hook');
  const [op] = operationsOf(doc);

  it('finds the operation with its parameters, body and reference parameters resolved', () => {
    expect(op).toMatchObject({ operationId: 'postThing', method: 'POST', template: '/things/{id}', bodyRequired: true });
    expect(op!.parameters.map((p) => `${p.in}:${p.name}`)).toEqual([
      'path:id',
      'query:limit',
      'query:at',
      'query:day',
      'query:cursor',
      'header:Idempotency-Key',
    ]);
  });

  it('draws only requests the document allows', () => {
    fc.assert(
      fc.property(factory.arbitrary(op!), (r) => {
        expect(factory.invalid(op!, r)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('follows the keywords: required, enum, const, oneOf, closed objects, loopback URLs, no invented cursor', () => {
    for (const r of fc.sample(factory.arbitrary(op!), { numRuns: 200, seed: 7 })) {
      const body = r.body as Record<string, any>;
      expect(r.path).toMatch(/^\/things\/thg_[a-z0-9]{6,12}(\?|$)/);
      expect(['A', 'B']).toContain(body.kind);
      expect(Object.keys(body.destination)).toHaveLength(1);
      if ('version' in body) expect(body.version).toBe(2);
      if ('callbackUrl' in body) expect(body.callbackUrl).toMatch(/^http:\/\/127\.0\.0\.1:9\/hook/);
      expect(r.query.cursor).toBeUndefined();
      if ('target' in body) expect(('destination' in body.target ? 1 : 0) + ('handle' in body.target ? 1 : 0)).toBe(1);
    }
  });

  it('offers seeded ids and cursors beside drawn values', () => {
    const seeds = (name: string) => (name === 'id' ? ['thg_seeded1'] : name === 'cursor /things/{id}' ? ['c1'] : undefined);
    const drawn = fc.sample(factory.arbitrary(op!, seeds), { numRuns: 200, seed: 3 });
    expect(drawn.some((r) => r.path.startsWith('/things/thg_seeded1'))).toBe(true);
    expect(drawn.some((r) => !r.path.startsWith('/things/thg_seeded1'))).toBe(true);
    expect(drawn.some((r) => r.query.cursor === 'c1')).toBe(true);
  });

  it('tells what a request breaks', () => {
    const [good] = fc.sample(factory.arbitrary(op!), { numRuns: 1, seed: 1 });
    const bad = {
      ...good!,
      pathParams: { id: 'nope' },
      body: { amount: 5, destination: { brebKey: { value: 'abc' }, bankAccount: { accountNumber: '12345' } } },
    };
    expect(factory.invalid(op!, bad).map((i) => i.where)).toEqual(['path.id', 'body']);
  });
});
