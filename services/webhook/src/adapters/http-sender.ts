import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress, SendResult, WebhookSender } from '../app/ports.js';

/**
 * One HTTP POST to `url`, connecting to `pinned` (the address that passed the SSRF check; the Host
 * header and TLS server name stay the URL's), aborted after `timeoutMs`. Resolves with the status
 * as soon as the response head arrives (the body is drained and ignored); rejects on a network
 * error or time-out. Never follows redirects.
 */
export function postJson(url: URL, pinned: ResolvedAddress, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult> {
  const lookup: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all)
      (cb as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: pinned.address, family: pinned.family }]);
    else cb(null, pinned.address, pinned.family);
  };
  const payload = Buffer.from(body, 'utf8');
  const options: RequestOptions = {
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port || (url.protocol === 'https:' ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, 'content-length': String(payload.length) },
    lookup,
    agent: false,
    signal: AbortSignal.timeout(timeoutMs),
  };
  return new Promise<SendResult>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(options, (res) => {
      res.on('error', () => undefined);
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    req.on('error', (err: Error & { code?: string }) => {
      if (err.name === 'AbortError' || err.name === 'TimeoutError' || err.code === 'ABORT_ERR') reject(new Error(`timeout after ${timeoutMs} ms`));
      else reject(new Error(err.code ? `${err.code}: ${err.message}` : err.message));
    });
    req.end(payload);
  });
}

/** The app's WebhookSender: `postJson`. */
export const pinnedHttpSender: WebhookSender = { post: postJson };
