import { PeriodicTask, type Logger } from '@wallet/platform';

/** Wallets per transaction of a pass: small enough that no transaction of the pass runs long. */
export const CHECKPOINT_BATCH = 500;

export interface CheckpointFence {
  /** The database's clock when the fence was read (RFC 3339, µs). */
  now: string;
  /** Every posting created before it is committed and visible: the pass may checkpoint up to it. */
  through: string;
  /** The start of the oldest transaction open in the database, when it held the fence back. */
  heldBackBy: string | null;
  /** Where the checkpoints are complete today (null: no pass has finished yet). */
  done: string | null;
}

export interface CheckpointBatch {
  /** false: another replica's pass holds the lock (nothing was done). */
  locked: boolean;
  /** The pass's target (null: nothing to do). */
  target: string | null;
  wallets: number;
  written: number;
  /** The pass reached the last wallet: `through` is now its target. */
  finished: boolean;
}

export interface CheckpointPort {
  fence(marginSeconds: number, now?: string): Promise<CheckpointFence>;
  batch(fenceThrough: string, batch: number): Promise<CheckpointBatch>;
}

export interface CheckpointPass {
  /** Where the checkpoints are complete after this run (null: no pass has finished yet). */
  through: string | null;
  /** The fence was held back by a transaction open since before it (its start). */
  heldBackBy: string | null;
  wallets: number;
  written: number;
  /** false: another replica's pass holds the lock. */
  ran: boolean;
}

/**
 * Writes balance checkpoints (docs/balance-checkpoints.md) beside the posting path, never in it:
 * every `intervalMs`, a pass over every wallet up to the fence (the last hour that closed at least
 * `marginSeconds` ago and before every open transaction began), when it moved, in transactions of
 * CHECKPOINT_BATCH wallets; one replica at a time (an advisory lock), resumable where it stopped.
 * GetBalanceAt then reads the last checkpoint before an instant plus the postings since.
 */
export class BalanceCheckpointer {
  private readonly task: PeriodicTask;
  private first: Promise<void> | undefined;

  constructor(
    private readonly store: CheckpointPort,
    private readonly o: { intervalMs: number; marginSeconds: number; batch?: number },
    private readonly log: Logger,
  ) {
    this.task = new PeriodicTask('balance checkpointer', o.intervalMs, () => this.run(), log);
  }

  /** A first pass at once (the hours closed while no replica ran), then every `intervalMs`. */
  start(): void {
    this.first = this.run().then(
      () => undefined,
      (err: unknown) => this.log.warn({ err: (err as Error).message }, 'balance checkpoints: the first pass failed; will retry'),
    );
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
    await this.first;
  }

  /** One pass to the fence (or until the checkpointer stops); what it did. */
  async run(): Promise<CheckpointPass> {
    const started = Date.now();
    const fence = await this.store.fence(this.o.marginSeconds);
    if (fence.heldBackBy) this.log.info({ oldestTransaction: fence.heldBackBy, fence: fence.through }, 'balance checkpoints held back by an open transaction');
    let wallets = 0;
    let written = 0;
    let through = fence.done;
    for (;;) {
      const b = await this.store.batch(fence.through, this.o.batch ?? CHECKPOINT_BATCH);
      if (!b.locked) return { through, heldBackBy: fence.heldBackBy, wallets, written, ran: false };
      if (b.target === null) break;
      wallets += b.wallets;
      written += b.written;
      if (b.finished) {
        through = b.target;
        this.log.info({ through, wallets, written, ms: Date.now() - started }, 'balance checkpoints written');
        // A pass that finished towards an older target (resumed) may start the next one at once.
        if (b.target >= fence.through) break;
      }
      if (this.task.stopping) break;
    }
    return { through, heldBackBy: fence.heldBackBy, wallets, written, ran: true };
  }
}
