import pg from 'pg';
import { checkInvariants, violationLines } from '@wallet/invariants';
import type { Database } from '@wallet/platform';

interface Row {
  id: string;
  status: string;
  paid_events: number;
  expired_events: number;
  failed_events: number;
  reversed_events: number;
  open_exceptions: string[] | null;
}

export interface DepositFacts {
  id: string;
  status: string;
  credited: boolean;
  openExceptions: string[];
}

/**
 * The PSE saga's invariants for one company's deposits. The money (postings per status, the net
 * credited, a step owed with nobody running) is the shared checker's `deposits` check
 * (services/invariants: the same code as `npm run ledger:check` and the fault suite) through the
 * read-only roles; the events (this service's own outbox) are checked here:
 * `deposit.paid` once iff credited (ASSIGNED, REVERSING, REVERSED), `deposit.reversed` once iff
 * REVERSED, `deposit.failed` at most once (once if FAILED), `deposit.expired` at most once.
 */
export async function depositViolations(
  db: Database,
  databaseUrl: string,
  companyId: string,
  o: { settled: boolean },
): Promise<{ violations: string[]; facts: DepositFacts[] }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let money: string[];
  try {
    money = violationLines(await checkInvariants(client, { companyId, settled: o.settled, only: ['deposits'], rail: 'none', partial: true }));
  } finally {
    await client.end();
  }
  const rows = await db.query<Row>(
    `select d.id, d.status,
            (select count(*)::int from pse_deposit.outbox x where x.subject = 'deposit.paid' and x.payload->'deposit'->>'id' = d.id) as paid_events,
            (select count(*)::int from pse_deposit.outbox x where x.subject = 'deposit.expired' and x.payload->'deposit'->>'id' = d.id) as expired_events,
            (select count(*)::int from pse_deposit.outbox x where x.subject = 'deposit.failed' and x.payload->'deposit'->>'id' = d.id) as failed_events,
            (select count(*)::int from pse_deposit.outbox x where x.subject = 'deposit.reversed' and x.payload->'deposit'->>'id' = d.id) as reversed_events,
            (select array_agg(e.kind order by e.kind) from pse_deposit.money_exceptions e where e.resource_id = d.id and e.status <> 'RESOLVED') as open_exceptions
       from pse_deposit.deposits d where d.company_id = ? and d.source = 'PSE'`,
    [companyId],
  );
  const out: string[] = [...money];
  const facts: DepositFacts[] = [];
  for (const r of rows) {
    const bad = (what: string) => out.push(`deposit ${r.id} ${r.status}: ${what}`);
    const creditedNow = ['ASSIGNED', 'REVERSING', 'REVERSED'].includes(r.status);
    facts.push({ id: r.id, status: r.status, credited: creditedNow, openExceptions: r.open_exceptions ?? [] });
    if (r.paid_events !== (creditedNow ? 1 : 0) && !(r.status === 'CREDITING' && r.paid_events === 0)) bad(`${r.paid_events} deposit.paid events`);
    if (r.reversed_events !== (r.status === 'REVERSED' ? 1 : 0)) bad(`${r.reversed_events} deposit.reversed events`);
    if (r.expired_events > 1) bad(`${r.expired_events} deposit.expired events`);
    if (r.status === 'EXPIRED' && r.expired_events !== 1) bad('is EXPIRED without its deposit.expired event');
    if (r.failed_events > 1 || (r.status === 'FAILED' && r.failed_events !== 1)) bad(`${r.failed_events} deposit.failed events`);
  }
  return { violations: out, facts };
}
