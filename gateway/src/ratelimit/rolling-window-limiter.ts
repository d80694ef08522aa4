import { createHash } from 'node:crypto';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';

/**
 * A rolling (sliding-log) window on Redis, run through rate-limiter-flexible.
 *
 * rate-limiter-flexible's own Redis script is a fixed window (INCR + EXPIRE), which lets a client
 * send 2× the limit across a window boundary. The reference asks for a rolling one-minute window,
 * so we hand RateLimiterRedis our own script (its `customIncrTtlLuaScript` hook, called with
 * KEYS[1] = key, ARGV = [points, windowSeconds, limit, duration]). The script keeps one sorted-set
 * entry per *accepted* request, scored by the Redis server's clock:
 *
 *  1. drop entries older than the window;
 *  2. if fewer than `limit` remain, record this request (a rejected request records nothing, so a
 *     429 consumes no quota);
 *  3. return {count including this request, ms until the oldest entry leaves the window}.
 *
 * The library rejects when the count exceeds the limit. It is one atomic EVALSHA per request (one
 * round trip), exact (no approximation), and memory is bounded by the limit per key.
 *
 * If Redis is unreachable the library falls back to the `insuranceLimiter`: the same sliding log,
 * kept in this process's memory (per replica, so the effective limit is per replica while Redis is
 * down — limiting continues, it does not fail open; /readyz reports not-ready meanwhile).
 */
export const SLIDING_LOG_LUA = `
local key = KEYS[1]
local windowMs = tonumber(ARGV[2]) * 1000
local limit = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
local count = redis.call('ZCARD', key)
if count < limit then
  redis.call('ZADD', key, now, t[1] .. '.' .. t[2] .. '.' .. count)
  redis.call('PEXPIRE', key, windowMs)
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local ttl = windowMs
if oldest[2] then ttl = tonumber(oldest[2]) + windowMs - now end
if ttl < 1 then ttl = 1 end
return {count + 1, ttl}
`;

/**
 * The same sliding log over several counters at once (e.g. the client IP and the API key of one
 * request), atomically: each counter drops its old entries; the request is recorded in every one
 * only if every one has room, so a request refused by one counter consumes no quota in the others
 * (a 429 consumes no quota). KEYS = the counters; ARGV = [windowSeconds, limit of KEYS[1], limit of
 * KEYS[2], …]. Returns {allowed (1/0), count including this request of KEYS[1], ms until a slot of
 * KEYS[1] frees, …}. One EVAL: on a Redis Cluster the keys would have to share a slot (we run one
 * Redis, or a primary with replicas).
 */
export const SLIDING_LOG_MULTI_LUA = `
local windowMs = tonumber(ARGV[1]) * 1000
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local counts = {}
local allowed = 1
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
  counts[i] = redis.call('ZCARD', key)
  if counts[i] >= tonumber(ARGV[i + 1]) then allowed = 0 end
end
local out = {allowed}
for i, key in ipairs(KEYS) do
  if allowed == 1 then
    redis.call('ZADD', key, now, t[1] .. '.' .. t[2] .. '.' .. counts[i])
    redis.call('PEXPIRE', key, windowMs)
  end
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  local ttl = windowMs
  if oldest[2] then ttl = tonumber(oldest[2]) + windowMs - now end
  if ttl < 1 then ttl = 1 end
  out[#out + 1] = counts[i] + 1
  out[#out + 1] = ttl
end
return out
`;

const MULTI_SHA = createHash('sha1').update(SLIDING_LOG_MULTI_LUA).digest('hex');

type Log = number[];

/**
 * The in-memory insurance: the same sliding log as the Lua script, per process. It is a
 * RateLimiterMemory (so the library accepts it as insurance) whose consume we replace with the
 * rolling window; logs of all limits share one store so a key's count survives a multiplier change.
 */
export class SlidingLogMemoryLimiter extends RateLimiterMemory {
  constructor(
    opts: { keyPrefix: string; points: number; duration: number },
    private readonly store: Map<string, Log>,
    private readonly now: () => number = Date.now,
  ) {
    super(opts);
  }

  override consume(key: string | number, pointsToConsume = 1): Promise<RateLimiterRes> {
    const rlKey = this.getKey(key);
    const now = this.now();
    const windowMs = this.duration * 1000;
    const log = this.store.get(rlKey) ?? [];
    while (log.length > 0 && log[0]! <= now - windowMs) log.shift();
    const count = log.length;
    const allowed = count + pointsToConsume <= this.points;
    if (allowed) for (let i = 0; i < pointsToConsume; i++) log.push(now);
    if (log.length > 0) this.store.set(rlKey, log);
    else this.store.delete(rlKey);
    const oldest = log[0] ?? now;
    const consumed = count + pointsToConsume;
    const res = new RateLimiterRes(Math.max(this.points - consumed, 0), Math.max(oldest + windowMs - now, 1), consumed, count === 0);
    return allowed ? Promise.resolve(res) : Promise.reject(res);
  }
}

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Seconds until the oldest counted request leaves the window (a slot frees). */
  resetSeconds: number;
}

