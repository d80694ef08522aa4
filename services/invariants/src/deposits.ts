import { checkReturnsInto } from './returns.js';
import { BREB_LISTING } from './inbound.js';
import { OWED_HORIZON_SECONDS, Offenders, PAGE, companyScope, type CheckOptions, type CheckResult, type CheckSources } from './report.js';

interface DepositRow {
  id: string;
  company_id: string;
  source: 'PSE' | 'BREB';
  status: string;
  net_amount: string;
  provider_transfer_id: string | null;
  step_at: Date | null;
  owed_s: number | null;
}
interface PostingRow {
  key: string;
  kind: string;
  wallet: string;
}
interface PaymentRow {
  provider_transfer_id: string;
  status: string;
}

/** What a PSE deposit's postings must be, per status (LEDGER.md "deposit"). */
const PSE_POSTINGS: Readonly<Record<string, { inflows: number[]; reversals: number[] }>> = {
  PENDING_CONFIRM: { inflows: [0], reversals: [0] },
  FAILED: { inflows: [0], reversals: [0] },
  EXPIRED: { inflows: [0], reversals: [0] },
  CREDITING: { inflows: [0, 1], reversals: [0] }, // the credit may have landed: the step closes it
  ASSIGNED: { inflows: [1], reversals: [0] },
  REVERSING: { inflows: [1], reversals: [0, 1] },
  REVERSED: { inflows: [1], reversals: [1] },
};
const SETTLED_PSE_POSTINGS: Readonly<Record<string, { inflows: number[]; reversals: number[] }>> = {
  ...PSE_POSTINGS,
  CREDITING: { inflows: [0], reversals: [0] },
  REVERSING: { inflows: [1], reversals: [0] },
};
/** The exception that parks a deposit whose money step the ledger refused. */
const PARKED_BY: Readonly<Record<string, string>> = { CREDITING: 'CREDIT_REFUSED', REVERSING: 'REVERSAL_REFUSED' };

/**
 * deposits: every ASSIGNED deposit credited exactly once (the net to the company's wallet), a
 * REVERSED one credited once and debited back once, one never paid has no posting; in the listing,
 * an inbound Bre-B deposit (source BREB) matches its collect-key payment. The provider's side (PSE):
 * paid ⇒ credited, reversed ⇒ reversed, not paid ⇒ never credited, unless an exception says why.
 */
