import type { WalletErrorCode } from './generated/operations.js';

/** Anything the client throws (besides a caller's own abort): catch this to catch them all. */
export class WalletError extends Error {
  override name = 'WalletError';
}

/**
 * The API answered with an error (`{ error, message, details? }`, Spanish `message`). `error` is typed
 * with the codes the document lists; `C` narrows it for one operation where the caller knows better.
 */
export class WalletApiError<C extends string = WalletErrorCode> extends WalletError {
  override name = 'WalletApiError';
  /** HTTP status of the answer. */
  readonly status: number;
  /** The catalogue code, e.g. `INSUFFICIENT_BALANCE`. */
  readonly error: C;
  /** Details of the refusal (INVALID_REQUEST: `{ fields: [{ path, message }] }`), when the API sends them. */
  readonly details: Record<string, unknown> | undefined;
  /** The answer's `X-Request-Id` (quote it to support). */
  readonly requestId: string | undefined;
  /** Seconds the API asked to wait (`Retry-After`), on 429 and some 503s. */
  readonly retryAfterSeconds: number | undefined;
  /** The whole error body as received (e.g. `required`/`granted` on INSUFFICIENT_SCOPE, `found` on resolve-key). */
  readonly body: unknown;

  constructor(init: {
    status: number;
    error: C;
    message: string;
    details?: Record<string, unknown>;
    requestId?: string;
    retryAfterSeconds?: number;
    body?: unknown;
  }) {
    super(init.message);
    this.status = init.status;
    this.error = init.error;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.body = init.body;
  }

  /** From an error answer whose body openapi-fetch read (JSON when it parsed, text otherwise). */
  static fromResponse(response: Response, body: unknown): WalletApiError {
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const retryAfterSeconds = parseRetryAfter(response.headers.get('retry-after'));
    if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') {
      const b = body as { error: string; message?: unknown; details?: unknown };
      return new WalletApiError({
        status: response.status,
        error: b.error as WalletErrorCode,
        message: typeof b.message === 'string' ? b.message : b.error,
        ...(b.details && typeof b.details === 'object' ? { details: b.details as Record<string, unknown> } : {}),
        ...(requestId ? { requestId } : {}),
        ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
        body,
      });
    }
    // Not the API's error shape (a proxy's page, an empty body): keep what came, under a status code.
    return new WalletApiError({
      status: response.status,
      error: (response.status >= 500 ? 'SERVICE_UNAVAILABLE' : 'INVALID_REQUEST') as WalletErrorCode,
      message: `HTTP ${response.status}${typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : ''}`,
      ...(requestId ? { requestId } : {}),
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      body,
    });
  }
}

/** No answer: the connection failed or was cut (after the retries the call allowed). */
export class WalletConnectionError extends WalletError {
  override name = 'WalletConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No answer within `timeoutMs` (after the retries the call allowed). */
export class WalletTimeoutError extends WalletConnectionError {
  override name = 'WalletTimeoutError';
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
