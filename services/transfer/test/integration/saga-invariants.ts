import type { Database } from '@wallet/platform';

/** What the rail says happened to each transfer it received (the provider's truth). */
export type RailTruth = ReadonlyMap<string, 'PENDING' | 'COMPLETED' | 'FAILED'>;

interface Row {
  id: string;
  state: string;
  hold_id: string | null;
  landed_hold: string | null;
  hold_status: 'OPEN' | 'COMMITTED' | 'RELEASED' | null;
  key_kind: string | null;
  exceptions: string[] | null;
}

const ACCEPTED_LIVE = ['RESERVED', 'AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED'];
const MONEY_STATES = ['RELEASING', 'EXPIRING', 'COMPLETING'];

/**
 * The send saga's cross-service invariants for one company (transfer records against the ledger's
 * holds and the rail's truth). Empty when they hold; otherwise one line per violation, naming the
 * transfer. Written to be reused by the fault suite and the operators' check.
 *
 * - an accepted live transfer has its hold open; COMPLETED ⇔ hold committed; FAILED/EXPIRED ⇒ hold
 *   released; REJECTED ⇒ no reserve ever landed (its key is void or unused);
 * - an open hold belongs to a live transfer; a transfer still being decided (RECEIVED, ABANDONING)
 *   has at most an open hold;
 * - the rail paid it ⇒ COMPLETED, unless a money exception is open for it; a committed hold ⇒ the rail paid.
 * A transfer parked in a money state with an open exception is an operator's case, not a violation.
 */
export async function sagaViolations(db: Database, companyId: string, rail?: RailTruth): Promise<string[]> {
  const rows = await db.query<Row>(
    `select t.id::text as id, t.state, t.hold_id::text as hold_id, p.hold_id::text as landed_hold, h.status as hold_status, p.kind as key_kind,
            (select array_agg(e.kind) from transfer.money_exceptions e where e.resource_id = t.id::text and e.status = 'OPEN') as exceptions
       from transfer.transfers t
       left join ledger.postings p on p.idempotency_key = 'transfer:' || t.id::text || ':reserve'
       left join ledger.holds h on h.id = p.hold_id
      where t.company_id = ?`, [companyId]);
  const out: string[] = [];
  for (const r of rows) {
    const bad = (what: string) => out.push(`transfer ${r.id} ${r.state}: ${what} (hold ${r.hold_status ?? 'none'}, key ${r.key_kind ?? 'unused'})`);
    const excused = (r.exceptions ?? []).length > 0;
    if (r.hold_id && r.landed_hold && r.hold_id !== r.landed_hold) bad('records another hold than its reserve');
    if (ACCEPTED_LIVE.includes(r.state) && r.hold_status !== 'OPEN') bad('is live without an open hold');
    if (MONEY_STATES.includes(r.state) && !excused && r.hold_status !== 'OPEN') bad('owes its money step but the hold is not open');
    if (r.state === 'COMPLETED' && r.hold_status !== 'COMMITTED') bad('is COMPLETED without a committed hold');
    if ((r.state === 'FAILED' || r.state === 'EXPIRED') && r.hold_status !== 'RELEASED') bad('is final without its hold released');
    if (r.state === 'REJECTED' && r.key_kind === 'reserve') bad('is REJECTED but its reserve landed');
    if ((r.state === 'RECEIVED' || r.state === 'ABANDONING') && r.hold_status && r.hold_status !== 'OPEN') bad('is undecided but its hold is closed');
    if (rail) {
      const truth = rail.get(r.id);
      if (truth === 'COMPLETED' && r.state !== 'COMPLETED' && !(r.exceptions ?? []).includes('RAIL_COMPLETED_AFTER_RELEASE')) bad('was paid by the rail; not COMPLETED and no exception');
      if (r.hold_status === 'COMMITTED' && truth !== 'COMPLETED') bad('has a committed hold the rail never paid');
    }
  }
  return out;
}
