import { canonicalJson } from './canonical-json.js';

describe('canonicalJson', () => {
  it('sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson([3, 1])).toBe('[3,1]');
  });
  it('writes bigint as a decimal string and a Date as its ISO text', () => {
    expect(canonicalJson({ a: 2n ** 64n, t: new Date('2026-11-28T10:00:00Z') })).toBe('{"a":"18446744073709551616","t":"2026-11-28T10:00:00.000Z"}');
  });
  it('drops an undefined member, or writes it as null; in an array it is null', () => {
    const v = { a: undefined, b: [undefined, 1] };
    expect(canonicalJson(v)).toBe('{"b":[null,1]}');
    expect(canonicalJson(v, { undefinedAs: 'null' })).toBe('{"a":null,"b":[null,1]}');
    expect(canonicalJson(undefined)).toBe('');
    expect(canonicalJson(undefined, { undefinedAs: 'null' })).toBe('null');
  });
  it('orders array-index keys as the engine does, or by code unit', () => {
    const v = JSON.parse('{"10":1,"2":2,"b":3,"01":4,"__proto__":5}') as unknown;
    expect(canonicalJson(v)).toBe('{"2":2,"10":1,"01":4,"b":3}');
    expect(canonicalJson(v, { keyOrder: 'code-unit' })).toBe('{"01":4,"10":1,"2":2,"__proto__":5,"b":3}');
  });
});
