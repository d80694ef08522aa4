import { withTimeout, type Bus, type Logger } from '@wallet/platform';
import { CONSUMERS } from './dispatcher.js';
import type { AckFloorSource, StreamFloor } from './ports.js';

/** How long one consumer-info request may take before the last known floor stands in for it. */
const INFO_TIMEOUT_MS = 2_000;

/**
 * The webhook consumers' ack floors, read from JetStream (consumer info `ack_floor.stream_seq`): every message
 * of the stream up to it has been recorded and acknowledged, by whichever replica pulled it. Read afresh for
 * each pass of the delivery worker (concurrent passes share one read). A floor that cannot be read keeps its
 * last value: floors only rise, so an old one only makes a delivery wait longer, never go out of order; a
 * stream never read has no floor and its deliveries wait.
 */
export class AckFloors implements AckFloorSource {
  private readonly known = new Map<string, number>();
  private reading: Promise<void> | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly log: Logger,
  ) {}

  async current(): Promise<StreamFloor[]> {
    await (this.reading ??= this.read().finally(() => {
      this.reading = undefined;
    }));
    return [...this.known].map(([stream, seq]) => ({ stream, seq }));
  }

  private async read(): Promise<void> {
    await Promise.all(
      CONSUMERS.map(async (c) => {
        const stream = this.bus.streamName(c.stream);
        try {
          const info = await withTimeout(this.bus.jsm.consumers.info(stream, c.durable), INFO_TIMEOUT_MS);
          this.known.set(stream, Math.max(this.known.get(stream) ?? 0, info.ack_floor.stream_seq));
        } catch (err) {
          this.log.debug({ stream, durable: c.durable, err: (err as Error).message }, 'consumer ack floor not read; the last one stands');
        }
      }),
    );
  }
}
