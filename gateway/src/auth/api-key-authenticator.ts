import { timingSafeEqual } from 'node:crypto';
import { AppError, type Database, type Logger, type Watch } from '@wallet/platform';
import type { ApiKeyStore, Scope } from '../persistence/api-key.store.js';
import type { CompanyStatus, TaxRegime } from '../persistence/company.store.js';
import type { Queryable } from '../persistence/sql.js';
import { hashApiKey, isWellFormedApiKey } from './api-key-format.js';

/** The authenticated caller of a client route. */
export interface ApiKeyPrincipal {
  keyId: string;
  companyId: string;
  scope: Scope;
  companyStatus: CompanyStatus;
  taxRegime: TaxRegime;
  rateLimitMultiplier: number;
  /** The company profile the services need, signed into the caller context (http/context.ts profileOf): transfer's AML, fees and limits; deposits', collect keys' and receipts' name, NIT and tax regime. */
  companyName: string;
  nit: string;
  multiSigThreshold: number;
  counterpartyDailyLimitCents: bigint;
  counterpartyMonthlyLimitCents: bigint;
  /** The API version the key is pinned to (http/api-versions.ts): what applies when a request names none. */
  apiVersion: string;
}

interface CacheEntry {
  /** undefined: no such key (negative entry). */
  principal: ApiKeyPrincipal | undefined;
  revoked: boolean;
  keyHash: string;
  expiresAt: number;
}

export interface ApiKeyAuthenticatorOptions {
  pepper: string;
  prefix: 'wk_test_' | 'wk_live_';
  /** 0 disables the cache. Kept ≤ 5 s (config) because it bounds revocation latency on other replicas. */
  cacheTtlMs: number;
  /** last_used_at is written at most this often per key. */
  touchIntervalMs?: number;
  maxCacheEntries?: number;
}

/**
 * Validates client API keys: shape check, HMAC lookup by the unique hash index, constant-time
 * comparison of the stored hash, then the key and company state.
 *
 * Validated keys (and unknown hashes) are cached in memory so the hot path does not touch Postgres
 * on every request. Revoking a key, suspending a company or changing anything the principal carries
 * clears the affected entries on this replica at once, and on every replica through the change feed
 * (`watchChanges`: database triggers notify `gateway_auth` at commit, whoever writes). While the feed
 * is up an entry lives FEED_CACHE_TTL_MS; while it is down (and after it comes back) the cache is
 * emptied and entries live `cacheTtlMs` (≤ 5 s), the revocation latency without the feed. The cache
 * is keyed by the HMAC, never by the key itself.
 */
/** How long an entry lives while the change feed is up (every change to a key or company reaches every replica at once). */
export const FEED_CACHE_TTL_MS = 5 * 60_000;
const AUTH_CHANNEL = 'gateway_auth';

