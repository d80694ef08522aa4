/**
 * The JSON text of a response body. A `bigint` is written as a JSON number digit for digit
 * (`JSON.rawJSON`), never through a float: money above 2^53 centavos stays exact on the wire, as
 * the reference types it (a number). Clients that parse with a big-number aware parser read it exactly.
 */
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

export function toJsonText(body: unknown): string {
  return JSON.stringify(body, (_key, v: unknown) => (typeof v === 'bigint' ? rawJSON(v.toString()) : v));
}
