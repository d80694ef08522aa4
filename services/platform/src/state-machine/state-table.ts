/**
 * What every saga's state table shares (the transfer, PSE deposit, inbound payment and batch tables:
 * EXAMPLES.md B2/B3): a table maps each event to the states it leaves from, the state(s) it leads to
 * and the actors that may apply it. These helpers read such a table — the exits of a state, the states
 * reachable from the entries, the actors its events name — and draw it as a Mermaid state diagram,
 * which each service's docs embed between markers and a drift test keeps equal to the code.
 *
 * Pure functions of the table: no I/O, so a service's domain/ may import them.
 */

/** One row of a state table: where an event leaves from, where it leads, who may apply it. */
export interface StateTransition<S extends string = string, A extends string = string> {
  readonly from: readonly S[];
  /** One state, or the states the writer picks from (e.g. a batch's outcome). */
  readonly to: S | readonly S[];
  readonly by: readonly A[];
}

export type StateTable<E extends string, S extends string = string, A extends string = string> = Readonly<Record<E, StateTransition<S, A>>>;

/** The states an event may lead to. */
export function targetsOf<S extends string>(t: StateTransition<S>): readonly S[] {
  return typeof t.to === 'string' ? [t.to as S] : (t.to as readonly S[]);
}

/** The events that can leave `state`, in the order of `events`. */
export function exitsOf<E extends string, S extends string>(events: readonly E[], table: StateTable<E, S>, state: S): E[] {
  return events.filter((e) => table[e].from.includes(state));
}

/** Every state reachable from `starts` through the table's events (the starts included), sorted. */
export function reachableFrom<E extends string, S extends string>(events: readonly E[], table: StateTable<E, S>, starts: readonly S[]): S[] {
  const seen = new Set<S>(starts);
  for (let grew = true; grew;) {
    grew = false;
    for (const e of events) {
      const t = table[e];
      if (!t.from.some((f) => seen.has(f))) continue;
      for (const to of targetsOf(t))
        if (!seen.has(to)) {
          seen.add(to);
          grew = true;
        }
    }
  }
  return [...seen].sort();
}

/** The (event, actor) pairs whose actor is not one of `actors`: a writer the table does not declare. */
export function undeclaredActors<E extends string, A extends string>(
  events: readonly E[],
  table: StateTable<E, string, A>,
  actors: readonly string[],
): Array<{ event: E; actor: A }> {
  return events.flatMap((event) => table[event].by.filter((actor) => !actors.includes(actor)).map((actor) => ({ event, actor })));
}

/** The states of `states` that no event leaves: they must be exactly the final ones. */
export function deadEnds<E extends string, S extends string>(events: readonly E[], table: StateTable<E, S>, states: readonly S[]): S[] {
  return states.filter((s) => exitsOf(events, table, s).length === 0);
}

export interface MermaidOptions<E extends string, T extends StateTransition> {
  events: readonly E[];
  table: Readonly<Record<E, T>>;
  /** How a record enters the table: `[*] --> to`, with an optional label. */
  entries: ReadonlyArray<{ to: T['from'][number]; label?: string }>;
  /** The label of an event's edges (the event's name and whatever the table adds: a guard, a money step). */
  label: (event: E, t: T) => string;
  /** The states drawn as ends (`state --> [*]`). */
  finals: ReadonlyArray<T['from'][number]>;
}

/**
 * The table as a Mermaid `stateDiagram-v2`: the entries, one edge per (from, to) of each event in
 * the order of `events`, then the final states.
 */
export function stateTableMermaid<E extends string, T extends StateTransition>(o: MermaidOptions<E, T>): string {
  const lines = ['stateDiagram-v2'];
  for (const e of o.entries) lines.push(`  [*] --> ${e.to}${e.label ? `: ${e.label}` : ''}`);
  for (const e of o.events) {
    const t = o.table[e];
    const label = o.label(e, t);
    for (const f of t.from) for (const to of targetsOf(t)) lines.push(`  ${f} --> ${to}: ${label}`);
  }
  for (const s of o.finals) lines.push(`  ${s} --> [*]`);
  return lines.join('\n');
}
