import { canonicalJson } from '@wallet/platform';
import { CANONICAL_JSON_INPUTS, CODE_UNIT_ORDER_GOLDEN } from '@wallet/platform/testing';
import { idempotencyRequestHash } from './idempotency-key.js';
import { requestHash } from '../api/transfers/presenters.js';

// The options each hash uses (see the hash functions).
const idempotencyJson = (v: unknown) => canonicalJson(v);
const transferJson = (v: unknown) => canonicalJson(v, { keyOrder: 'code-unit' });

/**
 * Golden values: the canonical text and the stored hash of the gateway's two request hashes, as they
 * were when each had its own canonical JSON (before the one in @wallet/platform). A stored hash that changes turns a client's retry into a
 * conflict, so these must never change.
 */
const JSON_INPUTS = CANONICAL_JSON_INPUTS;

const body = (name: string): unknown => JSON.parse(JSON_INPUTS[name]!);

describe('Idempotency-Key request hash (golden)', () => {
  it.each([
    ['nested objects and arrays', '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1,"e":[]}', 'cfcad5353bbe0fde81b2e21ac40c1576799afe56425cfb61e5a49c08ee107b41'],
    [
      'key order: case, accents, symbols',
      '{"":7,"B":2,"_":5,"a":4,"a b":6,"b":1,"á":3,"😀":8,"ｚ":9}',
      '517d5bb0c7a25b5a4c44f5975e5d97cf0dbcbb4c93687ae31c06eb9e590980be',
    ],
    [
      'strings with unicode and escapes',
      '{"s":"café ☕ 😀   \\u0000 \\"q\\" \\\\ \\n","t":"ñandú"}',
      'a424064722bb229a7c7399b39c829ff541d4e9492c99525c39969a4515a09897',
    ],
    ['numbers', '{"n":[0,0,1.5,1e+21,-3,12345678901234567000,0.1,1e-7]}', 'd06f8b416b7bac73a8729a0c14d94a0c09bcb3fd11e4342504b9a5c3ff243e44'],
    [
      'integer-like keys',
      '{"2":"b","10":"a","4294967294":1,"-1":3,"01":"d","1.5":4,"4294967295":2,"b":"c"}',
      '6014497f6686d4c11b68f6524d1ffe2a4e3d9cb917689a34cf09fc617e95f2c9',
    ],
    ['a __proto__ member', '{"a":1,"n":{"k":[{}]}}', '78c368bd92505cd3e32c70e0ba820cfffd1ea6c530465a97ae881f98281729a3'],
    ['scalars', '[null,true,false,"",{},[]]', '5c7456a98bf0f54329131a456009f751e4212e36650b9ccb4b11a1a82300d70f'],
  ])('%s', (name, text, hash) => {
    expect(idempotencyJson(body(name))).toBe(text);
    expect(idempotencyRequestHash({ method: 'post', routeTemplate: '/t/{id}', params: { id: 'x' }, body: body(name) })).toBe(hash);
  });
  it('no body, and undefined members', () => {
    expect(idempotencyJson(undefined)).toBe('');
    expect(idempotencyRequestHash({ method: 'POST', routeTemplate: '/t', params: undefined, body: undefined })).toBe(
      '53bfaf9d4af2f244e8da6c69d23b0c979797c29c44be40ce2dfe40bf07be208c',
    );
    expect(idempotencyJson({ a: undefined, b: 1, c: { d: undefined } })).toBe('{"b":1,"c":{}}');
    expect(idempotencyJson([1, undefined, null])).toBe('[1,null,null]');
  });
});

describe('send and batch request hash sent to the transfer service (golden)', () => {
  it.each(CODE_UNIT_ORDER_GOLDEN)('%s', (name, text, hash) => {
    expect(transferJson(body(name))).toBe(text);
    expect(requestHash(body(name))).toBe(hash);
  });
  it('undefined members (an absent optional field of a schema)', () => {
    expect(transferJson({ a: undefined, b: 1, c: { d: undefined } })).toBe('{"b":1,"c":{}}');
    expect(requestHash({ a: undefined, b: 1, c: { d: undefined } })).toBe('0b34eef8a37686fc8bd7ad0462ae5965227918f7e107c4e4f8fab897b120663f');
  });
});
