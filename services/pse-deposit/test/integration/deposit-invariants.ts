import type { Database } from '@wallet/platform';

interface Row {
  id: string;
  status: string;
  net_amount: string;
  step_at: Date | null;
  inflows: number;
  reversals: number;
  wallet: string;
  paid_events: number;
  expired_events: number;
  failed_events: number;
  reversed_events: number;
  open_exceptions: string[] | null;
}

export interface DepositFacts { id: string; status: string; credited: boolean; openExceptions: string[] }

/**
 * The PSE saga's money invariants for one company's deposits (our records against the ledger's
 * postings and the outbox). Empty when they hold; otherwise one line per violation, naming the
 * deposit. `settled`: nobody is running any more, so no money step may be left in flight (unless
 * parked for an operator by an open exception).
 *
 * - ASSIGNED: exactly one inflow posting (`deposit:<id>:paid`) crediting the net to the wallet, no
 *   reversal; REVERSED: that inflow and exactly one reversal, the wallet back to zero; EXPIRED,
 *   FAILED, PENDING_CONFIRM: no posting at all; CREDITING: no reversal; REVERSING: one inflow.
 * - events: `deposit.paid` once iff credited (ASSIGNED, REVERSING, REVERSED), `deposit.reversed`
 *   once iff REVERSED, `deposit.failed` at most once (once if FAILED), `deposit.expired` at most once.
 */
export async function depositViolations(db: Database, companyId: string, o: { settled: boolean }): Promise<{ violations: string[]; facts: DepositFacts[] }> {
  const rows = await db.query<Row>(
    `select d.id, d.status, d.net_amount::text as net_amount, d.step_at,
            (select count(*)::int from ledger.postings p where p.idempotency_key = 'deposit:' || d.id || ':paid') as inflows,
            (select count(*)::int from ledger.postings p where p.idempotency_key = 'deposit:' || d.id || ':reversed') as reversals,
            (select coalesce(sum(e.amount), 0)::text from ledger.postings p join ledger.entries e on e.posting_id = p.id
              where p.idempotency_key in ('deposit:' || d.id || ':paid', 'deposit:' || d.id || ':reversed')
                and e.account = 'wallet_available:' || d.company_id || ':ACH') as wallet,
            (select count(*)::int from pse_deposit.outbox x where x.subject = 'deposit.paid' and x.payload->'deposit'->>'id' = d.id) as paid_events,
            (select count(*)::int from pse_deposit.outbox x where x.subject = 'deposit.expired' and x.payload->'deposit'->>'id' = d.id) as expired_events,
            (select count(*)::int from pse_deposit.outbox x where x.subject = 'deposit.failed' and x.payload->'deposit'->>'id' = d.id) as failed_events,
            (select count(*)::int from pse_deposit.outbox x where x.subject = 'deposit.reversed' and x.payload->'deposit'->>'id' = d.id) as reversed_events,
            (select array_agg(e.kind order by e.kind) from pse_deposit.money_exceptions e where e.resource_id = d.id and e.status <> 'RESOLVED') as open_exceptions
       from pse_deposit.deposits d where d.company_id = ? and d.source = 'PSE'`, [companyId]);
  const out: string[] = [];
  const facts: DepositFacts[] = [];
  for (const r of rows) {
    const bad = (what: string) => out.push(`deposit ${r.id} ${r.status}: ${what} (inflows ${r.inflows}, reversals ${r.reversals}, wallet ${r.wallet})`);
    const exc = r.open_exceptions ?? [];
    const net = BigInt(r.net_amount);
    const wallet = BigInt(r.wallet);
    const creditedNow = ['ASSIGNED', 'REVERSING', 'REVERSED'].includes(r.status);
    facts.push({ id: r.id, status: r.status, credited: creditedNow, openExceptions: exc });
    if (r.inflows > 1 || r.reversals > 1) bad('more than one inflow or reversal posting');
    switch (r.status) {
      case 'ASSIGNED':
        if (r.inflows !== 1 || r.reversals !== 0 || wallet !== net) bad(`is ASSIGNED but not credited exactly once with the net ${net}`);
        break;
      case 'REVERSED':
        if (r.inflows !== 1 || r.reversals !== 1 || wallet !== 0n) bad('is REVERSED but not credited once and debited back once');
        break;
      case 'EXPIRED': case 'FAILED': case 'PENDING_CONFIRM':
        if (r.inflows + r.reversals !== 0) bad('was never credited but has postings');
        break;
      case 'CREDITING':
        if (r.reversals !== 0) bad('is being credited but has a reversal');
        if (o.settled && !(exc.includes('CREDIT_REFUSED') && r.step_at === null)) bad('still owes its credit with nobody running');
        break;
      case 'REVERSING':
        if (r.inflows !== 1) bad('is being reversed but was never credited');
        if (o.settled && !(exc.includes('REVERSAL_REFUSED') && r.step_at === null)) bad('still owes its reversal with nobody running');
        break;
      default:
        bad('unknown state');
    }
    if (r.paid_events !== (creditedNow ? 1 : 0) && !(r.status === 'CREDITING' && r.paid_events === 0)) bad(`${r.paid_events} deposit.paid events`);
    if (r.reversed_events !== (r.status === 'REVERSED' ? 1 : 0)) bad(`${r.reversed_events} deposit.reversed events`);
    if (r.expired_events > 1) bad(`${r.expired_events} deposit.expired events`);
    if (r.status === 'EXPIRED' && r.expired_events !== 1) bad('is EXPIRED without its deposit.expired event');
    if (r.failed_events > 1 || (r.status === 'FAILED' && r.failed_events !== 1)) bad(`${r.failed_events} deposit.failed events`);
  }
  return { violations: out, facts };
}
