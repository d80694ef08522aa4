import { z } from 'zod';
import { AppError } from '@wallet/platform';
import { centsSchema, parseOrThrow, parseParams, queryInt, textSchema, uuidSchema, withQueryPaths } from './validation.js';
import { errorBody } from './errors.js';

function fieldsOf(fn: () => unknown): Array<{ path: string; message: string }> {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('INVALID_REQUEST');
    return ((err as AppError).details as { fields: Array<{ path: string; message: string }> }).fields;
  }
  throw new Error('expected INVALID_REQUEST');
}

describe('amounts (CONTRACT §3)', () => {
  const S = z.strictObject({ amountCents: centsSchema(1) });
  it.each([1.5, '100', -1, 0, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, null, true, 1e300])('rejects %p', (v) => {
    const fields = fieldsOf(() => parseOrThrow(S, { amountCents: v }));
    expect(fields[0]!.path).toBe('amountCents');
    expect(fields[0]!.message).toMatch(/\S/);
  });
  it('accepts JSON integers up to 2^53-1', () => {
    expect(parseOrThrow(S, { amountCents: Number.MAX_SAFE_INTEGER }).amountCents).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseOrThrow(S, { amountCents: 1 }).amountCents).toBe(1);
  });
});

describe('parseOrThrow', () => {
  it('lists every problem with its path, in Spanish, including unknown fields', () => {
    const S = z.strictObject({ a: z.string(), b: z.object({ c: z.int() }) });
    const fields = fieldsOf(() => parseOrThrow(S, { b: { c: 'x' }, extra: 1 }));
    expect(fields).toEqual(
      expect.arrayContaining([
        { path: 'a', message: expect.stringMatching(/se esperaba/) },
        { path: 'b.c', message: expect.stringMatching(/se esperaba/) },
        { path: 'extra', message: 'Campo no permitido.' },
      ]),
    );
  });
  it('prefixes query fields', () => {
    const fields = fieldsOf(() => parseOrThrow(z.object({ limit: z.coerce.number().int().max(100) }), { limit: '500' }, 'query'));
    expect(fields[0]!.path).toBe('query.limit');
  });
  it('counts text length in code points', () => {
    const S = textSchema(1, 3);
    expect(parseOrThrow(S, ' 😀😀😀 ')).toBe('😀😀😀');
    fieldsOf(() => parseOrThrow(S, '😀😀😀😀'));
    fieldsOf(() => parseOrThrow(S, '   '));
  });
});

describe('parseParams', () => {
  const P = z.object({ id: uuidSchema(), rail: z.enum(['BREB', 'ACH']) });
  it('answers the route-chosen code for a malformed id', () => {
    expect(() => parseParams(P, { id: 'nope', rail: 'BREB' }, { id: 'COMPANY_NOT_FOUND' })).toThrow(expect.objectContaining({ code: 'COMPANY_NOT_FOUND' }));
  });
  it('answers INVALID_REQUEST for other parameters', () => {
    expect(() => parseParams(P, { id: '6f1c2c1e-0000-4000-8000-000000000001', rail: 'X' }, { id: 'COMPANY_NOT_FOUND' })).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
  });
  it('lower-cases UUIDs', () => {
    expect(parseParams(P, { id: '6F1C2C1E-0000-4000-8000-00000000000A', rail: 'ACH' }, undefined).id).toBe('6f1c2c1e-0000-4000-8000-00000000000a');
  });
});

describe('errorBody', () => {
  it('puts scope and rate-limit fields at the top level, others under details', () => {
    expect(errorBody(new AppError('INSUFFICIENT_SCOPE', undefined, { required: 'WRITE', granted: 'READ' }))).toEqual({
      error: 'INSUFFICIENT_SCOPE',
      message: expect.any(String),
      required: 'WRITE',
      granted: 'READ',
    });
    expect(errorBody(new AppError('RATE_LIMIT_EXCEEDED', undefined, { retryAfter: 7 }))).toEqual({
      error: 'RATE_LIMIT_EXCEEDED',
      message: expect.any(String),
      retryAfter: 7,
    });
    expect(errorBody(new AppError('INVALID_REQUEST', undefined, { fields: [] }))).toEqual({
      error: 'INVALID_REQUEST',
      message: 'La solicitud no es válida.',
      details: { fields: [] },
    });
  });
});

describe('withQueryPaths: one error path style for what a service says of a listing', () => {
  const Q = z.strictObject({ cursor: z.string().optional(), limit: z.string().optional() });
  const downstream = () =>
    new AppError('INVALID_REQUEST', undefined, {
      fields: [
        { path: 'cursor', message: 'No es un cursor de este listado.' },
        { path: 'other', message: 'x' },
      ],
    });
  it('answers a bare query parameter name as query.<name> on a route without a body', () => {
    const err = withQueryPaths(downstream(), Q, false) as AppError;
    expect(err.code).toBe('INVALID_REQUEST');
    expect((err.details as { fields: unknown }).fields).toEqual([
      { path: 'query.cursor', message: 'No es un cursor de este listado.' },
      { path: 'other', message: 'x' },
    ]);
  });
  it('leaves body routes, routes without a query, and other errors alone', () => {
    const e = downstream();
    expect(withQueryPaths(e, Q, true)).toBe(e);
    expect(withQueryPaths(e, undefined, false)).toBe(e);
    const plain = new Error('x');
    expect(withQueryPaths(plain, Q, false)).toBe(plain);
  });
});

describe('queryInt: an integer query parameter', () => {
  const Q = z.strictObject({ limit: queryInt(1, 200, 50) });
  it('reads digits as the number, applies the default, refuses the rest at query.limit in Spanish', () => {
    expect(parseOrThrow(Q, { limit: '200' }, 'query').limit).toBe(200);
    expect(parseOrThrow(Q, {}, 'query').limit).toBe(50);
    for (const bad of ['0', '201', '-1', '2.5', '0x10', 'abc', '', ['1', '2']]) {
      expect(fieldsOf(() => parseOrThrow(Q, { limit: bad }, 'query'))).toEqual([{ path: 'query.limit', message: 'Debe ser un número entero entre 1 y 200.' }]);
    }
  });
});
