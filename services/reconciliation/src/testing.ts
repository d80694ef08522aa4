/**
 * In-memory implementations of the ports, for tests and for the benchmark's checks; a later slice
 * replaces them with the owning services' gRPC (OurRecords) and a break table (BreakSink).
 */
import { bogotaDate, type ReportRail } from './domain/report.js';
import { recordKey, type Break, type BreakKind, type OurRecord } from './domain/matching.js';
import type { BreakSink, OurRecords } from './app/ports.js';

/** Keeps breaks by key: the same key opens once (what the break table's unique key will do). */
export class InMemoryBreakSink implements BreakSink {
  readonly byKey = new Map<string, Break>();
  /** Every batch as handed over (re-runs included). */
  calls = 0;

  async open(breaks: readonly Break[]): Promise<{ opened: number }> {
    this.calls += 1;
    let opened = 0;
    for (const b of breaks) {
      if (this.byKey.has(b.key)) continue;
      this.byKey.set(b.key, b);
      opened += 1;
    }
    return { opened };
  }

  keys(): string[] {
    return [...this.byKey.keys()].sort();
  }

  ofKind(kind: BreakKind): Break[] {
    return [...this.byKey.values()].filter((b) => b.kind === kind);
  }
}

/**
 * Our records from an array (any order): `settled` sorts the day's by key as the owning service's
 * ordered query will, in batches; `find` looks up by id. Counts the calls, so tests can see the
 * look-ups are batched.
 */
export class ArrayOurRecords implements OurRecords {
  findCalls: string[][] = [];

  constructor(private readonly records: Partial<Record<ReportRail, readonly OurRecord[]>>, private readonly batch = 100) {}

  async *settled(rail: ReportRail, date: string): AsyncGenerator<readonly OurRecord[]> {
    const day = (this.records[rail] ?? [])
      .filter((r) => r.settledAt !== null && bogotaDate(r.settledAt) === date)
      .map((r) => ({ key: recordKey(rail, r), r }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map((x) => x.r);
    for (let i = 0; i < day.length; i += this.batch) yield day.slice(i, i + this.batch);
  }

  async find(rail: ReportRail, ids: readonly string[]): Promise<OurRecord[]> {
    this.findCalls.push([...ids]);
    const wanted = new Set(ids);
    return (this.records[rail] ?? []).filter((r) => wanted.has((rail === 'breb-inbound' ? r.providerId : r.ourId) ?? ''));
  }
}
