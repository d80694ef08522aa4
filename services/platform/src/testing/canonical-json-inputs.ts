/**
 * Inputs of the canonical JSON golden tests (every service that stores a hash of canonical JSON pins
 * its outputs on them): JSON texts, parsed as a client's body is (JSON.parse keeps a "__proto__"
 * member as an own property).
 */
export const CANONICAL_JSON_INPUTS: Readonly<Record<string, string>> = {
  'nested objects and arrays': '{"b":1,"a":{"d":[2,{"z":1,"y":2}],"c":null},"e":[]}',
  'key order: case, accents, symbols': '{"b":1,"B":2,"á":3,"a":4,"_":5,"a b":6,"":7,"😀":8,"ｚ":9}',
  'strings with unicode and escapes': '{"s":"café ☕ 😀 \\u2028 \\u0000 \\"q\\" \\\\ \\n","t":"ñandú"}',
  numbers: '{"n":[0,-0,1.5,1e21,-3,12345678901234567890,0.1,1E-7]}',
  'integer-like keys': '{"10":"a","2":"b","b":"c","01":"d","4294967294":1,"4294967295":2,"-1":3,"1.5":4}',
  'a __proto__ member': '{"a":1,"__proto__":{"x":1},"n":{"__proto__":5,"k":[{"__proto__":null}]}}',
  scalars: '[null,true,false,"",{},[]]',
};

/**
 * Each input's canonical text in code-unit key order and its SHA-256, as stored by the two hashes that
 * use that order (the gateway's send and batch request hash, the receipt hash): one table, so the two
 * golden tests cannot drift apart.
 */
export const CODE_UNIT_ORDER_GOLDEN: [name: string, text: string, sha256: string][] = [
  ['nested objects and arrays', '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1,"e":[]}', '5a4ff77051c9c69fbf4d5ba0fc11a977d7955877b1c481d9d719d667b13b7745'],
  [
    'key order: case, accents, symbols',
    '{"":7,"B":2,"_":5,"a":4,"a b":6,"b":1,"á":3,"😀":8,"ｚ":9}',
    'f1d794d5cbb7b588de309f525824658d796104fde728d491b043fa1ece8cbf29',
  ],
  [
    'strings with unicode and escapes',
    '{"s":"café ☕ 😀   \\u0000 \\"q\\" \\\\ \\n","t":"ñandú"}',
    '12ee713d8f1543669b5e5cb6a8ca60f0695eac15bdb153959d2403df752d5283',
  ],
  ['numbers', '{"n":[0,0,1.5,1e+21,-3,12345678901234567000,0.1,1e-7]}', '8e3d4487431416dc9ea733a6735ae591850288b1a230b789c367cd438499f939'],
  [
    'integer-like keys',
    '{"-1":3,"01":"d","1.5":4,"10":"a","2":"b","4294967294":1,"4294967295":2,"b":"c"}',
    '0705af31e933a84a0fd9f3e963b5a9a4c7a859d23837840b5068735e68c7e28a',
  ],
  [
    'a __proto__ member',
    '{"__proto__":{"x":1},"a":1,"n":{"__proto__":5,"k":[{"__proto__":null}]}}',
    'fe318b3c9a6987a27c2da1582ea21a7d6501b6f1eb9a4c89ad34ddb49fa43df3',
  ],
  ['scalars', '[null,true,false,"",{},[]]', '176297d1f6186139bb9a138c1ac2dfd313f53c85002e6277432779ed560d0723'],
];