export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();
  /** The change feed (LISTEN gateway_auth), kept up by the platform. */
  private feed: Watch | undefined;
  private stopped = false;
  private readonly inflight = new Map<string, Promise<CacheEntry>>();
  private readonly lastTouch = new Map<string, number>();
  private readonly pendingTouches = new Set<Promise<void>>();
  private readonly touchIntervalMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly db: Queryable,
    private readonly keys: ApiKeyStore,
    private readonly opts: ApiKeyAuthenticatorOptions,
    private readonly log: Logger,
  ) {
    this.touchIntervalMs = opts.touchIntervalMs ?? 60_000;
    this.maxEntries = opts.maxCacheEntries ?? 50_000;
  }

  async authenticate(token: string): Promise<ApiKeyPrincipal> {
    if (!isWellFormedApiKey(token, this.opts.prefix)) throw new AppError('INVALID_API_KEY');
    const hash = hashApiKey(this.opts.pepper, token);
    const now = Date.now();
    let entry = this.cache.get(hash);
    if (!entry || entry.expiresAt <= now) entry = await this.load(hash);
    // The lookup was by hash; compare again in constant time so no code path branches on a partial match.
    const a = Buffer.from(entry.keyHash, 'hex');
    const b = Buffer.from(hash, 'hex');
    if (!entry.principal || entry.revoked || a.length !== b.length || !timingSafeEqual(a, b)) {
      throw new AppError('INVALID_API_KEY');
    }
    if (entry.principal.companyStatus !== 'ACTIVE') throw new AppError('COMPANY_INACTIVE');
    this.touch(entry.principal.keyId, now);
    return entry.principal;
  }

  /** Forget a key on this replica (revocation takes effect at once here). */
  invalidateKey(keyId: string): void {
    for (const [hash, e] of this.cache) if (e.principal?.keyId === keyId) this.cache.delete(hash);
  }

  /** Forget every key of a company (status, tax regime or multiplier changed). */
  invalidateCompany(companyId: string): void {
    for (const [hash, e] of this.cache) if (e.principal?.companyId === companyId) this.cache.delete(hash);
  }

  /** Waits for queued last_used_at writes and stops the change feed (shutdown). */
  async flush(): Promise<void> {
    this.stopped = true;
    this.feed?.stop();
    await Promise.allSettled([...this.pendingTouches]);
  }

  /** Starts the change feed (it reconnects by itself); until it is up, entries live `cacheTtlMs`. */
  async watchChanges(db: Pick<Database, 'watch'>): Promise<void> {
    const feed = await db.watch(AUTH_CHANNEL, {
      onMessage: (payload) => this.onChange(payload),
      // Entries cached before the feed was up may predate a change it will never tell: start afresh.
      onUp: () => this.cache.clear(),
      // Changes may be missed from here on: forget everything, and live short until it is back.
      onDown: (err) => {
        this.cache.clear();
        this.log.warn({ err: err.message }, 'API key change feed down; cached keys live the short TTL until it is back');
      },
    });
    if (this.stopped) feed.stop();
    else this.feed = feed;
  }

  private onChange(payload: string): void {
    let change: { keyId?: string; keyHash?: string; companyId?: string };
    try {
      change = JSON.parse(payload) as typeof change;
    } catch {
      this.cache.clear();
      return;
    }
    if (change.keyHash) this.cache.delete(change.keyHash);
    if (change.keyId) this.invalidateKey(change.keyId);
    if (change.companyId) this.invalidateCompany(change.companyId);
  }

  /** How long a new entry lives: long while the change feed is up, `cacheTtlMs` otherwise (0: no cache). */
  private ttlMs(): number {
    return this.opts.cacheTtlMs > 0 && this.feed?.up ? Math.max(this.opts.cacheTtlMs, FEED_CACHE_TTL_MS) : this.opts.cacheTtlMs;
  }

  private load(hash: string): Promise<CacheEntry> {
    let p = this.inflight.get(hash);
    if (!p) {
      p = this.keys
        .findPrincipalByHash(this.db, hash)
        .then((row) => {
          const entry: CacheEntry = row
            ? {
                principal: {
                  keyId: row.keyId,
                  companyId: row.companyId,
                  scope: row.scope,
                  companyStatus: row.companyStatus,
                  taxRegime: row.taxRegime,
                  rateLimitMultiplier: row.rateLimitMultiplier,
                  companyName: row.companyName,
                  nit: row.nit,
                  multiSigThreshold: row.multiSigThreshold,
                  counterpartyDailyLimitCents: row.counterpartyDailyLimitCents,
                  counterpartyMonthlyLimitCents: row.counterpartyMonthlyLimitCents,
                  apiVersion: row.apiVersion,
                },
                revoked: row.revoked,
                keyHash: row.keyHash,
                expiresAt: Date.now() + this.ttlMs(),
              }
            : { principal: undefined, revoked: false, keyHash: hash, expiresAt: Date.now() + this.ttlMs() };
          if (this.opts.cacheTtlMs > 0) {
            // Bounded: a flood of random keys can only churn the cache, never grow it without limit.
            if (this.cache.size >= this.maxEntries) this.evictExpiredOrAll();
            this.cache.set(hash, entry);
          }
          return entry;
        })
        .finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, p);
    }
    return p;
  }

  private evictExpiredOrAll(): void {
    const now = Date.now();
    for (const [hash, e] of this.cache) if (e.expiresAt <= now) this.cache.delete(hash);
    if (this.cache.size >= this.maxEntries) this.cache.clear();
  }

  /** last_used_at, at most once per interval per key, off the request's critical path. */
  private touch(keyId: string, now: number): void {
    const last = this.lastTouch.get(keyId);
    if (last !== undefined && now - last < this.touchIntervalMs) return;
    this.lastTouch.set(keyId, now);
    if (this.lastTouch.size > this.maxEntries) this.lastTouch.clear();
    const p = this.keys
      .touchLastUsed(this.db, keyId, Math.floor(this.touchIntervalMs / 1000))
      .catch((err: unknown) => {
        this.log.warn({ err: (err as Error).message, apiKeyId: keyId }, 'could not record API key use');
      })
      .finally(() => this.pendingTouches.delete(p));
    this.pendingTouches.add(p);
  }
}
