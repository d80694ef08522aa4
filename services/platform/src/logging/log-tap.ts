import type { DestinationStream } from 'pino';

/**
 * A process-wide copy of log lines, for tests that must see every line of every service running in
 * one process (test/e2e: "no personal data in any log"). Set through `captureLogs` of
 * `@wallet/platform/testing`, never in a service: while it is set, every logger created takes its
 * level and writes there, whatever level and destination it was created with.
 */
export interface LogTap {
  level: string;
  stream: DestinationStream;
}

let current: LogTap | undefined;

export function setLogTap(tap: LogTap | undefined): void {
  current = tap;
}

export function logTap(): LogTap | undefined {
  return current;
}
