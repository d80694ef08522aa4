import type { CallbackRow, DeliveredMark, SandboxStore } from '../persistence/sandbox.store.js';

interface Waiting {
  mark: DeliveredMark;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Records delivered callbacks, those answered close together in one statement. No timer: when
 * nothing is being written the mark is written at once; marks that arrive while a write is under
 * way wait for it and go together in the next one. So an idle dispatcher adds no latency, and a
 * busy one writes one statement per round trip instead of one per callback.
 *
 * Each mark's promise settles with the statement that carries it. A failed statement leaves its
 * rows as they were (`sending`): their lease runs out and they are sent again with the same
 * eventId, the at-least-once contract the receiver dedupes on.
 */
export class DeliveredMarks {
  private waiting: Waiting[] = [];
  private writing: Promise<void> | undefined;

  constructor(
    private readonly store: Pick<SandboxStore, 'markDelivered'>,
    private readonly maxBatch = 500,
  ) {}

  mark(c: Pick<CallbackRow, 'eventId' | 'attempts'>, status: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ mark: { eventId: c.eventId, attempts: c.attempts, status }, resolve, reject });
      this.write();
    });
  }

  /** Resolves once every mark made so far is written (or its statement failed). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private write(): void {
    if (this.writing || this.waiting.length === 0) return;
    const batch = this.waiting.splice(0, this.maxBatch);
    // `new Promise` also turns a synchronous throw into a failed write.
    this.writing = new Promise<void>((done) => done(this.store.markDelivered(batch.map((w) => w.mark))))
      .then(
        () => {
          for (const m of batch) m.resolve();
        },
        (err: unknown) => {
          for (const m of batch) m.reject(err);
        },
      )
      .finally(() => {
        this.writing = undefined;
        this.write();
      });
  }
}
