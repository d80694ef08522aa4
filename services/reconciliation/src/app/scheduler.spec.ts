import { createLogger } from '@wallet/platform';
import { cronTriggers } from '../compose.js';
import { previousBogotaDay } from './scheduler.js';

describe('scheduler', () => {
  it('the previous day is the Bogotá one (UTC-5) at the edges', () => {
    expect(previousBogotaDay(new Date('2025-03-15T11:00:00.000Z'))).toBe('2025-03-14'); // 06:00 Bogotá
    expect(previousBogotaDay(new Date('2025-03-15T04:59:59.999Z'))).toBe('2025-03-13'); // still the 14th in Bogotá
    expect(previousBogotaDay(new Date('2025-03-15T05:00:00.000Z'))).toBe('2025-03-14');
    expect(previousBogotaDay(new Date('2025-03-01T12:00:00.000Z'))).toBe('2025-02-28');
    expect(previousBogotaDay(new Date('2024-03-01T12:00:00.000Z'))).toBe('2024-02-29');
    expect(previousBogotaDay(new Date('2026-01-01T04:00:00.000Z'))).toBe('2025-12-30');
  });

  it('croner triggers fire in the given time zone (its next run of "0 6 * * *" in Bogotá is 11:00Z) and stop', () => {
    const t = cronTriggers('breb', '0 6 * * *', 'America/Bogota', () => undefined) as unknown as { nextRun(d?: Date): Date | null; stop(): void };
    expect(t.nextRun(new Date('2025-03-15T10:00:00.000Z'))?.toISOString()).toBe('2025-03-15T11:00:00.000Z');
    expect(t.nextRun(new Date('2025-03-15T11:00:00.000Z'))?.toISOString()).toBe('2025-03-16T11:00:00.000Z');
    t.stop();
    expect(t.nextRun()).toBeNull();
    void createLogger;
  });

  it('a short cron fires its callback (a per-second pattern, awaited, not slept on)', async () => {
    let fire!: () => void;
    const fired = new Promise<void>((r) => {
      fire = r;
    });
    const t = cronTriggers('ach', '* * * * * *', 'America/Bogota', () => fire());
    await fired;
    t.stop();
  });
});

describe("a FAILED run's detail", () => {
  it("keeps our own failures' messages and only the name and code of anything else", async () => {
    const { failureDetail } = await import('./reconcile-day.js');
    const own = Object.assign(new Error('cannot reach the provider: ECONNREFUSED'), { name: 'ReportFetchError' });
    expect(failureDetail(own)).toBe('ReportFetchError: cannot reach the provider: ECONNREFUSED');
    const grpc = Object.assign(new Error('14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 10.0.3.7:50052'), { code: 14 });
    expect(failureDetail(grpc)).toBe("Error (14): the run failed unexpectedly; see the service's log for this run");
    expect(failureDetail(grpc)).not.toContain('10.0.3.7');
  });
});
