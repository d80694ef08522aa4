import { canonicalJson } from '@wallet/platform';
import { CANONICAL_JSON_INPUTS } from '@wallet/platform/testing';
import { requestHash } from './request-hash.js';

/**
 * Golden values: the canonical text and the stored request hash of a posting, as they were when the
 * ledger had its own canonical JSON. A stored hash that changes turns a retried posting into a
 * REFERENCE_CONFLICT, so these must never change.
 */
const JSON_INPUTS = CANONICAL_JSON_INPUTS;

describe('posting request hash (golden)', () => {
  it.each([
    ['nested objects and arrays', '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1,"e":[]}', '07cdf7242cc9c9c43c246de01f4d5b1e4a95d5eec8164a01d568fbbf8bdb7d4f'],
    [
      'key order: case, accents, symbols',
      '{"":7,"B":2,"_":5,"a":4,"a b":6,"b":1,"á":3,"😀":8,"ｚ":9}',
      'e0b092b4c419ce7807281351800bd1bef2f14406a8543f59eb211631dfc289f6',
    ],
    [
      'strings with unicode and escapes',
      '{"s":"café ☕ 😀   \\u0000 \\"q\\" \\\\ \\n","t":"ñandú"}',
      '1f39ca94ac535a37350d07256294cb664bf37fc1a6d362e4ba03c5618b0ea8fe',
    ],
    ['numbers', '{"n":[0,0,1.5,1e+21,-3,12345678901234567000,0.1,1e-7]}', '3d3633453b1f9735fbbdc12dd46bcaddbb01a346f46a59f458ab2fbc8754d395'],
    [
      'integer-like keys',
      '{"2":"b","10":"a","4294967294":1,"-1":3,"01":"d","1.5":4,"4294967295":2,"b":"c"}',
      '7af4f22f0d3944dff59122a1b024a8ef0aabf9bf1ba305fb635edf38d8012ed6',
    ],
    ['a __proto__ member', '{"a":1,"n":{"k":[{}]}}', 'bfb68ecb50ff1eb25bb086e2c68ba7561708f73c5eb3e42c371a8eba658d6b57'],
    ['scalars', '[null,true,false,"",{},[]]', '6ea6bd751c03c2854c10e1ab8ec682ca70e8e0dad4821fa81beb4b900b757963'],
  ])('%s', (name, text, hash) => {
    const v: unknown = JSON.parse(JSON_INPUTS[name]!);
    expect(canonicalJson(v)).toBe(text);
    expect(requestHash('credit', 'c1', v)).toBe(hash);
  });
  it.each([
    ['undefined member', { a: undefined, b: 1, c: { d: undefined } }, '{"b":1,"c":{}}', '71500d1a3b470100d24f1999b2485b93518fd7436dd940633f1046b13fab5d3c'],
    ['undefined in an array', [1, undefined, null], '[1,null,null]', 'f05455751cc36b7fa42b404713ec86394223f5c0c4e46bd9233d8a4a48c923dd'],
    [
      'bigint and Date',
      { amount: 2n ** 64n, at: new Date('2026-11-28T10:00:00.000Z') },
      '{"amount":"18446744073709551616","at":"2026-11-28T10:00:00.000Z"}',
      '330d12b2f4979ff138cf4316f5a895deb2a998b171952f84c93c7227fcb3769b',
    ],
  ])('%s', (_name, v, text, hash) => {
    expect(canonicalJson(v)).toBe(text);
    expect(requestHash('credit', 'c1', v)).toBe(hash);
  });
});
