import { OWED_HORIZON_SECONDS, Offenders, PAGE, companyScope, type CheckOptions, type CheckResult, type CheckSources } from './report.js';

interface PaymentRow {
  deposit_id: string; provider_transfer_id: string; company_id: string; status: 'ASSIGNED' | 'UNASSIGNED';
  amount: string; net_amount: string; pending_step: string | null; owed_s: number | null;
}
interface PostingRow { key: string; kind: string; wallet: string; unassigned: string }

const ledgerKey = (providerTransferId: string) => `collectkey:payment:${providerTransferId}`;

/**
 * inbound: every Bre-B payment we received is booked exactly once: ASSIGNED credits its net to the
 * company's Bre-B wallet, UNASSIGNED holds the gross in unassigned_funds; a payment whose step is
 * still owed has at most that one posting (none once settled). Once settled, each is listed once in
 * the deposits listing. The network's side: every payment it delivered to us is one of ours, for the
 * amount it sent.
 */
export async function checkInbound(s: CheckSources, o: CheckOptions, limit: number): Promise<CheckResult> {
  const bad = new Offenders(limit);
  const notChecked: string[] = [];
  const scope = companyScope(o, 2);
  const horizon = o.owedHorizonSeconds ?? OWED_HORIZON_SECONDS;
  let payments = 0, unassigned = 0, owed = 0;
  let after = '';
  for (;;) {
    const page = await s.collectKey.query<PaymentRow>(
      `select deposit_id, provider_transfer_id, company_id, status, amount::text as amount, net_amount::text as net_amount, pending_step,
              extract(epoch from now() - coalesce(step_at, received_at))::int as owed_s
         from collect_key.payments where provider_transfer_id > $1${scope.sql} order by provider_transfer_id limit $2`, [after, PAGE, ...scope.params]);
    if (page.length === 0) break;
    after = page[page.length - 1]!.provider_transfer_id;
    payments += page.length;
    const postings = new Map((await s.ledger.query<PostingRow>(
      `select p.idempotency_key as key, p.kind,
              coalesce(sum(e.amount) filter (where e.account = 'wallet_available:' || p.company_id || ':BREB'), 0)::text as wallet,
              coalesce(sum(e.amount) filter (where e.account = 'unassigned_funds:BREB'), 0)::text as unassigned
         from ledger.postings p left join ledger.entries e on e.posting_id = p.id
        where p.idempotency_key = any($1::text[]) group by p.id`, [page.map((p) => ledgerKey(p.provider_transfer_id))])).map((p) => [p.key, p]));
    const listed = o.settled ? new Map((await s.deposit.query<{ ptid: string; status: string; n: number }>(
      `select provider_transfer_id as ptid, min(status) as status, count(*)::int as n from pse_deposit.deposits
        where provider_transfer_id = any($1::text[]) and source = 'BREB' group by 1`, [page.map((p) => p.provider_transfer_id)])).map((r) => [r.ptid, r])) : undefined;

    for (const p of page) {
      const posting = postings.get(ledgerKey(p.provider_transfer_id));
      const say = (what: string) => bad.add(`inbound payment ${p.provider_transfer_id} (deposit ${p.deposit_id}, company ${p.company_id}) ${p.status}: ${what}`);
      if (p.status === 'UNASSIGNED') unassigned++;
      if (p.pending_step) {
        owed++;
        if (o.settled) say(`still owes its ${p.pending_step} step with nobody running`);
        else if ((p.owed_s ?? 0) > horizon) say(`has owed its ${p.pending_step} step for ${p.owed_s} s, past the sweepers' horizon (${horizon} s)`);
      } else if (!posting) {
        say('recorded but booked nowhere (no ledger posting)');
      }
      if (posting) {
        if (posting.kind !== 'inflow') say(`its ledger key holds a ${posting.kind} posting, not an inflow`);
        else if (p.status === 'ASSIGNED' && (BigInt(posting.wallet) !== BigInt(p.net_amount) || posting.unassigned !== '0')) say(`credited ${posting.wallet} to the wallet and ${posting.unassigned} to unassigned funds, not its net ${p.net_amount}`);
        else if (p.status === 'UNASSIGNED' && (BigInt(posting.unassigned) !== BigInt(p.amount) || posting.wallet !== '0')) say(`held ${posting.unassigned} in unassigned funds and ${posting.wallet} in the wallet, not its amount ${p.amount}`);
      }
      if (listed) {
        const l = listed.get(p.provider_transfer_id);
        if (!l || l.n !== 1 || l.status !== p.status) say(`listed ${l ? `${l.n} time(s) as ${l.status}` : 'nowhere'} in the deposits listing`);
      }
    }
  }

  // What the network delivered (we answered 2xx) must be one of our payments, for its amount.
  if (s.rail?.deliveredInbound && !o.companyId) {
    let railAfter = '';
    let delivered = 0;
    for (;;) {
      const page = await s.rail.deliveredInbound(railAfter, PAGE);
      if (page.length === 0) break;
      railAfter = page[page.length - 1]!.providerTransferId;
      delivered += page.length;
      const ours = new Map((await s.collectKey.query<{ ptid: string; amount: string }>(
        `select provider_transfer_id as ptid, amount::text as amount from collect_key.payments where provider_transfer_id = any($1::text[])`,
        [page.map((d) => d.providerTransferId)])).map((r) => [r.ptid, r.amount]));
      for (const d of page) {
        const amount = ours.get(d.providerTransferId);
        if (amount === undefined) bad.add(`inbound payment ${d.providerTransferId} of ${d.amount} delivered by the network (${s.rail.name}) is booked nowhere`);
        else if (BigInt(amount) !== d.amount) bad.add(`inbound payment ${d.providerTransferId}: recorded ${amount}, the network sent ${d.amount}`);
      }
    }
    return { name: 'inbound', counts: [['payments', payments], ['unassigned', unassigned], ['step owed', owed], ['delivered by the network', delivered]], violations: bad.lines, total: bad.total, notChecked };
  }
  notChecked.push(o.companyId ? 'network side (scoped to one company)' : 'network side (no rail truth)');
  return { name: 'inbound', counts: [['payments', payments], ['unassigned', unassigned], ['step owed', owed]], violations: bad.lines, total: bad.total, notChecked };
}
