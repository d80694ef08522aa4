import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { AppError } from '@wallet/platform';
import { MAX_BODY_BYTES, readBody } from './json-body.js';

/** A JSON route's read: the parsed body. */
const readJsonBody = async (req: IncomingMessage): Promise<unknown> => {
  const b = await readBody(req);
  return b.type === 'json' ? b.value : undefined;
};

function request(body: string | Buffer, headers: Record<string, string> = {}): IncomingMessage {
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  const req = Readable.from([buf]) as unknown as IncomingMessage;
  req.headers = { 'content-type': 'application/json', 'content-length': String(buf.length), ...headers };
  return req;
}

async function refusal(body: string): Promise<{ code: string; path: string | undefined }> {
  try {
    await readJsonBody(request(body));
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    const e = err as AppError;
    return { code: e.code, path: (e.details as { fields?: Array<{ path: string }> } | undefined)?.fields?.[0]?.path };
  }
  throw new Error('expected a refusal');
}

describe('readJsonBody: U+0000 (PostgreSQL text cannot hold it)', () => {
  it('refuses it in a value or a key, naming where', async () => {
    expect(await refusal('{"name":"a\\u0000b"}')).toEqual({ code: 'INVALID_REQUEST', path: 'name' });
    expect(await refusal('{"a":{"b":["ok","\\u0000"]}}')).toEqual({ code: 'INVALID_REQUEST', path: 'a.b.1' });
    expect(await refusal('{"k\\u0000":1}')).toEqual({ code: 'INVALID_REQUEST', path: 'k\u0000' });
  });

  it('does not overflow the stack on deep nesting', async () => {
    const deep = '['.repeat(5000) + '"\\u0000"' + ']'.repeat(5000);
    expect((await refusal(deep)).code).toBe('INVALID_REQUEST');
  });

  it('keeps an escaped backslash followed by u0000 (no NUL) and other control escapes', async () => {
    expect(await readJsonBody(request('{"a":"\\\\u0000","b":"\\u0001"}'))).toEqual({ a: '\\u0000', b: '\u0001' });
  });
});

describe('readBody: CSV routes and larger limits', () => {
  const err = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      expect(e).toBeInstanceOf(AppError);
      return e as AppError;
    }
    throw new Error('expected a refusal');
  };

  it('on a csv route, keeps a text/csv body as bytes (charset omitted or UTF-8), and still parses JSON', async () => {
    const bytes = Buffer.from('\uFEFFamount;keyValue\r\n1;x\r\n');
    for (const type of ['text/csv', 'text/csv; charset=utf-8', 'TEXT/CSV;charset="UTF-8"', 'text/csv; charset=utf8; header=present']) {
      expect(await readBody(request(bytes, { 'content-type': type }), { csv: true })).toEqual({ type: 'csv', raw: bytes });
    }
    expect(await readBody(request('{"a":1}'), { csv: true })).toEqual({ type: 'json', value: { a: 1 }, raw: Buffer.from('{"a":1}') });
    // An empty CSV is still a CSV (the handler says the file is empty).
    expect(await readBody(request('', { 'content-type': 'text/csv' }), { csv: true })).toEqual({ type: 'csv', raw: Buffer.alloc(0) });
  });

  it('415 for text/csv on a JSON-only route, another charset, or another type', async () => {
    expect((await err(readBody(request('a;b\n', { 'content-type': 'text/csv' })))).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect((await err(readBody(request('a;b\n', { 'content-type': 'text/csv; charset=iso-8859-1' }), { csv: true }))).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect((await err(readBody(request('a;b\n', { 'content-type': 'text/plain' }), { csv: true }))).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect((await err(readBody(request('a;b\n', { 'content-type': 'text/csv', 'content-encoding': 'gzip' }), { csv: true }))).code).toBe(
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('a route limit above 1 MiB takes larger bodies, JSON or CSV; past it → 413 naming the limit (declared or streamed)', async () => {
    const limit = 10 * MAX_BODY_BYTES;
    const big = Buffer.alloc(3 * MAX_BODY_BYTES, 'a');
    expect((await readBody(request(big, { 'content-type': 'text/csv' }), { csv: true, limit })).raw.length).toBe(big.length);
    const bigJson = JSON.stringify({ items: [big.toString('utf8', 0, 2 * MAX_BODY_BYTES)] });
    expect((await readBody(request(bigJson), { limit })).type).toBe('json');
    // The default limit still refuses it.
    expect((await err(readJsonBody(request(bigJson)))).code).toBe('PAYLOAD_TOO_LARGE');
    const over = Buffer.alloc(limit + 1, 'a');
    const declared = await err(readBody(request(over, { 'content-type': 'text/csv' }), { csv: true, limit }));
    expect(declared.code).toBe('PAYLOAD_TOO_LARGE');
    expect(declared.message).toContain('10 MiB');
    const chunked = request(over, { 'content-type': 'text/csv' });
    delete chunked.headers['content-length'];
    chunked.headers['transfer-encoding'] = 'chunked';
    expect((await err(readBody(chunked, { csv: true, limit }))).code).toBe('PAYLOAD_TOO_LARGE');
  });
});