export async function checkDeposits(s: CheckSources, o: CheckOptions, limit: number): Promise<CheckResult> {
  const bad = new Offenders(limit);
  const notChecked: string[] = [];
  const rules = o.settled ? SETTLED_PSE_POSTINGS : PSE_POSTINGS;
  const horizon = o.owedHorizonSeconds ?? OWED_HORIZON_SECONDS;
  const scope = companyScope(o, 2);
  // Money exceptions of deposits are few: read once. An open one parks its deposit's money step; any
  // one, resolved too, explains why the provider and we disagree (e.g. PAID_AFTER_EXPIRY).
  const exceptions = new Map<string, string[]>();
  const explained = new Set<string>();
  for (const e of await s.deposit.query<{ resource_id: string; kind: string; status: string }>(
    `select resource_id, kind, status from pse_deposit.money_exceptions`,
  )) {
    explained.add(e.resource_id);
    if (e.status !== 'RESOLVED') exceptions.set(e.resource_id, [...(exceptions.get(e.resource_id) ?? []), e.kind]);
  }

  let pse = 0,
    breb = 0,
    assigned = 0;
  let after = '';
  for (;;) {
    const page = await s.deposit.query<DepositRow>(
      `select id, company_id, source, status, net_amount::text as net_amount, provider_transfer_id, step_at,
              extract(epoch from now() - step_at)::int as owed_s
         from pse_deposit.deposits where id > $1${scope.sql} order by id limit $2`,
      [after, PAGE, ...scope.params],
    );
    if (page.length === 0) break;
    after = page[page.length - 1]!.id;
    const psePage = page.filter((d) => d.source === 'PSE');
    const brebPage = page.filter((d) => d.source === 'BREB');
    pse += psePage.length;
    breb += brebPage.length;
    assigned += page.filter((d) => d.status === 'ASSIGNED').length;

    // PSE: the two postings a deposit may have, and what they did to the company's ACH wallet.
    const postings =
      psePage.length === 0
        ? []
        : await s.ledger.query<PostingRow>(
            `select p.idempotency_key as key, p.kind,
              coalesce(sum(e.amount) filter (where e.account = 'wallet_available:' || p.company_id || ':ACH'), 0)::text as wallet
         from ledger.postings p left join ledger.entries e on e.posting_id = p.id
        where p.idempotency_key = any($1::text[]) group by p.id`,
            [psePage.flatMap((d) => [`deposit:${d.id}:paid`, `deposit:${d.id}:reversed`])],
          );
    const posted = new Map(postings.map((p) => [p.key, p]));
    const links = s.rail?.pseLinks && psePage.length ? await s.rail.pseLinks(psePage.map((d) => d.id)) : undefined;

    for (const d of psePage) {
      const paid = posted.get(`deposit:${d.id}:paid`);
      const reversed = posted.get(`deposit:${d.id}:reversed`);
      const inflows = paid?.kind === 'inflow' ? 1 : 0;
      const reversals = reversed?.kind === 'reversal' ? 1 : 0;
      const wallet = BigInt(paid?.wallet ?? 0) + BigInt(reversed?.wallet ?? 0);
      const exc = exceptions.get(d.id) ?? [];
      const say = (what: string) =>
        bad.add(`deposit ${d.id} (company ${d.company_id}) ${d.status}: ${what} (inflow ${inflows}, reversal ${reversals}, wallet ${wallet})`);
      const rule = rules[d.status];
      if (!rule) {
        say('unknown status for a PSE deposit');
        continue;
      }
      const parked = PARKED_BY[d.status] !== undefined && exc.includes(PARKED_BY[d.status]!);
      if (!(rule.inflows.includes(inflows) && rule.reversals.includes(reversals)) && !parked) say('postings do not match its status');
      if (d.status === 'ASSIGNED' && inflows === 1 && wallet !== BigInt(d.net_amount)) say(`credited ${wallet}, not its net ${d.net_amount}`);
      if (d.status === 'REVERSED' && inflows + reversals === 2 && wallet !== 0n) say('credited and debited back, but the wallet is off by the difference');
      const owes = d.status === 'CREDITING' || d.status === 'REVERSING';
      if (o.settled && owes && !(parked && d.step_at === null)) say('still owes its money step with nobody running');
      else if (owes && !parked && (d.step_at === null || (d.owed_s ?? 0) > horizon)) {
        say(
          d.step_at === null
            ? 'parked for an operator, but no open money exception says so'
            : `has owed its money step for ${d.owed_s} s, past the sweepers' horizon (${horizon} s), and no open exception parks it`,
        );
      }
      if (links) {
        const provider = links.get(d.id);
        const credited = inflows === 1 && reversals === 0;
        if (
          (provider === 'PAID' || provider === 'REVERSED') &&
          inflows === 0 &&
          (o.settled || d.status !== 'PENDING_CONFIRM') &&
          d.status !== 'CREDITING' &&
          !explained.has(d.id)
        ) {
          say(`${provider} at the provider (${s.rail!.name}) but never credited, and no exception`);
        }
        if (provider === 'REVERSED' && credited && (o.settled || d.status !== 'ASSIGNED') && d.status !== 'REVERSING' && !explained.has(d.id))
          say('reversed at the provider but still credited');
        if (provider !== 'PAID' && provider !== 'REVERSED' && inflows === 1 && !explained.has(d.id))
          say(`credited, but the provider says ${provider ?? 'it has no such link'}`);
      }
    }

    // Bre-B listing rows: each one matches the collect-key payment it projects (credited there).
    if (brebPage.length) {
      const payments = new Map(
        (
          await s.collectKey.query<PaymentRow>(`select provider_transfer_id, status from collect_key.payments where provider_transfer_id = any($1::text[])`, [
            brebPage.map((d) => d.provider_transfer_id),
          ])
        ).map((p) => [p.provider_transfer_id, p]),
      );
      for (const d of brebPage) {
        const p = d.provider_transfer_id ? payments.get(d.provider_transfer_id) : undefined;
        if (!p) bad.add(`deposit ${d.id} (company ${d.company_id}) ${d.status}: listed as a Bre-B payment the collect-key service does not have`);
        else if (!(BREB_LISTING[p.status] ?? [p.status]).includes(d.status))
          bad.add(`deposit ${d.id} (company ${d.company_id}) is listed ${d.status} but its payment is ${p.status}`);
      }
    }
  }
  if (!s.rail?.pseLinks) notChecked.push('PSE provider side (no rail truth)');
  // Their refunds to the payers (docs/returns.md) against the ledger's holds.
  const ret = await checkReturnsInto(s, o, bad, horizon, 'pse-deposit');
  return {
    name: 'deposits',
    counts: [
      ['PSE deposits', pse],
      ['Bre-B listed', breb],
      ['ASSIGNED', assigned],
      ['refunds', ret.returns],
      ['refunds in flight', ret.live],
    ],
    violations: bad.lines,
    total: bad.total,
    notChecked,
  };
}
