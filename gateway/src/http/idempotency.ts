import { isJsonBody, toJsonText } from './json-text.js';
import { randomUUID } from 'node:crypto';
import { AppError, ERRORS, PeriodicTask, SecretBox, type Database, type Logger } from '@wallet/platform';
import { IdempotencyKeyStore, PURGE_BATCH } from '../persistence/idempotency-key.store.js';
import { callContext, type GatewayContext } from './context.js';
import { errorBody } from './errors.js';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  idempotencyRequestHash,
  isStorableAnswer,
  replayableHeaders,
  requestFingerprinter,
  type IdempotentRequest,
} from './idempotency-key.js';
import type { HandlerResult } from './route.js';

export interface IdempotencySettings {
  /** How long an answer is replayed (IDEMPOTENCY_KEY_TTL_SECONDS, default 30 days). */
  ttlSeconds: number;
  /** How long an IN_FLIGHT claim blocks the key before another replica may take it over (crash). */
  lockSeconds?: number;
  /** Seals stored answers (GATEWAY_ENCRYPTION_KEY). */
  encryptionKey: string;
  /** How often expired rows are purged (default 10 min). */
  purgeIntervalMs?: number;
  /** Rows per purge statement (default PURGE_BATCH). */
  purgeBatch?: number;
}

/** Longer than any request can run (send: 20 s gRPC deadline; the HTTP server times out at 30 s). */
export const DEFAULT_LOCK_SECONDS = 60;

/**
 * The `Idempotency-Key` step of idempotent routes (RouteDef `idempotent`), around the handler,
 * after authentication, rate limit and validation:
 * - claim (company, key) with the request hash; a stored answer of the same request is replayed
 *   with `Idempotent-Replayed: true`; another request's stored answer → 409 IDEMPOTENCY_KEY_REUSED;
 *   the same request still running elsewhere → 409 IDEMPOTENCY_KEY_IN_USE;
 * - run the handler; a final answer (2xx, business 4xx) is stored, anything else drops the claim.
 *
 * `bound` routes (`idempotent: 'bound'`, POST /transfers/send) pass the key to a downstream that is
 * idempotent by it (the transfer service binds the key to the transfer it creates), so their
 * outcome is never lost with the claim (docs/decisions.md, unknown outcomes):
 * - an unknown outcome (5xx, 408/429, a transport error or any non-final answer: the downstream may
 *   have acted) marks the claim UNKNOWN instead of dropping it: the key stays bound to this request
 *   (another body → 409 REUSED) and the same request runs again at once, getting from the downstream
 *   what the key already made (a retry never makes a second transfer);
 * - the same request while a claim is IN_FLIGHT runs at once too, taking the claim over, instead of
 *   409 IN_USE until the lock expires: the claim's holder may be a gateway that died (kill -9, OOM),
 *   and the downstream serialises the two by the key anyway (a concurrent duplicate waits there for
 *   the first one's decision and gets the same transfer). The holder that lost the claim cannot
 *   store its answer; both answers describe the same transfer.
 */
export class IdempotencyGuard {
  private readonly repo: IdempotencyKeyStore;
  private readonly lockSeconds: number;
  private readonly purge: PeriodicTask;
  private readonly fingerprint: (requestHash: string) => string;

  constructor(
    db: Database,
    private readonly settings: IdempotencySettings,
    private readonly log: Logger,
  ) {
    this.repo = new IdempotencyKeyStore(db, new SecretBox(settings.encryptionKey));
    this.lockSeconds = settings.lockSeconds ?? DEFAULT_LOCK_SECONDS;
    this.fingerprint = requestFingerprinter(settings.encryptionKey);
    this.purge = new PeriodicTask(
      'idempotency-keys-purge',
      settings.purgeIntervalMs ?? 10 * 60_000,
      // Every replica runs it; the batches skip each other's rows (IdempotencyKeyStore.purgeExpiredBatch).
      () => this.repo.purgeExpired({ batch: settings.purgeBatch ?? PURGE_BATCH, stopping: () => this.purge.stopping }),
      log,
    );
  }

  start(): void {
    this.purge.start();
  }

  async close(): Promise<void> {
    await this.purge.stop();
  }

