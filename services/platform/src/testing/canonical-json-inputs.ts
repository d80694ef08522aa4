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
