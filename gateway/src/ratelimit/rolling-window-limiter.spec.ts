import { RateLimiterRes } from 'rate-limiter-flexible';
import { SlidingLogMemoryLimiter } from './rolling-window-limiter.js';
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
