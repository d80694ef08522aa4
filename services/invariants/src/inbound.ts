import { checkReturnsInto } from './returns.js';
import { OWED_HORIZON_SECONDS, Offenders, PAGE, companyScope, type CheckOptions, type CheckResult, type CheckSources } from './report.js';

interface PaymentRow {
  deposit_id: string;
  provider_transfer_id: string;
  company_id: string;
  status: string;
  amount: string;
  net_amount: string;
  pending_step: string | null;
  step_at: Date | null;
  owed_s: number | null;
}
interface PostingRow {
  key: string;
  kind: string;
  wallet: string;
  unassigned: string;
}

const ledgerKey = (providerTransferId: string) => `collectkey:payment:${providerTransferId}`;
/** The payment's postings: its credit or hold, the assignment of a held payment, its return to the payer. */
const KEYS = (ptid: string) => ({ first: ledgerKey(ptid), assign: `${ledgerKey(ptid)}:assign`, returned: `${ledgerKey(ptid)}:returned` });

/**
 * The postings each state allows (the declared inbound payment saga, docs/architecture.md; services/collect-key
 * domain/payment-machine.ts). `first`: the credit (ASSIGNED from the start) or the hold; `assign`,
 * `returned`: the way out of a hold. A money state may have done its step or not yet (live), never
 * once settled unless an open money exception parks it.
 */
type Step = 'credit' | 'hold' | 'none';
const RULES: Readonly<Record<string, { first: Step[]; assign: boolean[]; returned: boolean[]; owes: boolean }>> = {
  CREDITING: { first: ['none', 'credit'], assign: [false], returned: [false], owes: true },
  HOLDING: { first: ['none', 'hold'], assign: [false], returned: [false], owes: true },
  ASSIGNED: { first: ['credit', 'hold'], assign: [false, true], returned: [false], owes: false },
  UNASSIGNED: { first: ['hold'], assign: [false], returned: [false], owes: false },
  CREDIT_REFUSED: { first: ['none'], assign: [false], returned: [false], owes: false },
  ASSIGNING: { first: ['hold'], assign: [false, true], returned: [false], owes: true },
  RETURNING: { first: ['hold'], assign: [false], returned: [false, true], owes: true },
  RETURNED: { first: ['hold'], assign: [false], returned: [true], owes: false },
};
/**
 * How the deposits listing (pse-deposit's projection of deposit.* events) may show a Bre-B payment in
 * each state: a held payment stays UNASSIGNED while it is being assigned or returned; a returned one is
 * REVERSED; one never credited or held (CREDITING, CREDIT_REFUSED) is not listed.
 */
export const BREB_LISTING: Readonly<Record<string, readonly string[]>> = {
  CREDITING: [],
  CREDIT_REFUSED: [],
  HOLDING: ['UNASSIGNED'],
  ASSIGNED: ['ASSIGNED'],
  UNASSIGNED: ['UNASSIGNED'],
  ASSIGNING: ['UNASSIGNED'],
  RETURNING: ['UNASSIGNED'],
  RETURNED: ['REVERSED'],
};

/**
 * inbound: every Bre-B payment we received is booked exactly once, as its state says (RULES): a
 * credit puts its net in the company's Bre-B wallet, a hold the gross in unassigned_funds; a held
 * payment assigned later moves it from there to the wallet (`:assign`), returned later sends it back
 * to the network (`:returned`); one the ledger refused (CREDIT_REFUSED) is booked nowhere and has its
 * money exception. In the end: an ASSIGNED payment's net is in the wallet and nothing is held; an
 * UNASSIGNED one holds its gross; a RETURNED one holds nothing. A step owed past the sweepers'
 * horizon (or with nobody running, settled) is a violation unless an open exception parks it. Once
 * settled, each is listed once in the deposits listing as its state. The network's side: every
 * payment it delivered to us is one of ours, for the amount it sent.
 */
