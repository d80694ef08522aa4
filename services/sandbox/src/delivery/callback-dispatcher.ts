import { outsideTrace, type Logger } from '@wallet/platform';
import { request } from 'undici';
import { DELIVERY_WINDOW_MS, SIGNATURE_HEADER, retryDelayMs, signCallback, type RetryPolicy } from '../domain/callbacks.js';
import type { CallbackRow, SandboxStore } from '../persistence/sandbox.store.js';
import { DeliveredMarks } from './delivered-marks.js';

export interface DispatcherOptions {
  secret: string;
  /** How often the scheduler looks for due outcomes and deliveries. */
  pollMs: number;
  retry: RetryPolicy;
  /** Per-attempt HTTP timeout. */
  timeoutMs: number;
  batch?: number;
  /** Deliveries in flight at most (per instance). */
  maxInFlight?: number;
}

/** Something whose outcomes fall due (the rails' transfers, the ACH prenotes): settles a batch, returns how many were due. */
export interface DueOutcomes {
  settleDue(limit: number): Promise<number>;
}

export interface AttemptResult {
  delivered: boolean;
  status: number | null;
  error?: string;
}

export type RedeliveryResult =
  | { outcome: 'not_found' }
  | { outcome: 'queued'; callback: CallbackRow; reason: 'callbacks_down' | 'in_flight' }
  | { outcome: 'attempted'; callback: CallbackRow; result: AttemptResult };

/**
 * The scheduler: every `pollMs` (or at once when woken) it settles the transfers whose confirm
 * delay has passed (and the ACH prenotes whose delay has) and sends the due callbacks, signed, retrying failures with exponential
 * backoff. All its state is in Postgres (claims use FOR UPDATE SKIP LOCKED and a lease), so
 * several instances can run and a restart loses nothing.
 */
export class CallbackDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private lastTickError = 0;
  private stopped = true;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly leaseMs: number;
  private readonly maxInFlight: number;
  /** Delivered callbacks answered close together are recorded in one statement. */
  private readonly delivered: DeliveredMarks;

  constructor(
    private readonly store: SandboxStore,
    /** Settled in this order on every tick, each until nothing more is due. */
    private readonly due: readonly DueOutcomes[],
    private readonly o: DispatcherOptions,
    private readonly log: Logger,
  ) {
    // Longer than one attempt can take, so a live sender never loses its lease.
    this.leaseMs = o.timeoutMs + 10_000;
    this.maxInFlight = o.maxInFlight ?? 100;
    this.delivered = new DeliveredMarks(store);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** There is new work (a forced outcome, callbacks back up): run now rather than at the next poll. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  /** Stops polling and waits for the deliveries in flight to finish and be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    await Promise.allSettled([...this.inFlight]);
    await this.delivered.flush();
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    // Outside any trace: a provider's callbacks are its own requests, not part of the call that woke
    // the scheduler (and an idle poll must not join that call's trace).
    this.timer = setTimeout(
      outsideTrace(() => {
        this.timer = undefined;
        this.running = this.tick().finally(() => {
          this.running = undefined;
          if (this.stopped) return;
          const now = this.again;
          this.again = false;
          this.schedule(now ? 0 : this.o.pollMs);
        });
      }),
      ms,
    );
  }

  private async tick(): Promise<void> {
    try {
      const batch = this.o.batch ?? 50;
      for (const d of this.due) {
        while (!this.stopped && (await d.settleDue(batch)) === batch) {
          /* more are due */
        }
      }
      if (this.stopped || (await this.store.fault('callbacks')) === 'down') return;
      // Attempts run in the background (a slow receiver does not hold the others back), up to
      // `maxInFlight` at a time; the lease keeps another tick or instance from taking them.
      for (;;) {
        const room = Math.min(batch, this.maxInFlight - this.inFlight.size);
        if (room <= 0 || this.stopped) break;
        const claimed = await this.store.claimDueCallbacks(room, this.leaseMs);
        for (const c of claimed) void this.track(this.attempt(c));
        if (claimed.length < room) break;
      }
    } catch (err) {
      // While Postgres is away every tick fails: say so once in a while, not every poll.
      if (Date.now() - this.lastTickError > 10_000) this.log.error({ err }, 'scheduler tick failed');
      this.lastTickError = Date.now();
    }
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch(() => undefined);
    return p;
  }

  /** Sends one claimed callback and records the result. */
  private async attempt(c: CallbackRow): Promise<AttemptResult> {
    const result = await this.post(c);
    const log = { eventId: c.eventId, transactionId: c.transactionId, attempt: c.attempts, status: result.status };
    try {
      if (result.delivered) {
        await this.delivered.mark(c, result.status!);
        this.log.info(log, 'callback delivered');
      } else {
        const retryMs = retryDelayMs(c.attempts, this.o.retry);
        await this.store.markFailed(c, result.status, result.error ?? 'failed', retryMs);
        this.log.warn({ ...log, error: result.error, retryMs }, 'callback not delivered; will retry');
      }
    } catch (err) {
      // The lease runs out and the delivery is claimed again: at-least-once, the receiver dedupes.
      this.log.error({ err, ...log }, 'could not record callback attempt');
    }
    return result;
  }

  /**
   * One signed POST with undici's `request` rather than `fetch`: the same pooled keep-alive
   * connections at a fraction of the CPU per call (see the transfer's adapters/http.ts). Like
   * `redirect: 'manual'`, a redirect is not followed: a 3xx is a failed attempt. The time-out
   * covers the body too, and the body is always read to the end so the connection is reused.
   */
  private async post(c: CallbackRow): Promise<AttemptResult> {
    try {
      const res = await request(c.callbackUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signCallback(this.o.secret, c.body, Math.floor(Date.now() / 1000)),
          'user-agent': 'wallet-sandbox/0.1',
        },
        body: c.body,
        signal: AbortSignal.timeout(this.o.timeoutMs),
      });
      await res.body.dump().catch(() => undefined);
      const status = res.statusCode;
      return status >= 200 && status < 300 ? { delivered: true, status } : { delivered: false, status, error: `HTTP ${status}` };
    } catch (err) {
      // fetch wrapped network errors (`cause.code`); undici throws them as they are (`code`). A
      // time-out is a DOMException whose numeric `code` is no error name: its message is kept.
      const e = err as Error & { code?: unknown; cause?: { code?: string; message?: string } };
      return { delivered: false, status: null, error: e.cause?.code ?? (typeof e.code === 'string' ? e.code : undefined) ?? e.cause?.message ?? e.message };
    }
  }

  /**
   * Sends the transaction's callback again with the same eventId: now when callbacks are up
   * (a failure falls back to the retry schedule), else it is queued until they are.
   */
  async redeliver(transactionId: string): Promise<RedeliveryResult> {
    const down = this.stopped || (await this.store.fault('callbacks')) === 'down';
    const r = await this.store.requeueCallback(transactionId, DELIVERY_WINDOW_MS, down ? null : this.leaseMs);
    if (!r) return { outcome: 'not_found' };
    if (!r.requeued) return { outcome: 'queued', callback: r.callback, reason: 'in_flight' };
    if (down) return { outcome: 'queued', callback: r.callback, reason: 'callbacks_down' };
    return { outcome: 'attempted', callback: r.callback, result: await this.track(this.attempt(r.callback)) };
  }
}
