import { COUNTERPARTY_ID, COUNTERPARTY_STATES, type CounterpartyRecord, type VerificationStatus } from '../domain/counterparty.js';
import type { Rail } from '../domain/rails.js';
import { counterpartyOf } from './counterparty-lookup.js';
import type { CounterpartyDeps } from './counterparty-verifier.js';
import { Problems, decodeTimeCursor, encodeTimeCursor, orNull, requireCompany } from './validation.js';

const TAG = /^[a-z0-9_-]{1,32}$/;

/** GetCounterparty and ListCounterparties (newest first, filtered by tag, status and rail, cursor pages). */
export class CounterpartyQueries {
  constructor(private readonly deps: CounterpartyDeps) {}

  async get(caller: string | undefined, id: string): Promise<CounterpartyRecord> {
    return counterpartyOf(this.deps, requireCompany(caller), id);
  }

  async list(
    caller: string | undefined,
    q: { tag?: string | undefined; status?: string | undefined; rail?: string | undefined; limit: number; cursor?: string | undefined },
  ): Promise<{ items: CounterpartyRecord[]; nextCursor: string | null }> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    const tag = orNull(q.tag);
    const status = orNull(q.status);
    const rail = orNull(q.rail);
    if (tag !== null && !TAG.test(tag)) p.add('tag', 'must be 1 to 32 lower-case letters, digits, "_" or "-"');
    if (status !== null && !(COUNTERPARTY_STATES as readonly string[]).includes(status)) p.add('status', `must be one of ${COUNTERPARTY_STATES.join(', ')}`);
    if (rail !== null && rail !== 'BREB' && rail !== 'ACH') p.add('rail', 'must be BREB or ACH');
    if (q.limit < 0 || q.limit > 100) p.add('limit', 'must be 1 to 100');
    const c = orNull(q.cursor);
    const cursor = c ? (decodeTimeCursor(p, c, (id) => COUNTERPARTY_ID.test(id)) ?? null) : null;
    p.throwIfAny();
    const limit = q.limit || 50;
    const rows = await this.deps.counterparties.list(companyId, {
      tag,
      status: status as VerificationStatus | null,
      rail: rail as Rail | null,
      limit: limit + 1,
      cursor,
    });
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? encodeTimeCursor(items[items.length - 1]!) : null };
  }
}
