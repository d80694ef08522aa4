/**
 * How a canonical text is written. Every stored request hash and every printed receipt hash is the
 * SHA-256 of this text, so a caller's options are frozen once it has stored a hash.
 */
export interface CanonicalJsonOptions {
  /**
   * An object member whose value is undefined: `'drop'` (default) leaves it out, as JSON.stringify
   * does; `'null'` writes it as null. In an array undefined is always null (dropping it would move
   * the elements after it); a top-level undefined is '' with `'drop'` (no body), else 'null'.
   */
  undefinedAs?: 'drop' | 'null';
  /**
   * `'engine'` (default): the order JSON.stringify gives a copy built with sorted keys — array-index
   * keys ("0" … "4294967294") first in numeric order, then the others by UTF-16 code unit — and a
   * `__proto__` member is left out (assigning it to the copy sets the prototype instead).
   * `'code-unit'`: every own key by UTF-16 code unit, `__proto__` included.
   * The two differ only on objects with such keys, which parsed client JSON can hold.
   */
  keyOrder?: 'engine' | 'code-unit';
}

/**
 * JSON with object keys sorted at every level: the same document always gives the same text.
 * Strings and numbers as JSON.stringify writes them; bigint as a decimal string; Date as its ISO
 * text. A function or symbol counts as undefined.
 */
export function canonicalJson(value: unknown, options: CanonicalJsonOptions = {}): string {
  const o: Required<CanonicalJsonOptions> = { undefinedAs: options.undefinedAs ?? 'drop', keyOrder: options.keyOrder ?? 'engine' };
  return write(value, o) ?? (o.undefinedAs === 'null' ? 'null' : '');
}

function write(v: unknown, o: Required<CanonicalJsonOptions>): string | undefined {
  if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return undefined;
  if (typeof v === 'bigint') return `"${v}"`;
  if (v instanceof Date) return JSON.stringify(v.toISOString());
  if (Array.isArray(v)) return `[${Array.from(v as unknown[], (x) => write(x, o) ?? 'null').join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const members: string[] = [];
    for (const k of sortedKeys(v, o.keyOrder)) {
      const x = write((v as Record<string, unknown>)[k], o) ?? (o.undefinedAs === 'null' ? 'null' : undefined);
      if (x !== undefined) members.push(`${JSON.stringify(k)}:${x}`);
    }
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(v);
}

const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/;
const isArrayIndex = (k: string): boolean => ARRAY_INDEX.test(k) && Number(k) <= 4_294_967_294;

function sortedKeys(v: object, order: 'engine' | 'code-unit'): string[] {
  const keys = Object.keys(v).sort();
  if (order === 'code-unit') return keys;
  const indices = keys.filter(isArrayIndex).sort((a, b) => Number(a) - Number(b));
  return [...indices, ...keys.filter((k) => !isArrayIndex(k) && k !== '__proto__')];
}
