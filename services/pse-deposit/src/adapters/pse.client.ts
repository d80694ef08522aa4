import { AppError, startRailCall, type Logger } from '@wallet/platform';
import type { PseLinkRequest, PseProvider } from '../app/ports.js';

/**
 * The PSE gateway over HTTP (docs/sandbox.md "PSE gateway"): `POST /pse/links`, idempotent on
 * depositId. Any failure (5xx, time-out, unreachable, an answer without a link) → PSE_PROVIDER_ERROR.
 * Each call is metered (`wallet_rail_*{rail="PSE",operation="create_link"}`).
 */
export class HttpPseProvider implements PseProvider {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  async createLink(r: PseLinkRequest): Promise<{ linkId: string | null; paygatewayUrl: string }> {
    const url = `${this.baseUrl.replace(/\/+$/, '')}/pse/links`;
    let status: number;
    let body: unknown;
    const metered = startRailCall('PSE', 'create_link');
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          depositId: r.depositId,
          amountCents: Number(r.amountCents),
          companyName: r.companyName,
          payerName: r.payerName,
          payerEmail: r.payerEmail,
          ...(r.description ? { description: r.description } : {}),
          expiresAt: r.expiresAt.toISOString(),
          callbackUrl: r.callbackUrl,
        }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      const text = await res.text();
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = null;
      }
    } catch (err) {
      metered.end(undefined);
      this.log.warn({ err: (err as Error).message, depositId: r.depositId }, 'PSE provider unreachable');
      throw new AppError('PSE_PROVIDER_ERROR');
    }
    metered.end(status);
    const b = (body ?? {}) as Record<string, unknown>;
    if (status >= 200 && status < 300 && typeof b.paygatewayUrl === 'string' && b.paygatewayUrl) {
      return { linkId: typeof b.linkId === 'string' ? b.linkId : null, paygatewayUrl: b.paygatewayUrl };
    }
    this.log.warn({ status, depositId: r.depositId, error: b.error }, 'PSE provider refused the link');
    throw new AppError('PSE_PROVIDER_ERROR');
  }

  /**
   * `POST /pse/refunds` (docs/sandbox.md "PSE gateway"), idempotent by refundId: 2xx with `refundedAt`
   * → RETURNED; another 4xx (but 408 and 429) → REFUSED with the provider's code; anything else
   * (5xx, time-out, unreachable, an answer without its time) → UNAVAILABLE, asked again later.
   */
  async refund(r: {
    refundId: string;
    depositId: string;
    amountCents: bigint;
  }): Promise<{ outcome: 'RETURNED' | 'REFUSED' | 'UNAVAILABLE'; returnedAt: Date | null; code?: string }> {
    const url = `${this.baseUrl.replace(/\/+$/, '')}/pse/refunds`;
    const metered = startRailCall('PSE', 'refund');
    let status: number;
    let b: Record<string, unknown>;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ refundId: r.refundId, depositId: r.depositId, amountCents: Number(r.amountCents) }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      try {
        b = ((await res.json()) ?? {}) as Record<string, unknown>;
      } catch {
        b = {};
      }
    } catch (err) {
      metered.end(undefined);
      this.log.warn({ err: (err as Error).message, refundId: r.refundId, depositId: r.depositId }, 'PSE provider unreachable (refund)');
      return { outcome: 'UNAVAILABLE', returnedAt: null };
    }
    metered.end(status);
    if (status >= 200 && status < 300) {
      const at = typeof b.refundedAt === 'string' ? new Date(b.refundedAt) : null;
      if (at && !Number.isNaN(at.getTime())) return { outcome: 'RETURNED', returnedAt: at };
      return { outcome: 'UNAVAILABLE', returnedAt: null };
    }
    if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
      this.log.warn({ status, refundId: r.refundId, depositId: r.depositId, error: b.error }, 'PSE provider refused the refund');
      return { outcome: 'REFUSED', returnedAt: null, code: typeof b.error === 'string' ? b.error : `HTTP_${status}` };
    }
    return { outcome: 'UNAVAILABLE', returnedAt: null };
  }
}

/** PSE_PROVIDER_URL is empty: every creation answers PSE_PROVIDER_NOT_CONFIGURED; a refund cannot be made (asked again later). */
export class UnconfiguredPseProvider implements PseProvider {
  createLink(): Promise<never> {
    return Promise.reject(new AppError('PSE_PROVIDER_NOT_CONFIGURED'));
  }
  refund(): Promise<{ outcome: 'UNAVAILABLE'; returnedAt: null }> {
    return Promise.resolve({ outcome: 'UNAVAILABLE', returnedAt: null });
  }
}
