import type { IncomingMessage } from 'node:http';
import { AppError, invalidRequest } from '@wallet/platform';

/** CONTRACT §9: request bodies over 1 MiB → 413. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** How much of an oversized body we read and discard so the client can still read the 413 (a larger route limit reads a little past it). */
const MAX_DRAIN_BYTES = 8 * MAX_BODY_BYTES;
const drainBytes = (limit: number) => Math.max(MAX_DRAIN_BYTES, limit + MAX_BODY_BYTES);

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function hasBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  if (len !== undefined) return Number(len) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

/** A request body as read by readBody: parsed JSON, or the exact bytes of a CSV file. */
export type RequestBody = { type: 'json'; value: unknown; raw: Buffer } | { type: 'csv'; raw: Buffer };

const CSV_TYPE = /^text\/csv\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

/**
 * Reads a request body: JSON (415 for another content type or a content encoding, 400
 * INVALID_REQUEST for bytes that are not UTF-8 JSON; an empty body reads as `undefined`, the schema
 * then says what is missing), or — with `csv` — also `text/csv` (charset
 * omitted or UTF-8; a declared other charset is 415), or — with `csv: 'only'` — `text/csv` alone, kept as bytes for the handler to parse (it
 * checks the UTF-8 itself, to answer in the file's terms). `limit`: 413 above it (default 1 MiB).
 */
export async function readBody(req: IncomingMessage, opts: { limit?: number; csv?: boolean | 'only' } = {}): Promise<RequestBody> {
  const limit = opts.limit ?? MAX_BODY_BYTES;
  const type = req.headers['content-type'] ?? '';
  const csvOnly = opts.csv === 'only';
  const csv = csvOnly || (opts.csv === true && CSV_TYPE.test(type));
  if (!hasBody(req)) return csv ? { type: 'csv', raw: Buffer.alloc(0) } : { type: 'json', value: undefined, raw: Buffer.alloc(0) };
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const charset = CHARSET.exec(type)?.[1]?.toLowerCase();
  const csvCharsetOk = charset === undefined || charset === 'utf-8' || charset === 'utf8';
  if (!(csv ? CSV_TYPE.test(type) && csvCharsetOk : JSON_TYPE.test(type)) || encoding !== 'identity') {
    await drain(req, limit);
    throw new AppError('UNSUPPORTED_MEDIA_TYPE');
  }
  const raw = await readBytes(req, limit);
  if (csv) return { type: 'csv', raw };
  return { type: 'json', value: parseJson(raw), raw };
}

/** 413 PAYLOAD_TOO_LARGE, naming the route's limit when it is not the default. */
function tooLarge(limit: number): AppError {
  if (limit === MAX_BODY_BYTES) return new AppError('PAYLOAD_TOO_LARGE');
  const mib = limit / MAX_BODY_BYTES;
  const size = Number.isInteger(mib) ? `${mib} MiB` : `${limit} bytes`;
  return new AppError('PAYLOAD_TOO_LARGE', `El cuerpo de la solicitud supera el tamaño máximo permitido (${size}).`);
}

/** The body's bytes, at most `limit` (checked against Content-Length first, then while streaming). */
async function readBytes(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    await drain(req, limit);
    throw tooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      over = true;
      if (size > drainBytes(limit)) break;
      continue;
    }
    chunks.push(chunk);
  }
  if (over) throw tooLarge(limit);
  return Buffer.concat(chunks, size);
}

function parseJson(raw: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw invalidRequest([{ path: '', message: 'El cuerpo no está codificado en UTF-8.' }]);
  }
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw invalidRequest([{ path: '', message: 'El cuerpo no es JSON válido.' }]);
  }
  // PostgreSQL text cannot hold U+0000: refuse it here instead of failing later with a 500.
  // In valid JSON it can only arrive escaped, so the walk runs only when the escape is present.
  const nul = text.includes('\\u0000') ? pathOfNul(value) : undefined;
  if (nul !== undefined) throw invalidRequest([{ path: nul, message: 'El texto no puede contener el carácter nulo (U+0000).' }]);
  return value;
}

/** Dotted path of the first string (value or key) holding U+0000; iterative, so deep nesting cannot overflow the stack. */
function pathOfNul(root: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[root, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return path;
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push([item, path ? `${path}.${i}` : String(i)]));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        const p = path ? `${path}.${k}` : k;
        if (k.includes('\u0000')) return p;
        stack.push([item, p]);
      }
    }
  }
  return undefined;
}

/** Reads and discards (a bounded amount of) the body so the connection can carry the error answer. */
async function drain(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<void> {
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > drainBytes(limit)) break;
    }
  } catch {
    // The client went away; nothing to answer.
  }
}
