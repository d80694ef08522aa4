import { AppError, type Logger } from '@wallet/platform';
import type { BrebDirectory } from '../app/ports.js';

/**
 * The Bre-B directory over HTTP (docs/sandbox.md "Bre-B collect keys and inbound payments"):
 * `POST /breb/directory/registrations` (201; 409 KEY_ALREADY_REGISTERED) and
 * `DELETE /breb/directory/registrations/{keyValue}` (200, idempotent). Anything else — 5xx,
 * time-out, unreachable — is BREB_DIRECTORY_LOOKUP_FAILED.
 */
export class HttpBrebDirectory implements BrebDirectory {
  constructor(private readonly baseUrl: string, private readonly timeoutMs: number, private readonly log: Logger) {}

  private url(path: string): string { return `${this.baseUrl.replace(/\/+$/, '')}${path}`; }

  async register(r: { keyValue: string; holderName: string; callbackUrl: string }): Promise<void> {
    let status = 0;
    let body: Record<string, unknown> = {};
    try {
      const res = await fetch(this.url('/breb/directory/registrations'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ keyValue: r.keyValue, keyType: 'ALPHANUM', holderName: r.holderName, participantCallbackUrl: r.callbackUrl }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      const text = await res.text();
      try { body = text ? (JSON.parse(text) as Record<string, unknown>) : {}; } catch { body = {}; }
    } catch (err) {
      this.log.warn({ err: (err as Error).message, keyValue: r.keyValue }, 'Bre-B directory unreachable');
      throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
    }
    if (status >= 200 && status < 300) return;
    if (status === 409) throw new AppError('KEY_ALREADY_REGISTERED');
    this.log.warn({ status, error: body.error, keyValue: r.keyValue }, 'Bre-B directory refused the registration');
    throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
  }

  async unregister(keyValue: string): Promise<void> {
    let status = 0;
    try {
      const res = await fetch(this.url(`/breb/directory/registrations/${encodeURIComponent(keyValue)}`), {
        method: 'DELETE', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      await res.arrayBuffer();
    } catch (err) {
      this.log.warn({ err: (err as Error).message, keyValue }, 'Bre-B directory unreachable (unregister)');
      throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
    }
    if ((status >= 200 && status < 300) || status === 404) return;
    this.log.warn({ status, keyValue }, 'Bre-B directory refused the unregistration');
    throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
  }
}