export async function checkInbound(s: CheckSources, o: CheckOptions, limit: number): Promise<CheckResult> {
  const bad = new Offenders(limit);
  const notChecked: string[] = [];
  const scope = companyScope(o, 2);
  const horizon = o.owedHorizonSeconds ?? OWED_HORIZON_SECONDS;
  let payments = 0,
    unassigned = 0,
    owed = 0;
  // Money exceptions of inbound payments are few: read once (resource = the deposit id).
  const openExceptions = new Set<string>();
  const anyException = new Set<string>();
  for (const e of await s.collectKey.query<{ resource_id: string; status: string }>(`select resource_id, status from collect_key.money_exceptions`)) {
    anyException.add(e.resource_id);
    if (e.status !== 'RESOLVED') openExceptions.add(e.resource_id);
  }
  let after = '';
  for (;;) {
    const page = await s.collectKey.query<PaymentRow>(
      `select deposit_id, provider_transfer_id, company_id, status, amount::text as amount, net_amount::text as net_amount, pending_step, step_at,
              extract(epoch from now() - coalesce(step_at, received_at))::int as owed_s
         from collect_key.payments where provider_transfer_id > $1${scope.sql} order by provider_transfer_id limit $2`,
      [after, PAGE, ...scope.params],
    );
    if (page.length === 0) break;
    after = page[page.length - 1]!.provider_transfer_id;
    payments += page.length;
    const postings = new Map(
      (
        await s.ledger.query<PostingRow>(
          `select p.idempotency_key as key, p.kind,
              coalesce(sum(e.amount) filter (where e.account = 'wallet_available:' || p.company_id || ':BREB'), 0)::text as wallet,
              coalesce(sum(e.amount) filter (where e.account = 'unassigned_funds:BREB'), 0)::text as unassigned
         from ledger.postings p left join ledger.entries e on e.posting_id = p.id
        where p.idempotency_key = any($1::text[]) group by p.id`,
          [page.flatMap((p) => Object.values(KEYS(p.provider_transfer_id)))],
        )
      ).map((p) => [p.key, p]),
    );
    const listed = o.settled
      ? new Map(
          (
            await s.deposit.query<{ ptid: string; status: string; n: number }>(
              `select provider_transfer_id as ptid, min(status) as status, count(*)::int as n from pse_deposit.deposits
        where provider_transfer_id = any($1::text[]) and source = 'BREB' group by 1`,
              [page.map((p) => p.provider_transfer_id)],
            )
          ).map((r) => [r.ptid, r]),
        )
      : undefined;

    for (const p of page) {
      const keys = KEYS(p.provider_transfer_id);
      const first = postings.get(keys.first);
      const assign = postings.get(keys.assign);
      const returned = postings.get(keys.returned);
      const say = (what: string) =>
        bad.add(`inbound payment ${p.provider_transfer_id} (deposit ${p.deposit_id}, company ${p.company_id}) ${p.status}: ${what}`);
      const rule = RULES[p.status];
      if (!rule) {
        say('unknown state');
        continue;
      }
      if (p.status === 'UNASSIGNED') unassigned++;
      const parked = openExceptions.has(p.deposit_id);
      if (first && first.kind !== 'inflow') say(`its ledger key holds a ${first.kind} posting, not an inflow`);
      const step: Step = !first ? 'none' : BigInt(first.unassigned) > 0n ? 'hold' : 'credit';
      const ok = rule.first.includes(step) && rule.assign.includes(!!assign) && rule.returned.includes(!!returned);
      if (!ok) {
        if (step === 'none' && !rule.first.includes('none')) say('recorded but booked nowhere (no ledger posting)');
        else say(`its postings (${step}${assign ? ', assign' : ''}${returned ? ', returned' : ''}) do not match its state`);
      }
      if (p.status === 'CREDIT_REFUSED' && !anyException.has(p.deposit_id)) say('refused by the ledger, but no money exception says so');
      if (rule.owes) {
        owed++;
        if (o.settled && !parked) say(`still owes its ${p.pending_step ?? 'money'} step with nobody running`);
        else if (!parked && (p.owed_s ?? 0) > horizon)
          say(`has owed its ${p.pending_step ?? 'money'} step for ${p.owed_s} s, past the sweepers' horizon (${horizon} s)`);
      }
      // What the ledger holds for it once its steps are done.
      const wallet = [first, assign, returned].reduce((sum, x) => sum + BigInt(x?.wallet ?? 0), 0n);
      const held = [first, assign, returned].reduce((sum, x) => sum + BigInt(x?.unassigned ?? 0), 0n);
      if (p.status === 'ASSIGNED' && (wallet !== BigInt(p.net_amount) || held !== 0n))
        say(`credited ${wallet} to the wallet and holds ${held} in unassigned funds, not its net ${p.net_amount}`);
      if (p.status === 'UNASSIGNED' && (held !== BigInt(p.amount) || wallet !== 0n))
        say(`holds ${held} in unassigned funds and ${wallet} in the wallet, not its amount ${p.amount}`);
      if (p.status === 'RETURNED' && (held !== 0n || wallet !== 0n)) say(`returned, but holds ${held} in unassigned funds and ${wallet} in the wallet`);
      if (listed && !rule.owes) {
        // Settled: listed once as its state says, or not at all.
        const l = listed.get(p.provider_transfer_id);
        const want = BREB_LISTING[p.status] ?? [];
        if (want.length === 0 ? !!l : !l || l.n !== 1 || !want.includes(l.status))
          say(`listed ${l ? `${l.n} time(s) as ${l.status}` : 'nowhere'} in the deposits listing${want.length ? `, not once as ${want.join(' or ')}` : ''}`);
      }
    }
  }

  // Their returns to the payers (docs/returns.md) against the ledger's holds.
  const ret = await checkReturnsInto(s, o, bad, horizon, 'collect-key');

  // What the network delivered (we answered 2xx) must be one of our payments, for its amount.
  if (s.rail?.deliveredInbound && !o.companyId) {
    let railAfter = '';
    let delivered = 0;
    for (;;) {
      const page = await s.rail.deliveredInbound(railAfter, PAGE);
      if (page.length === 0) break;
      railAfter = page[page.length - 1]!.providerTransferId;
      delivered += page.length;
      const ours = new Map(
        (
          await s.collectKey.query<{ ptid: string; amount: string }>(
            `select provider_transfer_id as ptid, amount::text as amount from collect_key.payments where provider_transfer_id = any($1::text[])`,
            [page.map((d) => d.providerTransferId)],
          )
        ).map((r) => [r.ptid, r.amount]),
      );
      for (const d of page) {
        const amount = ours.get(d.providerTransferId);
        if (amount === undefined) bad.add(`inbound payment ${d.providerTransferId} of ${d.amount} delivered by the network (${s.rail.name}) is booked nowhere`);
        else if (BigInt(amount) !== d.amount) bad.add(`inbound payment ${d.providerTransferId}: recorded ${amount}, the network sent ${d.amount}`);
      }
    }
    return {
      name: 'inbound',
      counts: [
        ['payments', payments],
        ['unassigned', unassigned],
        ['step owed', owed],
        ['returns', ret.returns],
        ['returns in flight', ret.live],
        ['delivered by the network', delivered],
      ],
      violations: bad.lines,
      total: bad.total,
      notChecked,
    };
  }
  notChecked.push(o.companyId ? 'network side (scoped to one company)' : 'network side (no rail truth)');
  return {
    name: 'inbound',
    counts: [
      ['payments', payments],
      ['unassigned', unassigned],
      ['step owed', owed],
      ['returns', ret.returns],
      ['returns in flight', ret.live],
    ],
    violations: bad.lines,
    total: bad.total,
    notChecked,
  };
}
