/**
 * The JSON text of a response body. A `bigint` is written as a JSON number digit for digit
 * (`JSON.rawJSON`), never through a float: money above 2^53 centavos stays exact on the wire, as
 * the reference types it (a number). Clients that parse with a big-number aware parser read it exactly.
 */
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

export function toJsonText(body: unknown): string {
  try {
    // Almost every body has no bigint: the plain call, without a replacer on every key.
    return JSON.stringify(body);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return JSON.stringify(body, (_key, v: unknown) => (typeof v === 'bigint' ? rawJSON(v.toString()) : v));
  }
}

/** An object or array answered as JSON (not a Buffer, a stream or text such as an HTML page). */
export function isJsonBody(body: unknown): boolean {
  return (
    body !== null &&
    typeof body === 'object' &&
    !Buffer.isBuffer(body) &&
    !(body instanceof Uint8Array) &&
    typeof (body as { pipe?: unknown }).pipe !== 'function'
  );
}
