import { WalletApiError, WalletConnectionError, WalletTimeoutError } from './errors.js';
import { operations, type OperationId } from './generated/operations.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 2; 0 turns retrying off). */
  maxRetries?: number;
  /** First backoff step in ms (default 500); each retry doubles it, with full jitter. */
  retryBaseDelayMs?: number;
  /** The longest wait between two attempts (default 20 000 ms). A `Retry-After` longer than this is not waited for: the 429/503 is thrown. */
  maxRetryDelayMs?: number;
}

/** What the client reports before each retry (for logs and metrics). */
export interface RetryEvent {
  operationId: OperationId;
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  /** The HTTP status that caused it, or `timeout` / `network`. */
  reason: number | 'timeout' | 'network';
  idempotencyKey: string | undefined;
}

export interface TransportOptions extends RetryOptions {
  /** Per attempt, from sending the request to the end of the answer's body (default 30 000 ms). */
  timeoutMs?: number;
  onRetry?: (event: RetryEvent) => void;
  /** How to wait between attempts (default: a timer). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Idempotency keys for calls that get none from the caller (default: crypto.randomUUID). */
  newIdempotencyKey?: () => string;
}

/** Per-call options every method takes. */
export interface CallOptions {
  /** Aborts the call (and its retries); the abort reason is thrown as is. */
  signal?: AbortSignal;
  /** Overrides the client's timeout for this call. */
  timeoutMs?: number;
  /** Overrides the client's retry count for this call. */
  maxRetries?: number;
  /**
   * For operations that take one (the creating POSTs): the Idempotency-Key to send. Default: a new
   * UUID per call, the same on every retry of that call. Pass your own (e.g. your order id) to make a
   * retry after a crash of your process safe too.
   */
  idempotencyKey?: string;
}

/** What openapi-fetch returns for one attempt. */
interface Attempt {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** Operations that change nothing though they are POSTs: safe to repeat after an unknown outcome. */
const READ_ONLY_POSTS: ReadonlySet<OperationId> = new Set<OperationId>(['resolveKey', 'quoteBreb', 'quoteAch']);

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Runs one operation with timeouts and retries. What is retried, with the same Idempotency-Key and body:
 * - 429, always (nothing ran), after `Retry-After` when it fits `maxRetryDelayMs`;
 * - 409 IDEMPOTENCY_KEY_IN_USE (the first request with that key is still running);
 * - a lost connection, a timeout or a 5xx, only when repeating is safe: reads, the read-only POSTs
 *   (quotes, resolve-key) and operations that carry an Idempotency-Key (the server replays the first
 *   outcome instead of running it twice).
 * Any other 4xx is the answer and is thrown at once.
 */
export class Transport {
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly sleep: NonNullable<TransportOptions['sleep']>;
  private readonly newKey: () => string;

  constructor(private readonly opts: TransportOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxRetries = opts.maxRetries ?? 2;
    this.baseDelayMs = opts.retryBaseDelayMs ?? 500;
    this.maxDelayMs = opts.maxRetryDelayMs ?? 20_000;
    this.sleep = opts.sleep ?? defaultSleep;
    this.newKey = opts.newIdempotencyKey ?? (() => globalThis.crypto.randomUUID());
    for (const [name, v] of Object.entries({
      timeoutMs: this.timeoutMs,
      maxRetries: this.maxRetries,
      retryBaseDelayMs: this.baseDelayMs,
      maxRetryDelayMs: this.maxDelayMs,
    }))
      if (!Number.isFinite(v) || v < 0) throw new RangeError(`${name} must be a finite number ≥ 0`);
  }

  async run<T>(
    operationId: OperationId,
    call: CallOptions | undefined,
    attempt: (init: { signal: AbortSignal; headers: Record<string, string> }) => Promise<Attempt>,
  ): Promise<T> {
    const op = operations[operationId];
    const idempotencyKey = op.idempotencyKey ? (call?.idempotencyKey ?? this.newKey()) : undefined;
    const headers: Record<string, string> = idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {};
    const safe = op.method === 'GET' || READ_ONLY_POSTS.has(operationId) || idempotencyKey !== undefined;
    const maxRetries = call?.maxRetries ?? this.maxRetries;
    const timeoutMs = call?.timeoutMs ?? this.timeoutMs;

    for (let n = 0; ; n++) {
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
      const signal = call?.signal ? AbortSignal.any([call.signal, timeout.signal]) : timeout.signal;
      let failure: Error;
      let reason: RetryEvent['reason'];
      let retryable: boolean;
      let delayMs: number | undefined;
      try {
        const r = await attempt({ signal, headers: { ...headers } });
        if (r.response.ok) return r.data as T;
        const err = WalletApiError.fromResponse(r.response, r.error);
        failure = err;
        reason = err.status;
        retryable =
          err.status === 429 ||
          (err.status === 409 && err.error === 'IDEMPOTENCY_KEY_IN_USE') ||
          (safe && (err.status === 500 || err.status === 502 || err.status === 503 || err.status === 504));
        if (err.retryAfterSeconds !== undefined) delayMs = err.retryAfterSeconds * 1000;
      } catch (err) {
        if (call?.signal?.aborted) throw call.signal.reason ?? err; // the caller's own abort: not ours to retry
        if (timeout.signal.aborted) {
          failure = new WalletTimeoutError(`${op.method} ${op.path}: no answer within ${timeoutMs} ms`, { cause: err });
          reason = 'timeout';
        } else {
          failure = new WalletConnectionError(`${op.method} ${op.path}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
          reason = 'network';
        }
        retryable = safe;
      } finally {
        clearTimeout(timer);
      }
      if (!retryable || n >= maxRetries) throw failure;
      if (delayMs !== undefined && delayMs > this.maxDelayMs) throw failure; // the server asked for longer than we wait
      const wait = delayMs ?? this.backoff(n);
      this.opts.onRetry?.({ operationId, retry: n + 1, delayMs: wait, reason, idempotencyKey });
      await this.sleep(wait, call?.signal);
    }
  }

  /** Exponential backoff with jitter: a random wait in [½, 1] × base·2ⁿ, capped at maxRetryDelayMs. */
  private backoff(n: number): number {
    const step = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** n);
    return Math.round(step / 2 + Math.random() * (step / 2));
  }
}
