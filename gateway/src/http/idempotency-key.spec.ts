import { AppError, canonicalJson } from '@wallet/platform';
import {
  idempotencyRequestHash,
  isStorableAnswer,
  parseIdempotencyKey,
  replayableHeaders,
  requestFingerprinter,
  type IdempotentRequest,
} from './idempotency-key.js';

function fieldsOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('INVALID_REQUEST');
    return ((err as AppError).details as { fields: unknown }).fields;
  }
  throw new Error('expected INVALID_REQUEST');
}

describe('parseIdempotencyKey', () => {
  it('absent → undefined; 1-255 visible ASCII characters pass as they are', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    for (const k of ['a', '550e8400-e29b-41d4-a716-446655440000', 'x'.repeat(255), '!~#$%&()*+,-./:;<=>?@[]^_`{|}', 'order:42/retry']) {
      expect(parseIdempotencyKey(k)).toBe(k);
    }
  });

  it('empty, too long, spaces, controls, non-ASCII or a repeated header → 400 on the Idempotency-Key field', () => {
    for (const bad of ['', 'x'.repeat(256), 'a b', 'tab\there', 'nul\u0000', 'del\u007f', 'clave-ñ', 'emoji-🙂', ['a', 'b']]) {
      expect(fieldsOf(() => parseIdempotencyKey(bad))).toEqual([{ path: 'Idempotency-Key', message: expect.any(String) }]);
    }
    expect(fieldsOf(() => parseIdempotencyKey(''))).toEqual([{ path: 'Idempotency-Key', message: 'Debe tener entre 1 y 255 caracteres.' }]);
    expect(fieldsOf(() => parseIdempotencyKey('a b'))).toEqual([{ path: 'Idempotency-Key', message: 'Solo admite caracteres ASCII visibles (sin espacios).' }]);
  });
});

describe('request hash', () => {
  const base: IdempotentRequest = {
    method: 'POST',
    routeTemplate: '/transfers/send',
    params: undefined,
    body: { amount: 100, destination: { bankAccount: { bankId: 1, accountNumber: '1234' } } },
  };

  it('canonical JSON sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson(undefined)).toBe('');
    expect(canonicalJson([3, 1])).not.toBe(canonicalJson([1, 3]));
  });

  it('is stable under key order and whitespace of the body, and is SHA-256 hex', () => {
    const reordered = { destination: { bankAccount: { accountNumber: '1234', bankId: 1 } }, amount: 100 };
    const h = idempotencyRequestHash(base);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(idempotencyRequestHash({ ...base, body: JSON.parse(JSON.stringify(reordered, null, 2)) })).toBe(h);
    expect(idempotencyRequestHash({ ...base, method: 'post' })).toBe(h);
  });

  it('changes with the body, the route, the method or a path parameter', () => {
    const h = idempotencyRequestHash(base);
    const others = [
      { ...base, body: { ...(base.body as object), amount: 101 } },
      { ...base, body: undefined },
      { ...base, routeTemplate: '/deposits/pse' },
      { ...base, method: 'PUT' },
      { ...base, params: { id: 'bkey_1' } },
    ];
    const hashes = new Set([h, ...others.map(idempotencyRequestHash)]);
    expect(hashes.size).toBe(others.length + 1);
    const qr = { method: 'POST', routeTemplate: '/breb/collect-keys/{id}/qr', body: undefined };
    expect(idempotencyRequestHash({ ...qr, params: { id: 'bkey_aaaa' } })).not.toBe(idempotencyRequestHash({ ...qr, params: { id: 'bkey_bbbb' } }));
    // An empty body and an empty object are different requests.
    expect(idempotencyRequestHash({ ...base, body: {} })).not.toBe(idempotencyRequestHash({ ...base, body: undefined }));
  });
});

describe('which answers are stored', () => {
  it('2xx and business 4xx are final; 5xx, 408, 429 and IN_USE are not', () => {
    for (const s of [200, 201, 202]) expect(isStorableAnswer(s)).toBe(true);
    expect(isStorableAnswer(422, 'INSUFFICIENT_BALANCE')).toBe(true);
    expect(isStorableAnswer(404, 'KEY_NOT_FOUND')).toBe(true);
    expect(isStorableAnswer(409, 'REFERENCE_CONFLICT')).toBe(true);
    expect(isStorableAnswer(409, 'IDEMPOTENCY_KEY_IN_USE')).toBe(false);
    expect(isStorableAnswer(429, 'RATE_LIMIT_EXCEEDED')).toBe(false);
    expect(isStorableAnswer(408)).toBe(false);
    for (const s of [500, 502, 503, 504]) expect(isStorableAnswer(s)).toBe(false);
    expect(isStorableAnswer(302)).toBe(false);
  });

  it('replays only Location and Content-Type of the handler headers', () => {
    expect(replayableHeaders({ Location: '/x/1', 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Set-Cookie': 's=1' })).toEqual({
      Location: '/x/1',
      'Content-Type': 'application/json',
    });
    expect(replayableHeaders(undefined)).toEqual({});
  });
});

describe('requestFingerprinter', () => {
  it('keys the request hash: stable per key, different across keys, never the hash itself', () => {
    const a = requestFingerprinter('k'.repeat(32));
    const b = requestFingerprinter('j'.repeat(32));
    const h = idempotencyRequestHash({ method: 'POST', routeTemplate: '/transfers/send', params: {}, body: { amount: 1 } });
    expect(a(h)).toMatch(/^hm1:[0-9a-f]{64}$/);
    expect(a(h)).toBe(a(h));
    expect(a(h)).not.toBe(b(h));
    expect(a(h)).not.toContain(h);
  });
});
