import { receiptHash, receiptJson, type ReceiptView } from './receipt-view.js';
import { CANONICAL_JSON_INPUTS, CODE_UNIT_ORDER_GOLDEN } from '@wallet/platform/testing';

/**
 * Golden values: the canonical text and the SHA-256 printed on a receipt, as they were when the
 * receipt service had its own canonical JSON. A hash that changes makes a printed receipt fail
 * verification, so these must never change.
 */
const JSON_INPUTS = CANONICAL_JSON_INPUTS;

const hash = (v: unknown) => receiptHash(v as ReceiptView);
const canonicalJson = (v: unknown) => receiptJson(v as ReceiptView);

describe('receipt hash (golden)', () => {
  it.each(CODE_UNIT_ORDER_GOLDEN)('%s', (name, text, sha) => {
    const v: unknown = JSON.parse(JSON_INPUTS[name]!);
    expect(canonicalJson(v)).toBe(text);
    expect(hash(v)).toBe(sha);
  });
  it('an undefined member is written as null', () => {
    expect(canonicalJson({ a: undefined, b: 1, c: { d: undefined } })).toBe('{"a":null,"b":1,"c":{"d":null}}');
    expect(hash({ a: undefined, b: 1, c: { d: undefined } })).toBe('0987b259696617e19e34a98f8b82992c90f0fff65779643c4864e2529c632c6c');
    expect(canonicalJson([1, undefined, null])).toBe('[1,null,null]');
  });
});
