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
}

/** PSE_PROVIDER_URL is empty: every creation answers PSE_PROVIDER_NOT_CONFIGURED. */
export class UnconfiguredPseProvider implements PseProvider {
  createLink(): Promise<never> {
    return Promise.reject(new AppError('PSE_PROVIDER_NOT_CONFIGURED'));
  }
}
