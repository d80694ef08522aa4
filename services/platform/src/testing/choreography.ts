import { AsyncLocalStorage } from 'node:async_hooks';

/** What Choreography needs of fast-check's `Scheduler` (`fc.scheduler()`), without depending on it here. */
export interface InterleavingScheduler {
  schedule<T>(task: Promise<T>, label?: string): Promise<T>;
  waitFor<T>(task: Promise<T>): Promise<T>;
}

/**
 * Deterministic interleavings over real code and real I/O, with fast-check's scheduler.
 *
 * Each concurrent party of a scenario (the request, each sweeper replica, the rail, the network
 * delivering a late call) is an *actor*. Actors stop at *points*: the calls at the boundary of the
 * code under test (a ledger call and its reply, a state transition, a rail call). Between two
 * points an actor runs alone, real Postgres and gRPC included: `quiet()` (the scheduler's `act`)
 * waits until every actor is stopped at a point or finished before the scheduler picks which point
 * to release next. The set of points waiting at each pick therefore depends only on the picks
 * before it, so a schedule replays exactly from its seed and path.
 */
export class Choreography {
  private running = 0;
  private readonly who = new AsyncLocalStorage<string>();
  private readonly spawned: Array<Promise<unknown>> = [];
  /** The points released, in order (printed with a failing schedule). */
  readonly trace: string[] = [];

  constructor(private readonly s: InterleavingScheduler) {}

  /** Runs `fn` as an actor. Its points are scheduled; outside any actor, points are no-ops. */
  actor<T>(name: string, fn: () => Promise<T>): Promise<T> {
    this.running++;
    const p = this.who.run(name, async () => {
      try {
        return await fn();
      } finally {
        this.running--;
      }
    });
    this.spawned.push(p.catch(() => undefined));
    return p;
  }

  /** Stops the calling actor until the scheduler releases it. */
  async point(label: string): Promise<void> {
    const who = this.who.getStore();
    if (!who) return;
    const name = `${who}: ${label}`;
    this.running--;
    try {
      await this.s.schedule(Promise.resolve(name), name);
    } finally {
      this.running++;
      this.trace.push(name);
    }
  }

  /**
   * fast-check's scheduler `act` for the scenario being explored: `fc.scheduler({ act: Choreography.act(() => c) })`,
   * where `c` is the Choreography the property builds for each run. After each release it waits until that
   * scenario is quiet (every actor at a point or done), so a released step has finished before the next pick.
   */
  static act(current: () => Choreography | undefined): (f: () => Promise<unknown>) => Promise<void> {
    return async (f) => {
      await f();
      await current()?.quiet();
    };
  }

  /** The scheduler's `act`: after a release, wait until every actor is at a point again or done. */
  async quiet(): Promise<void> {
    for (let settled = 0; settled < 2;) {
      await new Promise((r) => setImmediate(r));
      if (this.running > 0) {
        settled = 0;
        await new Promise((r) => setTimeout(r, 1));
      } else {
        settled++;
      }
    }
  }

  /** Releases points until every actor (including the ones spawned meanwhile) has finished. */
  async finish(): Promise<void> {
    for (let seen = -1; seen !== this.spawned.length;) {
      seen = this.spawned.length;
      await this.s.waitFor(Promise.all(this.spawned));
    }
  }

  /**
   * A port whose listed methods stop at a point before the call and another before the reply
   * reaches the caller (a slow answer), e.g. `ledger.reserve` / `ledger.reserve ↩`.
   */
  wrap<T extends object>(name: string, target: T, methods: ReadonlyArray<keyof T & string>, replies = true): T {
    return new Proxy(target, {
      get: (obj, prop, recv) => {
        const v = Reflect.get(obj, prop, recv) as unknown;
        if (typeof v !== 'function' || !methods.includes(prop as keyof T & string)) return typeof v === 'function' ? v.bind(obj) : v;
        return async (...args: unknown[]) => {
          await this.point(`${name}.${String(prop)}`);
          try {
            return await (v as (...a: unknown[]) => Promise<unknown>).apply(obj, args);
          } finally {
            if (replies) await this.point(`${name}.${String(prop)} ↩`);
          }
        };
      },
    });
  }
}
