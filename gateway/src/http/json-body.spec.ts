import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { AppError } from '@wallet/platform';
import { readJsonBody } from './json-body.js';

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
