import { PAGE, companyScope, type CheckOptions, type CheckSources, type Offenders } from './report.js';

/** The hold each state of a return allows (services/collect-key domain/return-machine.ts). */
const HOLD_RULES: Readonly<Record<string, ReadonlyArray<string | null>>> = {
  // the Reserve may have landed before its transition was written (the next run replays it)
  RESERVING: [null, 'OPEN'],
  SENDING: ['OPEN'],
  RELEASING: ['OPEN'],
  RETURNED: ['COMMITTED'],
  FAILED: [null, 'RELEASED'],
};
const LIVE = new Set(['RESERVING', 'SENDING', 'RELEASING']);

/**
 * Part of `inbound`: the returns of credited Bre-B payments (docs/returns.md) against the ledger's holds.
 * Each return's hold (`collectkey:return:<id>:reserve`) is as its state allows (a live return past
 * reserving holds it OPEN; RETURNED committed it; FAILED released it or never held); the returns of a
 * payment that are not FAILED never add up to more than its gross; and every hold the ledger has for a
 * return belongs to a return collect-key knows (an unknown one would keep the wallet's funds for ever).
 * A live return owing its step past the sweepers' horizon, not parked, is a violation; a parked one has its money
 * exception (RETURN_CLOSE_REFUSED, in its owner's money_exceptions) for an operator.
 */
/** Where each owner of inbound payments keeps its returns, and its ledger keys' prefix. */
export const RETURN_OWNERS = {
  'collect-key': {
    reader: 'collectKey',
    returns: 'collect_key.payment_returns',
    payments: 'collect_key.payments',
    paymentId: 'deposit_id',
    prefix: 'collectkey:return:',
    exceptions: 'collect_key.money_exceptions',
  },
  'pse-deposit': {
    reader: 'deposit',
    returns: 'pse_deposit.deposit_returns',
    payments: 'pse_deposit.deposits',
    paymentId: 'id',
    prefix: 'deposit-return:',
    exceptions: 'pse_deposit.money_exceptions',
  },
} as const;

export async function checkReturnsInto(
  s: CheckSources,
  o: CheckOptions,
  bad: Offenders,
  horizon: number,
  owner: keyof typeof RETURN_OWNERS,
): Promise<{ returns: number; live: number }> {
  const w = RETURN_OWNERS[owner];
  const db = s[w.reader];
  const scope = companyScope(o, 2, 'r.company_id');
  let returns = 0,
    live = 0,
    after = '';
  for (;;) {
    const page = await db.query<{
      id: string;
      deposit_id: string;
      company_id: string;
      status: string;
      amount: string;
      hold_id: string | null;
      parked: boolean;
      idle_s: number;
      gross: string;
      claimed: string;
      exception: boolean;
    }>(
      `select r.id, r.deposit_id, r.company_id, r.status, r.amount::text as amount, r.hold_id::text as hold_id, r.parked,
              r.parked and exists (select 1 from ${w.exceptions} e where e.kind = 'RETURN_CLOSE_REFUSED' and e.resource_id = r.id) as exception,
              extract(epoch from now() - r.step_at)::int as idle_s, p.amount::text as gross,
              (select coalesce(sum(o.amount), 0) from ${w.returns} o where o.deposit_id = r.deposit_id and o.status <> 'FAILED')::text as claimed
         from ${w.returns} r join ${w.payments} p on p.${w.paymentId} = r.deposit_id
        where r.id > $1${scope.sql} order by r.id limit $2`,
      [after, PAGE, ...scope.params],
    );
    if (page.length === 0) break;
    after = page[page.length - 1]!.id;
    returns += page.length;
    const holds = new Map(
      (
        await s.ledger.query<{ key: string; hold_id: string; status: string; amount: string }>(
          `select p.idempotency_key as key, h.id::text as hold_id, h.status, h.amount::text as amount
             from ledger.postings p join ledger.holds h on h.id = p.hold_id
            where p.idempotency_key = any($1::text[]) and p.kind = 'reserve'`,
          [page.map((r) => `${w.prefix}${r.id}:reserve`)],
        )
      ).map((h) => [h.key.slice(w.prefix.length, -':reserve'.length), h]),
    );
    for (const r of page) {
      const say = (what: string) => bad.add(`return ${r.id} of deposit ${r.deposit_id} (company ${r.company_id}) ${r.status}: ${what}`);
      const hold = holds.get(r.id);
      const allowed = HOLD_RULES[r.status];
      if (!allowed) say('unknown state');
      else if (!allowed.includes(hold?.status ?? null) && !r.parked) say(`has ${hold ? `a ${hold.status} hold` : 'no hold'}`);
      if (hold && hold.amount !== r.amount) say(`its hold is for ${hold.amount}, not ${r.amount}`);
      if (hold && r.hold_id && hold.hold_id !== r.hold_id) say(`records hold ${r.hold_id} but its reserve made ${hold.hold_id}`);
      if (BigInt(r.claimed) > BigInt(r.gross)) say(`the payment's returns add up to ${r.claimed}, more than its gross ${r.gross}`);
      if (r.parked && !r.exception) say('is parked for an operator, but no RETURN_CLOSE_REFUSED money exception says so');
      if (LIVE.has(r.status)) {
        live++;
        if (!r.parked && o.settled) say('still owes its money step with nobody running');
        else if (!r.parked && r.idle_s > horizon) say(`has owed its money step for ${r.idle_s} s, past the sweepers' horizon (${horizon} s)`);
      }
    }
  }

  // Every hold the ledger has for a return is one of collect-key's returns.
  const hs = companyScope(o, 0, 'h.company_id');
  const orphans = await s.ledger.query<{ key: string; status: string; company_id: string }>(
    `select p.idempotency_key as key, h.status, h.company_id from ledger.holds h join ledger.postings p on p.hold_id = h.id and p.kind = 'reserve'
      where h.return_of is not null and p.idempotency_key like $${hs.params.length + 1}${hs.sql}`,
    [...hs.params, `${w.prefix}%`],
  );
  for (let i = 0; i < orphans.length; i += PAGE) {
    const slice = orphans.slice(i, i + PAGE);
    const ids = slice.map((h) => h.key.slice(w.prefix.length).replace(/:reserve$/, ''));
    const known = new Set((await db.query<{ id: string }>(`select id from ${w.returns} where id = any($1::text[])`, [ids])).map((r) => r.id));
    slice.forEach((h, j) => {
      if (!known.has(ids[j]!)) bad.add(`the ledger's ${h.status} return hold ${h.key} (company ${h.company_id}) belongs to no return ${owner} knows`);
    });
  }
  return { returns, live };
}
