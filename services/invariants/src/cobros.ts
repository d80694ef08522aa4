import { OWED_HORIZON_SECONDS, Offenders, companyScope, type CheckOptions, type CheckResult, type CheckSources } from './report.js';

interface CobroRow {
  id: string;
  company_id: string;
  state: string;
  amount_type: string;
  amount: string | null;
  min_amount: string | null;
  paid_amount: string;
  tolerance_below: string;
  counted: string;
  returned_amount: string;
  counted_returned: string;
  breb_key_id: string | null;
  key_closed_at: Date | null;
  closed_s: number | null;
}
interface PaymentRow {
  deposit_id: string;
  cobro_id: string;
  company_id: string;
  amount: string;
  d_company: string | null;
  d_amount: string | null;
  d_status: string | null;
  unmatched: boolean;
  source: string;
  returned_cents: string;
  auto_return_id: string | null;
  disposition: string;
  reversed_cents: string;
  cobro_state: string;
  /** Seconds since the deposit last changed (a REVERSED one: since it was debited back). */
  d_age_s: number | null;
}

const OPEN = ['OPEN', 'PARTIALLY_PAID'];

/**
 * cobros (docs/cobros.md): every matched payment is counted once (one cobro, never also listed
 * unmatched) and is a deposit of the same company and amount, credited — or reversed by its provider, and then
 * marked reversed on the cobro (its gross; one reversed moments ago may still be on its way) and no longer
 * counted; a cobro's paid total is the sum of its COUNTED payments not reversed (less what of them is returned
 * automatically), and its state agrees (PAID exactly when the total reaches what is due); a payment accepted
 * beyond a PAID cobro (EXCESS) is only on a PAID cobro (a reversal that leaves it short counts them again); its returned amount is what its COUNTED payments had returned since, and each payment's is the returns that reached its payer at
 * the payment's owner (the automatic one aside; one younger than the horizon may still be on its way); across services, an open cobro's dynamic key is ACTIVE at collect-key and a closed one's is
 * deleted once its close is recorded (a close still owed past the sweepers' horizon is a violation).
 */
