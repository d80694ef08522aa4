import { RateLimiterRes } from 'rate-limiter-flexible';
import { RollingWindowLimiter, SlidingLogMemoryLimiter } from './rolling-window-limiter.js';
import { effectiveLimit } from '../http/rate-limit.js';

describe('SlidingLogMemoryLimiter (the in-memory insurance)', () => {
  it('allows `points` per rolling window, rejects without recording, and frees slots as they age out', async () => {
    let now = 1_000_000;
    const store = new Map<string, number[]>();
    const l = new SlidingLogMemoryLimiter({ keyPrefix: 'p', points: 3, duration: 60 }, store, () => now);
    const r1 = await l.consume('ip');
    expect(r1.remainingPoints).toBe(2);
    now = 1_030_000;
    await l.consume('ip');
    await l.consume('ip');
    const rejected = await l.consume('ip').catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(RateLimiterRes);
    expect((rejected as RateLimiterRes).remainingPoints).toBe(0);
    // The oldest request (t=1_000_000) leaves the window at t=1_060_000.
    expect((rejected as RateLimiterRes).msBeforeNext).toBe(30_000);
    // Rejections are not recorded: still exactly 3 entries.
    expect(store.get('p:ip')).toHaveLength(3);
    now = 1_060_001;
    const again = await l.consume('ip');
    expect(again.remainingPoints).toBe(0);
    await expect(l.consume('ip')).rejects.toBeInstanceOf(RateLimiterRes);
  });

  it('keeps keys apart', async () => {
    const l = new SlidingLogMemoryLimiter({ keyPrefix: 'p', points: 1, duration: 60 }, new Map());
    await l.consume('a');
    await expect(l.consume('b')).resolves.toBeInstanceOf(RateLimiterRes);
    await expect(l.consume('a')).rejects.toBeInstanceOf(RateLimiterRes);
  });
});

describe('effectiveLimit', () => {
  it('multiplies the class limit by the company multiplier, at least 1', () => {
    expect(effectiveLimit(100, undefined)).toBe(100);
    expect(effectiveLimit(100, 1)).toBe(100);
    expect(effectiveLimit(10, 2.5)).toBe(25);
    expect(effectiveLimit(5, 0.1)).toBe(1);
    expect(effectiveLimit(5, Number.NaN)).toBe(5);
  });
});

describe('RollingWindowLimiter.consumeAll (several counters, one decision)', () => {
  const fakeRedis = (overrides: Record<string, unknown>) => ({ status: 'ready', ...overrides }) as unknown as import('ioredis').Redis;

  it('sends the script once by EVAL when Redis does not know it (NOSCRIPT), by EVALSHA otherwise', async () => {
    const calls: string[] = [];
    let known = false;
    const redis = fakeRedis({
      evalsha: async () => {
        calls.push('evalsha');
        if (!known) throw new Error('NOSCRIPT No matching script.');
        return [1, 1, 60_000, 1, 60_000];
      },
      eval: async () => {
        calls.push('eval');
        known = true;
        return [1, 1, 60_000, 1, 60_000];
      },
    });
    const l = new RollingWindowLimiter(redis, { prefix: 'p', windowSeconds: 60 });
    const first = await l.consumeAll('READS', [
      { key: '198.51.100.1', limit: 3 },
      { key: 'key:k1', limit: 3 },
    ]);
    await l.consumeAll('READS', [
      { key: '198.51.100.1', limit: 3 },
      { key: 'key:k1', limit: 3 },
    ]);
    l.close();
    expect(calls).toEqual(['evalsha', 'eval', 'evalsha']);
    expect(first).toEqual({
      allowed: true,
      counters: [
        { allowed: true, limit: 3, remaining: 2, resetSeconds: 60 },
        { allowed: true, limit: 3, remaining: 2, resetSeconds: 60 },
      ],
    });
  });

  it('Redis down: in memory, a request refused by one counter is recorded in none', async () => {
    const l = new RollingWindowLimiter(fakeRedis({ status: 'reconnecting' }), { prefix: 'p', windowSeconds: 60 });
    const ip = (n: number) => ({ key: `198.51.100.${n}`, limit: 5 });
    const key = { key: 'key:k1', limit: 2 };
    expect((await l.consumeAll('READS', [ip(1), key])).allowed).toBe(true);
    expect((await l.consumeAll('READS', [ip(2), key])).allowed).toBe(true);
    const refused = await l.consumeAll('READS', [ip(3), key]);
    expect(refused.allowed).toBe(false);
    expect(refused.counters.map((c) => c.allowed)).toEqual([true, false]);
    // IP 3 was not charged for the refusal: another key from it has all 5 but this one.
    const other = await l.consumeAll('READS', [ip(3), { key: 'key:k2', limit: 2 }]);
    expect(other.counters[0]).toMatchObject({ allowed: true, remaining: 4 });
    l.close();
  });
});
