import type { Logger } from 'pino';
import { stopTelemetry } from '../telemetry/telemetry.js';

/** The default of `SHUTDOWN_GRACE_MS` (20 s: under Kubernetes' 30 s terminationGracePeriodSeconds). */
export const DEFAULT_SHUTDOWN_GRACE_MS = 20_000;

/**
 * Graceful shutdown: on SIGTERM/SIGINT run the steps in order (stop taking work, finish in-flight,
 * flush the outbox, close connections), each bounded, and exit within the grace period.
 */
export function onShutdown(log: Logger, steps: Array<[string, () => Promise<void>]>, graceMs = DEFAULT_SHUTDOWN_GRACE_MS): void {
  let stopping = false;
  const run = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, graceMs }, 'shutting down');
    const hard = setTimeout(() => {
      log.error('shutdown grace period exceeded; exiting');
      process.exit(1);
    }, graceMs);
    hard.unref();
    for (const [name, step] of steps) {
      try {
        await step();
      } catch (err) {
        log.warn({ err: (err as Error).message, step: name }, 'shutdown step failed');
      }
    }
    // Spans of the last requests are flushed after everything else stopped.
    await stopTelemetry();
    log.info({ signal }, 'stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void run('SIGTERM'));
  process.once('SIGINT', () => void run('SIGINT'));
}
