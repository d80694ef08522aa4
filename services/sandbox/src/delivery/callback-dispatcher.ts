import { outsideTrace, type Logger } from '@wallet/platform';
import { request } from 'undici';
import {
  BULK_NOT_ACCEPTED,
  BULK_OUTCOMES_MAX,
  DELIVERY_WINDOW_MS,
  SIGNATURE_HEADER,
  bulkOutcomesBody,
  isTransferOutcomeBody,
  retryDelayMs,
  signCallback,
  type RetryPolicy,
} from '../domain/callbacks.js';
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
  /**
   * HTTP requests in flight at most (per instance). A bulk request is one, however many outcomes it
   * carries: what this bounds is the load on receivers and the sockets held open.
   */
  maxInFlight?: number;
  /**
   * Bulk outcome callbacks (SANDBOX_BULK_CALLBACKS, docs/sandbox.md "Bulk outcomes"): the rail transfer
   * outcomes claimed together for one callback URL go as one `rail.outcomes` request.
   */
  bulkOutcomes?: boolean;
}

/**
 * How long a receiver that refused the bulk form (BULK_NOT_ACCEPTED) is sent singles only, without
 * asking again: it is asked again after this, in case it has learnt the bulk form meanwhile.
 */
const BULK_REFUSED_MEMORY_MS = 10 * 60_000;

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
 * several instances can run and a restart loses nothing. With `bulkOutcomes` the rail transfer
 * outcomes due together for one URL go as one request (sendGrouped); redelivery is always single.
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
  /** Callback URLs whose receiver refused the bulk form, until when they get singles only (this instance). */
  private readonly bulkRefused = new Map<string, number>();

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
      // `maxInFlight` requests at a time; the lease keeps another tick or instance from taking them.
      // A claim takes no more callbacks than there are free requests, so it starts at most that
      // many requests even when each goes alone; in bulk mode it may start fewer (see sendGrouped).
      for (;;) {
        const room = Math.min(batch, this.maxInFlight - this.inFlight.size);
        if (room <= 0 || this.stopped) break;
        const claimed = await this.store.claimDueCallbacks(room, this.leaseMs);
        if (this.o.bulkOutcomes) await this.sendGrouped(claimed, claimed.length === room);
        else for (const c of claimed) void this.track(this.attempt(c));
        if (claimed.length < room) break;
      }
    } catch (err) {
      // While Postgres is away every tick fails: say so once in a while, not every poll.
      if (Date.now() - this.lastTickError > 10_000) this.log.error({ err }, 'scheduler tick failed');
      this.lastTickError = Date.now();
    }
  }

  /**
   * Bulk mode: the claimed rail transfer outcomes are grouped by callback URL (one URL, one rail's
   * receiver) and each group of 2 or more goes as one request of at most BULK_OUTCOMES_MAX; a group of
   * one, every other kind of callback (ACH prenotes, PSE, inbound payments) and every callback to a
   * receiver that refused the bulk form go alone, as without bulk mode.
   *
   * When the claim was full (`more`: more may be due), a group is filled up to BULK_OUTCOMES_MAX with
   * its URL's other due outcomes: that adds outcomes to a request already counted, not requests, so
   * `maxInFlight` still holds while a request may carry more outcomes than one claim takes (`batch`).
   * Each claimed callback keeps its own lease and is recorded on its own (claimed, then one attempt
   * within the time-out, then delivered, failed or released), exactly as a single one.
   */
  private async sendGrouped(claimed: readonly CallbackRow[], more: boolean): Promise<void> {
    const groups = new Map<string, CallbackRow[]>();
    for (const c of claimed) {
      if (!this.bulkAccepted(c.callbackUrl) || !isTransferOutcomeBody(c.body)) {
        void this.track(this.attempt(c));
        continue;
      }
      const group = groups.get(c.callbackUrl);
      if (group) group.push(c);
      else groups.set(c.callbackUrl, [c]);
    }
    for (const [url, rows] of groups) {
      if (more && rows.length < BULK_OUTCOMES_MAX && !this.stopped) {
        try {
          for (const c of await this.store.claimDueTransferOutcomes(url, BULK_OUTCOMES_MAX - rows.length, this.leaseMs)) {
            // The claim picks outcomes by their transfer row; a body that is none (not expected: a PSE
            // deposit id equal to a transaction id, at the same URL) goes alone, one request over the room.
            if (isTransferOutcomeBody(c.body)) rows.push(c);
            else void this.track(this.attempt(c));
          }
        } catch (err) {
          this.log.warn({ err }, 'could not claim more outcomes for a bulk callback; sending those claimed');
        }
      }
      for (let i = 0; i < rows.length; i += BULK_OUTCOMES_MAX) {
        const chunk = rows.slice(i, i + BULK_OUTCOMES_MAX);
        if (chunk.length === 1) void this.track(this.attempt(chunk[0]!));
        else void this.track(this.attemptBulk(url, chunk));
      }
    }
  }

  /**
   * Sends claimed outcomes as one signed `rail.outcomes` request and records the result for each:
   * a 2xx delivers them all; a refusal of the bulk form (BULK_NOT_ACCEPTED) gives them back, due now,
   * to go one by one (the URL is remembered, so the claim that takes them again sends them alone);
   * any other failure is a failed attempt of each, retried on its own schedule (the next attempt may
   * group them again).
   */
  private async attemptBulk(url: string, rows: readonly CallbackRow[]): Promise<void> {
    const result = await this.post(url, bulkOutcomesBody(rows.map((c) => c.body)));
    const log = { outcomes: rows.length, status: result.status };
    try {
      if (result.delivered) {
        await Promise.all(rows.map((c) => this.delivered.mark(c, result.status!)));
        this.log.info(log, 'bulk callback delivered');
      } else if (result.status !== null && BULK_NOT_ACCEPTED.has(result.status)) {
        this.refuseBulk(url, result.status, rows.length);
        await this.store.releaseCallbacks(rows, result.status, `HTTP ${result.status} to the bulk form; sent one by one`);
        this.wake();
      } else {
        const fails = rows.map((c) => ({ eventId: c.eventId, attempts: c.attempts, retryMs: retryDelayMs(c.attempts, this.o.retry) }));
        await this.store.markFailedMany(fails, result.status, result.error ?? 'failed');
        this.log.warn({ ...log, error: result.error }, 'bulk callback not delivered; each outcome will retry');
      }
    } catch (err) {
      // As for a single callback: the leases run out and the outcomes are claimed again.
      this.log.error({ err, ...log }, 'could not record bulk callback attempt');
    }
  }

  /** Whether outcomes for this URL may go in bulk (its receiver has not refused the bulk form lately). */
  private bulkAccepted(url: string): boolean {
    const until = this.bulkRefused.get(url);
    if (until === undefined) return true;
    if (Date.now() < until) return false;
    this.bulkRefused.delete(url);
    return true;
  }

  /** Remembers a receiver that refused the bulk form, and says so once (not per request, never the secret). */
  private refuseBulk(url: string, status: number, outcomes: number): void {
    if (!this.bulkAccepted(url)) return; // another request to it was refused just before: already said
    if (this.bulkRefused.size >= 1_000) {
      const now = Date.now();
      for (const [u, until] of this.bulkRefused) if (until <= now) this.bulkRefused.delete(u);
    }
    this.bulkRefused.set(url, Date.now() + BULK_REFUSED_MEMORY_MS);
    this.log.warn({ receiver: receiverName(url), status, outcomes }, 'receiver does not take bulk outcome callbacks; sending them one by one');
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch(() => undefined);
    return p;
  }

  /** Sends one claimed callback and records the result. */
  private async attempt(c: CallbackRow): Promise<AttemptResult> {
    const result = await this.post(c.callbackUrl, c.body);
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
  private async post(url: string, body: string): Promise<AttemptResult> {
    try {
      const res = await request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signCallback(this.o.secret, body, Math.floor(Date.now() / 1000)),
          'user-agent': 'wallet-sandbox/0.1',
        },
        body,
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

/** A callback URL fit for a log line: scheme, host and path (no credentials, no query). */
function receiverName(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}
