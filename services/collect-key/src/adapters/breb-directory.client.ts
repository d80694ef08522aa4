import { AppError, startRailCall, type Logger } from '@wallet/platform';
import type { BrebDirectory, RegistrationAnswer } from '../app/ports.js';
import { maskKeyValue } from '../domain/collect-key.js';

/**
 * The Bre-B directory over HTTP (docs/sandbox.md "Bre-B collect keys and inbound payments"):
 * `POST /breb/directory/registrations` (201, idempotent for the same value and callback URL; 409
 * KEY_ALREADY_REGISTERED) as a RegistrationOutcome, and `DELETE /breb/directory/registrations/{keyValue}`
 * (200, idempotent), whose failures — 5xx, time-out, unreachable — are BREB_DIRECTORY_LOOKUP_FAILED.
 * Each call is metered (`wallet_rail_*`: BREB_DIRECTORY register/unregister, BREB return).
 */
export class HttpBrebDirectory implements BrebDirectory {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  private url(path: string): string {
    return `${this.baseUrl.replace(/\/+$/, '')}${path}`;
  }

  async register(r: { keyValue: string; holderName: string; callbackUrl: string }): Promise<RegistrationAnswer> {
    let status: number;
    let body: Record<string, unknown>;
    const metered = startRailCall('BREB_DIRECTORY', 'register');
    try {
      const res = await fetch(this.url('/breb/directory/registrations'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ keyValue: r.keyValue, keyType: 'ALPHANUM', holderName: r.holderName, participantCallbackUrl: r.callbackUrl }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      const text = await res.text();
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        body = {};
      }
    } catch (err) {
      metered.end(undefined);
      // No answer: the request may have been applied. Only asking again can tell.
      this.log.warn({ err: (err as Error).message, keyValue: maskKeyValue(r.keyValue) }, 'Bre-B directory unreachable');
      return { outcome: 'UNAVAILABLE', anchorHandle: null };
    }
    // 409: the value is someone else's, an answer (the outcome TAKEN), not a failure.
    metered.end(status, [409]);
    if (status >= 200 && status < 300) {
      const anchorHandle = typeof body.anchorHandle === 'string' && body.anchorHandle.length > 0 ? body.anchorHandle : null;
      return { outcome: 'REGISTERED', anchorHandle };
    }
    if (status === 409) return { outcome: 'TAKEN', anchorHandle: null };
    // A 4xx (other than a time-out or a rate limit) refuses this request for good; 5xx, 408 and 429 tell nothing.
    const refused = status >= 400 && status < 500 && status !== 408 && status !== 429;
    this.log.warn(
      { status, error: body.error, keyValue: maskKeyValue(r.keyValue) },
      refused ? 'Bre-B directory refused the registration' : 'Bre-B directory could not answer the registration',
    );
    return { outcome: refused ? 'REFUSED' : 'UNAVAILABLE', anchorHandle: null };
  }

  async returnPayment(r: {
    returnId: string;
    providerTransferId: string;
    amountCents: bigint;
  }): Promise<{ outcome: 'RETURNED' | 'REFUSED' | 'UNAVAILABLE'; returnedAt: Date | null; code?: string }> {
    let status: number;
    let body: Record<string, unknown>;
    const metered = startRailCall('BREB', 'return');
    try {
      const res = await fetch(this.url('/breb/network/returns'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ returnId: r.returnId, providerTransferId: r.providerTransferId, amountCents: Number(r.amountCents) }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      const text = await res.text();
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        body = {};
      }
    } catch (err) {
      metered.end(undefined);
      this.log.warn({ err: (err as Error).message, providerTransferId: r.providerTransferId }, 'Bre-B network unreachable (return)');
      return { outcome: 'UNAVAILABLE', returnedAt: null };
    }
    metered.end(status);
    if (status >= 200 && status < 300 && typeof body.returnedAt === 'string' && !Number.isNaN(Date.parse(body.returnedAt))) {
      return { outcome: 'RETURNED', returnedAt: new Date(body.returnedAt) };
    }
    const refused = status >= 400 && status < 500 && status !== 408 && status !== 429;
    this.log.warn(
      { status, error: body.error, providerTransferId: r.providerTransferId },
      refused ? 'Bre-B network refused the return' : 'Bre-B network could not answer the return',
    );
    return { outcome: refused ? 'REFUSED' : 'UNAVAILABLE', returnedAt: null, ...(typeof body.error === 'string' ? { code: body.error } : {}) };
  }

  async unregister(keyValue: string): Promise<void> {
    let status: number;
    const metered = startRailCall('BREB_DIRECTORY', 'unregister');
    try {
      const res = await fetch(this.url(`/breb/directory/registrations/${encodeURIComponent(keyValue)}`), {
        method: 'DELETE',
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      await res.arrayBuffer();
    } catch (err) {
      metered.end(undefined);
      this.log.warn({ err: (err as Error).message, keyValue: maskKeyValue(keyValue) }, 'Bre-B directory unreachable (unregister)');
      throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
    }
    // 404: already gone, the outcome wanted.
    metered.end(status, [404]);
    if ((status >= 200 && status < 300) || status === 404) return;
    this.log.warn({ status, keyValue: maskKeyValue(keyValue) }, 'Bre-B directory refused the unregistration');
    throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
  }
}
