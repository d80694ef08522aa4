import { readFileSync } from 'node:fs';

/** The scheduler's time: every "now" of schedules and runs is read here. */
export interface SchedulerClock {
  now(): Date;
}

export const systemClock: SchedulerClock = { now: () => new Date() };

/**
 * Development and tests only (config refuses it in production): now is the instant written in
 * `file` (RFC 3339), read at each call, so a test moves the time of every replica by writing one
 * file; an absent or empty file is the real time.
 */
export function fileClock(file: string): SchedulerClock {
  return {
    now: () => {
      let text: string;
      try {
        text = readFileSync(file, 'utf8').trim();
      } catch {
        return new Date();
      }
      if (!text) return new Date();
      const t = Date.parse(text);
      if (Number.isNaN(t)) throw new Error(`test clock ${file}: not an instant`);
      return new Date(t);
    },
  };
}