  async run(
    ctx: GatewayContext,
    key: string,
    req: IdempotentRequest,
    handler: () => Promise<HandlerResult>,
    opts: { bound?: boolean } = {},
  ): Promise<HandlerResult> {
    const bound = opts.bound === true;
    // The authenticated company (API key or dashboard session): keys are per company.
    const companyId = callContext(ctx).companyId;
    if (!companyId) throw new Error(`idempotent route ${req.routeTemplate} has no authenticated company`);
    // Stored as a keyed fingerprint only (see requestFingerprinter).
    const plainHash = idempotencyRequestHash(req);
    const requestHash = this.fingerprint(plainHash);
    const claimId = randomUUID();

    // A claim can lose a race to a row that vanishes before we read it (released by a failed
    // request): try again a couple of times before calling the key busy.
    for (let attempt = 0; ; attempt++) {
      const claimed = await this.repo.claim({
        companyId,
        key,
        method: req.method,
        path: ctx.path,
        requestHash,
        claimId,
        lockSeconds: this.lockSeconds,
        ttlSeconds: this.settings.ttlSeconds,
        ...(bound ? { sameRequestTakeover: { plainHash } } : {}),
      });
      if (claimed) break;
      const existing = await this.repo.findLive(companyId, key);
      if (!existing) {
        if (attempt < 2) continue;
        throw this.inUse(ctx);
      }
      // A claim stored before fingerprints (an unkeyed hash, for at most IDEMPOTENCY_KEY_TTL_SECONDS) still matches.
      if (existing.requestHash !== requestHash && existing.requestHash !== plainHash) throw new AppError('IDEMPOTENCY_KEY_REUSED');
      if (existing.state !== 'DONE') {
        // A bound route takes such a row over; it changed between the two statements: claim again.
        if (bound && attempt < 2) continue;
        throw this.inUse(ctx);
      }
      return {
        status: existing.statusCode!,
        body: existing.responseBody,
        headers: { ...(existing.responseHeaders ?? {}), [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
      };
    }

    let result: HandlerResult;
    try {
      result = await handler();
    } catch (err) {
      if (err instanceof AppError && isStorableAnswer(ERRORS[err.code].http, err.code)) {
        await this.store(companyId, key, claimId, { status: ERRORS[err.code].http, body: errorBody(err), headers: {} }, bound);
      } else {
        await this.unresolved(bound, companyId, key, claimId);
      }
      throw err;
    }
    if (isStorableAnswer(result.status) && isJsonBody(result.body)) {
      await this.store(companyId, key, claimId, { status: result.status, body: result.body, headers: replayableHeaders(result.headers) }, bound);
    } else {
      await this.unresolved(bound, companyId, key, claimId);
    }
    return result;
  }

  /** No final answer: a bound route keeps the key bound to the request (UNKNOWN); any other drops its claim. */
  private async unresolved(bound: boolean, companyId: string, key: string, claimId: string): Promise<void> {
    if (!bound) {
      await this.drop(companyId, key, claimId);
      return;
    }
    try {
      await this.repo.markUnknown(companyId, key, claimId);
    } catch (err) {
      // Left IN_FLIGHT: the same request still takes it over at once, another body is still refused.
      this.log.error({ err: (err as Error).message, companyId }, 'could not mark the idempotency claim unknown');
    }
  }

  private inUse(ctx: GatewayContext): AppError {
    ctx.set('Retry-After', '1');
    return new AppError('IDEMPOTENCY_KEY_IN_USE');
  }

  /**
   * The work is done, so the client gets its answer even if storing it fails; the claim then
   * stays IN_FLIGHT until `locked_until` (retries meanwhile get 409 IN_USE, never a second run; on a
   * bound route they run again and the downstream answers what the key made).
   */
  private async store(
    companyId: string,
    key: string,
    claimId: string,
    answer: { status: number; body: unknown; headers: Record<string, string> },
    bound: boolean,
  ): Promise<void> {
    try {
      const stored = await this.repo.complete(companyId, key, claimId, { status: answer.status, body: toJsonText(answer.body), headers: answer.headers });
      // On a bound route a retry of the same request takes the claim over by design (its answer names the same thing).
      if (!stored && bound)
        this.log.info({ companyId, status: answer.status }, 'idempotency claim taken over by a retry of the same request; its answer is stored by that one');
      else if (!stored) this.log.warn({ companyId, status: answer.status }, 'idempotency claim lost before its answer was stored');
    } catch (err) {
      this.log.error({ err: (err as Error).message, companyId }, 'could not store the idempotent answer');
    }
  }

  private async drop(companyId: string, key: string, claimId: string): Promise<void> {
    try {
      await this.repo.release(companyId, key, claimId);
    } catch (err) {
      this.log.error({ err: (err as Error).message, companyId }, 'could not release the idempotency claim; it expires with its lock');
    }
  }
}
