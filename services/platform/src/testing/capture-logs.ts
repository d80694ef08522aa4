import { setLogTap } from '../logging/log-tap.js';

export interface CapturedLogs {
  /** Every line written so far, as written (JSON text). */
  lines(): string[];
  /** Stops capturing: loggers created afterwards behave as asked again. */
  stop(): void;
}

/**
 * Captures every log line of every logger created from now on in this process (all services of an
 * in-process stack), at `level` whatever level they are created with. One capture at a time.
 */
export function captureLogs(level = 'trace'): CapturedLogs {
  const lines: string[] = [];
  setLogTap({
    level,
    stream: {
      write: (line: string) => {
        lines.push(line);
      },
    },
  });
  return { lines: () => lines, stop: () => setLogTap(undefined) };
}
