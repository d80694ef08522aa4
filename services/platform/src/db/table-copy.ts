import type { Logger } from '../logging/logger.js';
import type { Database, Watch } from './database.js';

/**
 * An in-memory copy of a table that a change feed keeps current (the fee schedules, the AML list): a
 * trigger notifies `channel` at commit on every change, whoever writes. Each notification, and the
 * feed coming up, drops the copy and reloads it. Reloads run one at a time, and a copy is kept only
 * if no change was notified while it was read, so a copy is never older than the last change this
 * replica has heard of.
 *
 * `current` is undefined while the feed is down, while a change is being reloaded, after `stop`, and
 * when `load` declines to give a copy (answers undefined, e.g. a table too large to hold): the caller
 * then reads the table. A reload that fails is tried again a second later. Reconnects by itself.
 */
export class TableCopy<T> {
  private feed: Watch | undefined;
  private copy: T | undefined;
  private generation = 0;
  private reloading: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly channel: string,
    private readonly load: () => Promise<T | undefined>,
  ) {}

  /** The copy, while it is current; undefined: read the table. */
  get current(): T | undefined {
    return this.feed?.up ? this.copy : undefined;
  }

  /** LISTEN on the channel; resolves once the first copy is loaded (or declined). */
  async start(log: Pick<Logger, 'warn'>, what: string): Promise<void> {
    this.feed = await this.db.watch(this.channel, {
      onMessage: () => this.changed(),
      onUp: async () => {
        this.changed();
        await this.reloading;
      },
      onDown: (err) => {
        this.copy = undefined;
        log.warn({ err: err.message, channel: this.channel }, `${what} feed down; reading the table until it is back`);
      },
    });
  }

  stop(): void {
    this.stopped = true;
    this.feed?.stop();
    this.copy = undefined;
  }

  /**
   * This replica changed the table: it reads the table from now until its copy is reloaded (the
   * other replicas when the notification reaches them).
   */
  wrote(): void {
    if (this.feed?.up) this.changed();
  }

  /** A change was notified (or the feed just came up): drop the copy, reload (one reload at a time). */
  private changed(): void {
    this.generation++;
    this.copy = undefined;
    this.reloading ??= (async () => {
      try {
        while (this.copy === undefined && !this.stopped) {
          const generation = this.generation;
          const loaded = await this.load();
          if (generation !== this.generation) continue; // changed while reading: read again
          if (loaded === undefined) return; // declined: every read goes to the table
          this.copy = loaded;
        }
      } catch {
        // The table is read meanwhile; try again in a second.
        const again = setTimeout(() => {
          if (this.copy === undefined && !this.stopped) this.changed();
        }, 1_000);
        again.unref();
      } finally {
        this.reloading = undefined;
      }
    })();
  }
}

/**
 * The migration SQL of a table's change feed, for `TableCopy`: a statement trigger that notifies
 * `channel` at commit on every insert, update, delete or truncate, whoever writes. `fn` and `trigger`
 * name the trigger function (schema-qualified) and the trigger.
 */
export function changeFeedDdl(o: { table: string; channel: string; fn: string; trigger: string }): { up: string[]; down: string[] } {
  return {
    up: [
      `create or replace function ${o.fn}() returns trigger language plpgsql as $fn$
      begin
        perform pg_notify('${o.channel}', '');
        return null;
      end $fn$`,
      `create trigger ${o.trigger} after insert or update or delete or truncate on ${o.table}
      for each statement execute function ${o.fn}()`,
    ],
    down: [`drop trigger if exists ${o.trigger} on ${o.table}`, `drop function if exists ${o.fn}()`],
  };
}