/** One counter of a request: whom it counts (`key`, e.g. an IP or `key:<apiKeyId>`) and its limit. */
export interface Counted {
  key: string;
  limit: number;
}

/** The decision over several counters: allowed only if each had room; `counters` in the order given. */
export interface MultiDecision {
  allowed: boolean;
  counters: LimitDecision[];
}

export class RollingWindowLimiter {
  private readonly limiters = new Map<string, RateLimiterRedis>();
  private readonly memoryStore = new Map<string, Log>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly opts: { prefix: string; windowSeconds: number },
  ) {
    // Drop stale in-memory logs (they are only written while Redis is down).
    this.sweeper = setInterval(() => this.sweep(), Math.max(opts.windowSeconds, 5) * 1000);
    this.sweeper.unref();
  }

  /** Counts one request of `clientKey` in `bucket` against `limit`; never throws for an over-limit request. */
  async consume(bucket: string, clientKey: string, limit: number): Promise<LimitDecision> {
    const limiter = this.limiterFor(bucket, limit);
    let res: RateLimiterRes;
    let allowed = true;
    try {
      res = await limiter.consume(clientKey, 1);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      res = err;
      allowed = false;
    }
    return {
      allowed,
      limit,
      remaining: Math.max(limit - res.consumedPoints, 0),
      resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    };
  }

  /**
   * Counts one request in `bucket` against every counter at once (SLIDING_LOG_MULTI_LUA): recorded
   * in all of them, or (one is full) in none. Redis down: the same in this process's memory.
   */
  async consumeAll(bucket: string, counted: readonly Counted[]): Promise<MultiDecision> {
    const keys = counted.map((c) => this.storeKey(bucket, c.key));
    let raw: number[] | undefined;
    if (this.redis.status === 'ready') {
      try {
        const args = [...keys, String(this.opts.windowSeconds), ...counted.map((c) => String(c.limit))];
        // EVALSHA (the script's text once per Redis, not per request); EVAL when Redis does not know it yet.
        raw = (await this.redis.evalsha(MULTI_SHA, keys.length, ...args).catch((err: Error) => {
          if (!/NOSCRIPT/.test(err.message)) throw err;
          return this.redis.eval(SLIDING_LOG_MULTI_LUA, keys.length, ...args);
        })) as number[];
      } catch {
        raw = undefined; // as rate-limiter-flexible's insurance: keep limiting in memory
      }
    }
    raw ??= this.consumeAllInMemory(
      keys,
      counted.map((c) => c.limit),
    );
    const allowed = Number(raw[0]) === 1;
    return {
      allowed,
      counters: counted.map((c, i) => {
        const count = Number(raw[1 + 2 * i]);
        const ms = Number(raw[2 + 2 * i]);
        // Per counter, `allowed`: it had room (the request is recorded only if every counter had).
        return { allowed: count <= c.limit, limit: c.limit, remaining: Math.max(c.limit - count, 0), resetSeconds: Math.max(1, Math.ceil(ms / 1000)) };
      }),
    };
  }

  /** The key rate-limiter-flexible gives the counter of `clientKey` in `bucket` (so both paths share counters). */
  private storeKey(bucket: string, clientKey: string): string {
    return `${this.opts.prefix}:${bucket}:${clientKey}`;
  }

  private consumeAllInMemory(keys: string[], limits: number[], now = Date.now()): number[] {
    const windowMs = this.opts.windowSeconds * 1000;
    const logs = keys.map((k) => {
      const log = this.memoryStore.get(k) ?? [];
      while (log.length > 0 && log[0]! <= now - windowMs) log.shift();
      return log;
    });
    const counts = logs.map((l) => l.length);
    const allowed = counts.every((n, i) => n < limits[i]!);
    const out = [allowed ? 1 : 0];
    logs.forEach((log, i) => {
      if (allowed) log.push(now);
      if (log.length > 0) this.memoryStore.set(keys[i]!, log);
      else this.memoryStore.delete(keys[i]!);
      out.push(counts[i]! + 1, Math.max((log[0] ?? now) + windowMs - now, 1));
    });
    return out;
  }

  private limiterFor(bucket: string, limit: number): RateLimiterRedis {
    const id = `${bucket}|${limit}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const keyPrefix = `${this.opts.prefix}:${bucket}`;
      limiter = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix,
        points: limit,
        duration: this.opts.windowSeconds,
        customIncrTtlLuaScript: SLIDING_LOG_LUA,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new SlidingLogMemoryLimiter({ keyPrefix, points: limit, duration: this.opts.windowSeconds }, this.memoryStore),
      });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  private sweep(): void {
    const cutoff = Date.now() - this.opts.windowSeconds * 1000;
    for (const [key, log] of this.memoryStore) {
      if (log.length === 0 || log[log.length - 1]! <= cutoff) this.memoryStore.delete(key);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
