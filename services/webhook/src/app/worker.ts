import { inSagaSpan, outsideTrace, type Logger } from '@wallet/platform';
import { HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, signatureHeader } from '../domain/signature.js';
import type { WorkerDeps } from './deps.js';
import { attemptDuration, attempts, givenUp } from './metrics.js';
import { TargetRefused, type ClaimedDelivery, type DeliveryWaker, type ResolvedAddress } from './ports.js';

export interface WorkerSettings {
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxDelayMs: number;
  pollIntervalMs: number;
  batch: number;
  concurrency: number;
}

/** Exponential backoff with jitter: attempt n (1-based) waits between half and all of min(max, base·2^(n-1)). */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 40));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * Sends due deliveries from Postgres: claims a batch (leased, so another replica or a crash
 * cannot lose one), signs each body with the endpoint's current secret (and the previous one during
 * a rotation overlap), re-checks the target (SSRF; the checked address is the one connected to), POSTs
 * with a time-out, and records the outcome: 2xx → SUCCEEDED; otherwise a retry with backoff, or
 * FAILED past the retry horizon. Woken at once when new deliveries are recorded; polls otherwise.
 */
export class DeliveryWorker implements DeliveryWaker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly s: WorkerSettings,
    private readonly log: Logger,
    private readonly userAgent = 'WalletWebhooks/1.0',
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** New deliveries were (or are about to be) committed: run soon. */
  nudge(delayMs = 25): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(delayMs);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    // Outside any trace: a nudge comes from a consumer's message, and every later poll would be part of it.
    this.timer = setTimeout(
      outsideTrace(() => {
        this.timer = undefined;
        this.running = this.runOnce()
          .catch((err: unknown) => {
            this.log.warn({ err: (err as Error).message }, 'webhook delivery run failed; will retry');
          })
          .finally(() => {
            this.running = undefined;
            const again = this.again;
            this.again = false;
            this.schedule(again ? 0 : this.s.pollIntervalMs);
          });
      }),
      delayMs,
    );
    this.timer.unref();
  }

  /** One pass: expire what is past its horizon, then send due deliveries until a claim finds none. */
  async runOnce(): Promise<void> {
    await this.deps.queue.expireOverdue();
    const leaseSeconds = Math.ceil(this.s.timeoutMs / 1000) + 30;
    while (!this.stopped) {
      const batch = await this.deps.queue.claimDue(this.s.batch, leaseSeconds, await this.deps.floors.current());
      if (batch.length === 0) return;
      const queue = [...batch];
      await Promise.all(
        Array.from({ length: Math.min(this.s.concurrency, queue.length) }, async () => {
          // A span per attempt (the poll that found it records none), found from the event's trace by its id (messaging.message.id there).
          for (let c = queue.shift(); c; c = queue.shift()) {
            const attributes = { 'wallet.webhook_delivery_id': c.id, 'wallet.webhook_event_id': c.eventId, 'wallet.webhook_endpoint_id': c.endpointId };
            await inSagaSpan('webhook deliver', { traceparent: null, attributes }, () => this.attempt(c));
          }
        }),
      );
      // Again, even after a short batch: a delivery that waited behind one just sent (the next event of its
      // resource) is due now, not at the next poll.
    }
  }

  private signingSecrets(c: ClaimedDelivery): string[] {
    const { secrets } = this.deps;
    const out = [secrets.open(c.secretSealed)];
    if (c.previousSecretSealed && c.previousSecretExpiresAt && c.previousSecretExpiresAt.getTime() > this.deps.now().getTime())
      out.push(secrets.open(c.previousSecretSealed));
    return out;
  }

  private async attempt(c: ClaimedDelivery): Promise<void> {
    const attempt = c.attempts + 1;
    const retryInSeconds = retryDelayMs(attempt, this.s.retryBaseMs, this.s.retryMaxDelayMs) / 1000;
    const ctx = { deliveryId: c.id, endpointId: c.endpointId, eventId: c.eventId, attempt };
    let url: URL;
    let pinned: ResolvedAddress;
    try {
      url = this.deps.targets.checkShape(c.url);
      pinned = await this.deps.targets.resolve(url);
    } catch (err) {
      const reason = err instanceof TargetRefused ? `target refused: ${err.reason}` : `target check failed: ${(err as Error).message}`;
      const status = await this.deps.queue.markAttemptFailed(c.id, { responseStatus: null, latencyMs: null, error: reason, retryInSeconds });
      attempts.inc({ outcome: 'target_refused' });
      if (status === 'FAILED') givenUp.inc();
      this.log.warn({ ...ctx, status, reason }, 'webhook target refused at delivery');
      return;
    }
    const timestamp = Math.floor(this.deps.now().getTime() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': this.userAgent,
      [HEADER_ID]: c.eventId,
      [HEADER_TIMESTAMP]: String(timestamp),
      [HEADER_SIGNATURE]: signatureHeader(this.signingSecrets(c), c.eventId, timestamp, c.body),
    };
    const started = performance.now();
    try {
      const r = await this.deps.sender.post(url, pinned, headers, c.body, this.s.timeoutMs);
      const latencyMs = Math.round(performance.now() - started);
      attemptDuration.observe(latencyMs / 1000);
      if (r.status >= 200 && r.status < 300) {
        await this.deps.queue.markSucceeded(c.id, r.status, latencyMs);
        attempts.inc({ outcome: 'success' });
        this.log.debug({ ...ctx, responseStatus: r.status, latencyMs }, 'webhook delivered');
      } else {
        const status = await this.deps.queue.markAttemptFailed(c.id, { responseStatus: r.status, latencyMs, error: `HTTP ${r.status}`, retryInSeconds });
        attempts.inc({ outcome: 'http_error' });
        if (status === 'FAILED') givenUp.inc();
        this.log.info({ ...ctx, responseStatus: r.status, latencyMs, status }, 'webhook attempt refused by the receiver');
      }
    } catch (err) {
      const latencyMs = Math.round(performance.now() - started);
      attemptDuration.observe(latencyMs / 1000);
      const status = await this.deps.queue.markAttemptFailed(c.id, { responseStatus: null, latencyMs, error: (err as Error).message, retryInSeconds });
      attempts.inc({ outcome: 'network_error' });
      if (status === 'FAILED') givenUp.inc();
      this.log.info({ ...ctx, err: (err as Error).message, latencyMs, status }, 'webhook attempt failed');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