export async function checkCobros(s: CheckSources, o: CheckOptions, limit: number): Promise<CheckResult> {
  const bad = new Offenders(limit);
  const horizon = o.owedHorizonSeconds ?? OWED_HORIZON_SECONDS;
  const scope = companyScope(o, 0, 'c.company_id');
  const cobros = await s.deposit.query<CobroRow>(
    `select c.id, c.company_id, c.state, c.amount_type, c.amount::text as amount, c.min_amount::text as min_amount, c.paid_amount::text as paid_amount,
            c.tolerance_below::text as tolerance_below,
            coalesce((select sum(p.amount - p.auto_return_cents) from pse_deposit.cobro_payments p
                       where p.cobro_id = c.id and p.disposition = 'COUNTED' and p.reversed_cents = 0), 0)::text as counted,
            c.returned_amount::text as returned_amount,
            coalesce((select sum(p.returned_cents) from pse_deposit.cobro_payments p
                       where p.cobro_id = c.id and p.disposition = 'COUNTED' and p.reversed_cents = 0), 0)::text as counted_returned,
            c.breb_key_id, c.key_closed_at, extract(epoch from now() - c.closed_at)::int as closed_s
       from pse_deposit.cobros c where c.state not in ('CREATING', 'ABANDONED')${scope.sql}`,
    scope.params,
  );
  let open = 0;
  for (const c of cobros) {
    const paid = BigInt(c.paid_amount);
    // What completes it: its amount (a range's minimum) less the tolerance it was made with; an open amount, any payment.
    const due =
      (c.amount_type === 'FIXED' ? BigInt(c.amount ?? '0') : c.amount_type === 'RANGE' ? BigInt(c.min_amount ?? '0') : 1n) -
      (c.amount_type === 'OPEN' ? 0n : BigInt(c.tolerance_below));
    if (c.paid_amount !== c.counted)
      bad.add(`cobro ${c.id} (company ${c.company_id}) ${c.state}: paid ${c.paid_amount} but its COUNTED payments not reversed sum ${c.counted}`);
    if (c.returned_amount !== c.counted_returned)
      bad.add(
        `cobro ${c.id} (company ${c.company_id}) ${c.state}: returned ${c.returned_amount} but its COUNTED payments not reversed had ${c.counted_returned} returned`,
      );
    if (c.state === 'PAID' && paid < due) bad.add(`cobro ${c.id} (company ${c.company_id}) PAID with ${paid} of ${due}`);
    if (OPEN.includes(c.state)) {
      open++;
      if (paid >= due) bad.add(`cobro ${c.id} (company ${c.company_id}) ${c.state} with ${paid} of ${due}: it should be PAID`);
      if (c.state === 'OPEN' && paid !== 0n) bad.add(`cobro ${c.id} (company ${c.company_id}) OPEN with ${paid} paid`);
    }
  }

  const payments = await s.deposit.query<PaymentRow>(
    `select p.deposit_id, p.cobro_id, p.company_id, p.amount::text as amount, d.company_id as d_company, d.amount::text as d_amount, d.status as d_status,
            exists (select 1 from pse_deposit.cobro_unmatched u where u.deposit_id = p.deposit_id) as unmatched,
            p.source, p.returned_cents::text as returned_cents, p.auto_return_id, p.disposition, p.reversed_cents::text as reversed_cents,
            c.state as cobro_state, extract(epoch from now() - d.updated_at)::int as d_age_s
       from pse_deposit.cobro_payments p left join pse_deposit.deposits d on d.id = p.deposit_id
       join pse_deposit.cobros c on c.id = p.cobro_id where true${scope.sql}`,
    scope.params,
  );
  for (const p of payments) {
    const who = `payment ${p.deposit_id} of cobro ${p.cobro_id} (company ${p.company_id})`;
    if (p.d_company === null) bad.add(`${who}: no such deposit`);
    else if (p.d_company !== p.company_id) bad.add(`${who}: the deposit is company ${p.d_company}'s`);
    else if (p.d_amount !== p.amount) bad.add(`${who}: matched ${p.amount}, the deposit is ${p.d_amount}`);
    else if (p.reversed_cents !== '0') {
      // Reversed on the cobro: by its provider, whole.
      if (p.d_status !== 'REVERSED') bad.add(`${who}: marked reversed on the cobro, but the deposit is ${p.d_status}`);
      if (p.reversed_cents !== p.amount) bad.add(`${who}: ${p.reversed_cents} reversed on the cobro, the payment is ${p.amount}`);
    } else if (p.d_status === 'REVERSED') {
      // The provider reversed it: the deposit's event takes it off the cobro moments later.
      if (o.settled || (p.d_age_s ?? 0) > horizon)
        bad.add(`${who}: the deposit was reversed ${p.d_age_s} s ago, but the cobro still takes it as paid (a cobro does not count reversals)`);
    } else if (p.d_status !== 'ASSIGNED' && p.d_status !== 'REVERSING') {
      // REVERSING: the provider's reversal is being debited back; the payment still counts until it is.
      bad.add(`${who}: the deposit is ${p.d_status}, not credited`);
    }
    if (p.disposition === 'EXCESS' && p.reversed_cents === '0' && p.cobro_state !== 'PAID')
      bad.add(`${who}: accepted beyond the amount (EXCESS), but the cobro is ${p.cobro_state}: it should count`);
    if (p.unmatched) bad.add(`${who}: also listed unmatched`);
  }

  // Across services: what each matched payment had returned, against the returns that reached its payer at its owner
  // (collect-key for Bre-B, this service for PSE), the automatic return aside.
  const owned = new Map<string, { sum: bigint; youngest: number }>();
  for (let i = 0; i < payments.length; i += 1000) {
    const slice = payments.slice(i, i + 1000);
    const ids = (src: string) => slice.filter((p) => p.source === src).map((p) => p.deposit_id);
    const sql = (table: string) =>
      `select r.deposit_id, r.id, r.amount::text as amount, extract(epoch from now() - r.returned_at)::int as age_s
         from ${table} r where r.deposit_id = any($1::text[]) and r.status = 'RETURNED'`;
    const rows = [
      ...(await s.collectKey.query<{ deposit_id: string; id: string; amount: string; age_s: number }>(sql('collect_key.payment_returns'), [ids('BREB')])),
      ...(await s.deposit.query<{ deposit_id: string; id: string; amount: string; age_s: number }>(sql('pse_deposit.deposit_returns'), [ids('PSE')])),
    ];
    const auto = new Set(slice.map((p) => p.auto_return_id).filter((x): x is string => x !== null));
    for (const r of rows) {
      if (auto.has(r.id)) continue;
      const o = owned.get(r.deposit_id) ?? { sum: 0n, youngest: Infinity };
      owned.set(r.deposit_id, { sum: o.sum + BigInt(r.amount), youngest: Math.min(o.youngest, r.age_s ?? 0) });
    }
  }
  for (const p of payments) {
    const at = owned.get(p.deposit_id) ?? { sum: 0n, youngest: Infinity };
    const returned = BigInt(p.returned_cents);
    if (returned === at.sum) continue;
    // A return that reached the payer moments ago may still be on its way to the cobro (the owner's event).
    if (returned < at.sum && !o.settled && at.youngest <= horizon) continue;
    bad.add(`payment ${p.deposit_id} of cobro ${p.cobro_id} (company ${p.company_id}): ${returned} returned on the cobro, ${at.sum} returned at its owner`);
  }

  // Across services: the dynamic keys (collect-key's rows, by cobro).
  const keyed = cobros.filter((c) => c.breb_key_id !== null);
  const keys = new Map<string, string>();
  for (let i = 0; i < keyed.length; i += 1000) {
    const ids = keyed.slice(i, i + 1000).map((c) => c.id);
    for (const k of await s.collectKey.query<{ cobro_id: string; state: string }>(
      `select cobro_id, state from collect_key.keys where cobro_id = any($1::text[]) and state <> 'FAILED'`,
      [ids],
    ))
      keys.set(k.cobro_id, k.state);
  }
  for (const c of keyed) {
    const state = keys.get(c.id);
    const who = `cobro ${c.id} (company ${c.company_id}) ${c.state}`;
    if (state === undefined) bad.add(`${who}: its dynamic key ${c.breb_key_id} is not at collect-key`);
    else if (OPEN.includes(c.state) && state !== 'ACTIVE') bad.add(`${who}: its dynamic key is ${state}, not ACTIVE`);
    else if (c.key_closed_at !== null && state !== 'DELETED') bad.add(`${who}: its key close is recorded but the key is ${state}`);
    else if ((c.state === 'EXPIRED' || c.state === 'CANCELLED') && c.key_closed_at === null && (c.closed_s ?? 0) > horizon)
      bad.add(`${who}: its dynamic key is still to be deleted ${c.closed_s} s after the close`);
  }

  // Automatic returns (policy `return`): one asked for is a return at the payment's owner, for the
  // amount recorded; one still owed past the sweepers' horizon is a violation.
  const autos = await s.deposit.query<{
    deposit_id: string;
    cobro_id: string;
    source: string;
    cents: string;
    return_id: string;
    status: string;
    owed_s: number;
  }>(
    `select p.deposit_id, p.cobro_id, p.source, p.auto_return_cents::text as cents, p.auto_return_id as return_id, p.auto_return_status as status,
            extract(epoch from now() - p.matched_at)::int as owed_s
       from pse_deposit.cobro_payments p where p.auto_return_id is not null${companyScope(o, 0, 'p.company_id').sql}`,
    companyScope(o, 0, 'p.company_id').params,
  );
  const found = new Map<string, string>();
  for (let i = 0; i < autos.length; i += 1000) {
    const slice = autos.slice(i, i + 1000);
    const ids = (src: string) => slice.filter((a) => a.source === src).map((a) => a.return_id);
    for (const r of await s.collectKey.query<{ id: string; amount: string }>(
      `select id, amount::text as amount from collect_key.payment_returns where id = any($1::text[])`,
      [ids('BREB')],
    ))
      found.set(r.id, r.amount);
    for (const r of await s.deposit.query<{ id: string; amount: string }>(
      `select id, amount::text as amount from pse_deposit.deposit_returns where id = any($1::text[])`,
      [ids('PSE')],
    ))
      found.set(r.id, r.amount);
  }
  for (const a of autos) {
    const who = `automatic return ${a.return_id} of payment ${a.deposit_id} (cobro ${a.cobro_id}) ${a.status}`;
    const amount = found.get(a.return_id);
    if (a.status === 'REQUESTED' && amount === undefined) bad.add(`${who}: no such return at the payment's owner`);
    else if (amount !== undefined && amount !== a.cents) bad.add(`${who}: ${a.cents} recorded, the return is for ${amount}`);
    if (a.status === 'OWED' && (o.settled || a.owed_s > horizon)) bad.add(`${who}: still owed ${a.owed_s} s after the match`);
  }

  return {
    name: 'cobros',
    counts: [
      ['cobros', cobros.length],
      ['open', open],
      ['matched payments', payments.length],
      ['automatic returns', autos.length],
    ],
    violations: bad.lines,
    total: bad.total,
    notChecked: [],
  };
}
