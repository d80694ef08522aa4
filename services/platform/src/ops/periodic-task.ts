import type { Logger } from 'pino';
import { outsideTrace } from '../telemetry/tracing.js';

/**
 * Runs `tick` every `intervalMs` (counted from the end of the previous run, so runs never overlap),
 * logging a failed run and carrying on. `stop()` prevents further runs and waits for the one in flight;
 * `stopping` lets a long run end early. Sweepers are built on it.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopRequested = false;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly tick: () => Promise<unknown>,
    private readonly log: Logger,
  ) {}

  /** True once stop() was called (a run in progress should wind down). */
  get stopping(): boolean {
    return this.stopRequested;
  }

  start(): void {
    this.stopRequested = false;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopRequested) return;
    // Each run outside any trace (a start() from inside a request must not make every run part of it).
    this.timer = setTimeout(
      outsideTrace(() => {
        this.running = this.tick()
          .then(
            () => undefined,
            (err: unknown) => {
              this.log.warn({ err: (err as Error).message, task: this.name }, 'periodic task failed; will retry');
            },
          )
          .finally(() => {
            this.running = undefined;
            this.schedule();
          });
      }),
      this.intervalMs,
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopRequested = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
