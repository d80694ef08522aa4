// The invariants checked after a fault run, over the services' schemas (read-only SQL on the run's
// own database) and the ledger's CheckInvariants RPC. Each check returns its offenders as lines.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

const LIVE = `('RECEIVED','RESERVED','AWAITING_APPROVAL','EXECUTING','DISPATCHED','ABANDONING','RELEASING','EXPIRING','COMPLETING')`;
const LIST = 50;

/** Postings per movement by kind, aggregated once (postings have no index on movement_id). */
const PC = `pc as (select movement_id,
    count(*) filter (where kind = 'reserve')::int as reserves, count(*) filter (where kind = 'commit')::int as commits,
    count(*) filter (where kind = 'release')::int as releases, count(*) filter (where kind = 'inflow')::int as inflows,
    count(*) filter (where kind = 'reversal')::int as reversals, count(*)::int as postings
  from ledger.postings where movement_id is not null group by movement_id)`;

/** `only`: run just the check of that name (the self-test). */
export async function runChecks({ db, ledger, record, natsUrl, only }) {
  const checks = [];
  const check = async (name, fn) => {
    if (only && name !== only) return;
    let violations;
    try { violations = await fn(); } catch (err) { violations = [`check failed to run: ${err.message}`]; }
    checks.push({ name, violations: violations.slice(0, LIST).concat(violations.length > LIST ? [`… ${violations.length - LIST} more`] : []), total: violations.length });
  };
  const rows = async (sql, params = []) => (await db.query(sql, params)).rows;

  await check('ledger CheckInvariants RPC (LEDGER.md 1-5)', async () => {
    const r = await ledger.checkInvariants({}, { requestId: 'faults-invariants' });
    return r.ok ? [] : r.violations;
  });
  await check('journal sums to zero', async () =>
    (await rows(`select coalesce(sum(amount), 0)::text as s, count(*)::int as n from ledger.entries`)).filter((r) => r.s !== '0').map((r) => `journal sums to ${r.s} over ${r.n} entries`));
  await check('every wallet equals its journal', async () => (await rows(`
      with j as (
        select split_part(account, ':', 2) as company_id, split_part(account, ':', 3) as rail,
               coalesce(sum(amount) filter (where starts_with(account, 'wallet_available:')), 0) as available,
               coalesce(sum(amount) filter (where starts_with(account, 'wallet_pending_out:')), 0) as pending
          from ledger.entries where starts_with(account, 'wallet_') group by 1, 2)
      select w.company_id, w.rail, w.available_cents::text as a, coalesce(j.available, 0)::text as ja, w.pending_out_cents::text as p, coalesce(j.pending, 0)::text as jp
        from ledger.wallets w left join j using (company_id, rail)
       where w.available_cents <> coalesce(j.available, 0) or w.pending_out_cents <> coalesce(j.pending, 0)`))
    .map((r) => `wallet ${r.company_id}:${r.rail} available ${r.a} vs journal ${r.ja}, pending ${r.p} vs journal ${r.jp}`));
  await check('no wallet negative', async () => (await rows(`
      select company_id, rail, available_cents::text as a, pending_out_cents::text as p from ledger.wallets w
       where pending_out_cents < 0 or (available_cents < 0 and not exists (
         select 1 from ledger.postings x where x.kind = 'reversal' and x.company_id = w.company_id and x.rail = w.rail))`))
    .map((r) => `wallet ${r.company_id}:${r.rail} available ${r.a}, pending_out ${r.p}`));

  // Sends: every transfer the service holds (also those whose 201 a fault swallowed).
  const transfers = await rows(`
      with ${PC}
      select t.id::text as id, t.company_id, t.state, t.reference, m.status as movement_status, s.status as provider_status,
             coalesce(pc.reserves, 0) as reserves, coalesce(pc.commits, 0) as commits, coalesce(pc.releases, 0) as releases, coalesce(pc.postings, 0) as postings
        from transfer.transfers t
        left join ledger.movements m on m.id = t.id
        left join sandbox.transfers s on s.transaction_id = t.id::text
        left join pc on pc.movement_id = t.id`);
  const byId = new Map(transfers.map((t) => [t.id, t]));
  await check('every accepted send (201/200) is known and final: COMPLETED, FAILED or EXPIRED', async () => {
    const v = [];
    for (const [id, a] of record.accepted) {
      const t = byId.get(id);
      if (!t) v.push(`accepted send ${id} (${a.rail} ${a.amount}) is unknown to the transfer service`);
      else if (!['COMPLETED', 'FAILED', 'EXPIRED'].includes(t.state)) v.push(`accepted send ${id} is ${t.state}`);
    }
    for (const t of transfers) if (LIVE.includes(`'${t.state}'`)) v.push(`transfer ${t.id} still ${t.state}`);
    return v;
  });
  await check('each final send has its ledger effect exactly once (reserve + commit or release); a refused one none', async () => {
    const v = [];
    for (const t of transfers) {
      if (t.state === 'REJECTED') { if (t.postings !== 0) v.push(`refused transfer ${t.id} has ${t.postings} postings`); continue; }
      if (LIVE.includes(`'${t.state}'`)) continue;
      if (t.movement_status !== t.state) v.push(`transfer ${t.id} is ${t.state} but its ledger movement is ${t.movement_status ?? 'missing'}`);
      const want = t.state === 'COMPLETED' ? [1, 1, 0] : [1, 0, 1];
      const got = [t.reserves, t.commits, t.releases];
      if (want.join() !== got.join()) v.push(`transfer ${t.id} ${t.state}: reserve/commit/release postings ${got.join('/')} (want ${want.join('/')})`);
    }
    return v;
  });
  await check('the provider and the product agree: paid out at the rail ⇔ COMPLETED', async () => transfers
    .filter((t) => (t.provider_status === 'COMPLETED') !== (t.state === 'COMPLETED'))
    .map((t) => `transfer ${t.id} is ${t.state} but the rail says ${t.provider_status ?? 'never received'}`));
  await check('a refused send (4xx) left no transfer and no ledger movement', async () => {
    if (!record.refusedRefs.length) return [];
    const found = await rows(`
        with r as (select distinct * from unnest($1::text[], $2::text[]) as r(company_id, reference)),
             t as (select company_id, reference, count(*)::int as n from transfer.transfers where reference is not null and state <> 'REJECTED' group by 1, 2),
             m as (select company_id, reference, count(*)::int as n from ledger.movements where reference is not null group by 1, 2)
        select r.company_id, r.reference, coalesce(t.n, 0) as transfers, coalesce(m.n, 0) as movements
          from r left join t using (company_id, reference) left join m using (company_id, reference)`, [record.refusedRefs.map((x) => x.companyId), record.refusedRefs.map((x) => x.reference)]);
    return found.filter((r) => r.transfers > 0 || r.movements > 0).map((r) => `refused send ${r.reference} of ${r.company_id}: ${r.transfers} transfers, ${r.movements} movements`);
  });
  await check('no (company, reference) produced two transfers inside the idempotency window', async () => [
    ...(await rows(`
      select a.company_id, a.reference, a.id::text as a, b.id::text as b from transfer.transfers a
        join transfer.transfers b on b.company_id = a.company_id and b.reference = a.reference and b.id > a.id
       where a.reference is not null and a.state <> 'REJECTED' and b.state <> 'REJECTED'
         and abs(extract(epoch from b.created_at - a.created_at)) < 60`)).map((r) => `reference ${r.reference} of ${r.company_id}: transfers ${r.a} and ${r.b}`),
    ...(await rows(`
      select a.company_id, a.reference, count(*)::int as n from ledger.movements a
       where a.type = 'TRANSFER_OUT' and a.reference is not null group by 1, 2 having count(*) > 1`)).map((r) => `reference ${r.reference} of ${r.company_id}: ${r.n} ledger movements`),
  ]);

  // PSE deposits: the provider's record of each link is the truth of what was paid.
  await check('every paid PSE deposit credited exactly once (and reversed once if the provider reversed it); an unpaid one never', async () => {
    const v = [];
    const links = await rows(`
        with ${PC}
        select l.deposit_id, l.status as provider, d.status, d.id is not null as known,
               coalesce(pc.inflows, 0) as inflows, coalesce(pc.reversals, 0) as reversals
          from sandbox.pse_links l left join pse_deposit.deposits d on d.id = l.deposit_id left join pc on pc.movement_id = d.movement_id`);
    const provider = new Map(links.map((l) => [l.deposit_id, l.provider]));
    for (const l of links) {
      // A link the provider made while the product's call timed out: the product stored nothing and
      // told the client so (nobody has its URL). Only a payment of such a link would lose money.
      if (!l.known) { if (l.provider !== 'PENDING') v.push(`deposit ${l.deposit_id} ${l.provider} at the provider is unknown to the product`); continue; }
      if (l.provider === 'PAID' && (l.status !== 'ASSIGNED' || l.inflows !== 1 || l.reversals !== 0)) v.push(`deposit ${l.deposit_id} paid at the provider: ${l.status}, ${l.inflows} inflow and ${l.reversals} reversal postings`);
      if (l.provider === 'REVERSED' && (l.status !== 'REVERSED' || l.inflows !== 1 || l.reversals !== 1)) v.push(`deposit ${l.deposit_id} paid then reversed at the provider: ${l.status}, ${l.inflows} inflow and ${l.reversals} reversal postings`);
      if (l.provider !== 'PAID' && l.provider !== 'REVERSED' && l.inflows + l.reversals !== 0) v.push(`deposit ${l.deposit_id} ${l.provider} at the provider has ${l.inflows} inflow and ${l.reversals} reversal postings`);
      if (l.provider === 'FAILED' && l.status !== 'FAILED') v.push(`deposit ${l.deposit_id} rejected at the provider is ${l.status}`);
    }
    for (const [id, d] of record.deposits) if (d.paid && !['PAID', 'REVERSED'].includes(provider.get(id))) v.push(`deposit ${id} paid per the client is ${provider.get(id) ?? 'unknown'} at the provider`);
    const orphans = await rows(`with ${PC} select d.id, coalesce(pc.inflows, 0) as n
        from pse_deposit.deposits d left join pc on pc.movement_id = d.movement_id
       where d.source = 'PSE' and not exists (select 1 from sandbox.pse_links l where l.deposit_id = d.id)`);
    for (const o of orphans) if (o.n !== 0) v.push(`deposit ${o.id} without a provider link has ${o.n} inflow postings`);
    return v;
  });
  await check('every inbound Bre-B payment credited exactly once, listed once', async () => {
    const v = [];
    const inc = await rows(`
        with ${PC},
          pay as (select provider_transfer_id, count(*)::int as n from collect_key.payments group by 1),
          lst as (select provider_transfer_id, count(*)::int as n from pse_deposit.deposits where provider_transfer_id is not null group by 1)
        select i.provider_transfer_id as ptid, i.amount_cents::text as amount, p.deposit_id, p.status, p.pending_step, p.amount::text as recorded, d.status as listing,
               coalesce(pay.n, 0) as payments, coalesce(lst.n, 0) as listings, coalesce(pc.inflows, 0) as inflows
          from sandbox.breb_incoming i
          left join collect_key.payments p on p.provider_transfer_id = i.provider_transfer_id
          left join pse_deposit.deposits d on d.id = p.deposit_id
          left join pay on pay.provider_transfer_id = i.provider_transfer_id
          left join lst on lst.provider_transfer_id = i.provider_transfer_id
          left join pc on pc.movement_id = p.movement_id`);
    const known = new Set(inc.map((r) => r.ptid));
    for (const id of record.incoming.keys()) if (!known.has(id)) v.push(`inbound payment ${id} (202 to the client) unknown to the network`);
    for (const r of inc) {
      if (r.payments !== 1) { v.push(`inbound payment ${r.ptid}: ${r.payments} payment rows`); continue; }
      if (r.status !== 'ASSIGNED') v.push(`inbound payment ${r.ptid} to an active key is ${r.status}`);
      if (r.pending_step) v.push(`inbound payment ${r.ptid} still has step ${r.pending_step}`);
      if (r.recorded !== r.amount) v.push(`inbound payment ${r.ptid}: amount ${r.recorded} vs ${r.amount} at the network`);
      if (r.inflows !== (r.status === 'ASSIGNED' ? 1 : 0)) v.push(`inbound payment ${r.ptid} ${r.status}: ${r.inflows} inflow postings`);
      if (r.listings !== 1 || r.listing !== r.status) v.push(`inbound payment ${r.ptid} ${r.status}: ${r.listings} listing rows (${r.listing ?? 'none'})`);
    }
    return v;
  });

  // Consumers: every event consumed, with its effect once.
  await check('receipt read model: one row per transfer and per deposit, at its final status', async () => [
    ...(await rows(`select t.id::text as id, t.state, r.status from transfer.transfers t left join receipt.transactions r on r.id = t.id::text
        where t.state <> 'REJECTED' and (r.id is null or r.status is distinct from t.state)`)).map((r) => `transfer ${r.id} ${r.state}: receipt row ${r.status ?? 'missing'}`),
    ...(await rows(`select d.id, d.status, r.status as rs from pse_deposit.deposits d left join receipt.deposits r on r.id = d.id
        where r.id is null or r.status is distinct from d.status`)).map((r) => `deposit ${r.id} ${r.status}: receipt row ${r.rs ?? 'missing'}`),
  ]);
  await check('every outbox drained', async () => {
    const schemas = (await rows(`select table_schema from information_schema.tables where table_name = 'outbox' order by 1`)).map((r) => r.table_schema);
    const v = [];
    for (const s of schemas) {
      const [r] = await rows(`select count(*)::int as n from "${s}".outbox where published_at is null`);
      if (r.n) v.push(`${s}.outbox: ${r.n} unpublished rows`);
    }
    return v;
  });
  await check('every provider callback delivered (none abandoned)', async () =>
    (await rows(`select state, count(*)::int as n from sandbox.callbacks where state <> 'delivered' group by 1`)).map((r) => `${r.n} callbacks ${r.state}`));
  if (natsUrl) {
    await check('every JetStream consumer caught up (nothing pending or unacknowledged)', async () => {
      const nc = await connect({ servers: natsUrl });
      try {
        const jsm = await jetstreamManager(nc);
        const v = [];
        for await (const si of jsm.streams.list()) {
          for await (const ci of jsm.consumers.list(si.config.name)) {
            if (ci.num_pending > 0 || ci.num_ack_pending > 0) v.push(`${si.config.name}/${ci.name}: ${ci.num_pending} pending, ${ci.num_ack_pending} unacknowledged`);
          }
        }
        return v;
      } finally { await nc.close(); }
    });
  }
  return checks;
}

/** Consumers still behind (for the settle loop). */
export async function consumersBehind(natsUrl) {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    let n = 0;
    for await (const si of jsm.streams.list()) for await (const ci of jsm.consumers.list(si.config.name)) n += ci.num_pending + ci.num_ack_pending;
    return n;
  } finally { await nc.close(); }
}

/** What the faults did to the flows (evidence that they hit work in flight), for the summary. */
export async function observations(db) {
  const one = async (sql) => (await db.query(sql)).rows[0]?.n ?? 0;
  const states = (await db.query(`select state, count(*)::int as n from transfer.transfers group by 1 order by 1`)).rows.map((r) => `${r.state} ${r.n}`).join(', ');
  const deposits = (await db.query(`select source || ' ' || status as s, count(*)::int as n from pse_deposit.deposits group by 1 order by 1`)).rows.map((r) => `${r.s} ${r.n}`).join(', ');
  return [
    ['transfers by state', states],
    ['deposits by source and status', deposits],
    ['multi-signature approvals by status', (await db.query(`select status, count(*)::int as n from transfer.approvals group by 1 order by 1`)).rows.map((r) => `${r.status} ${r.n}`).join(', ')],
    ['transfers dispatched more than once (retry after a fault)', await one(`select count(*)::int as n from transfer.transfers where dispatch_attempts > 1`)],
    ['transfers whose dispatch was ambiguous (time-out / crash mid-call)', await one(`select count(*)::int as n from transfer.transfers where dispatch_ambiguous`)],
    ['provider callbacks delivered after more than one attempt', await one(`select count(*)::int as n from sandbox.callbacks where attempts > 1`)],
    ['PSE links made by the provider whose creation the product gave up on', await one(`select count(*)::int as n from sandbox.pse_links l where not exists (select 1 from pse_deposit.deposits d where d.id = l.deposit_id)`)],
    ['outbox rows that needed more than one publish attempt', await one(`select coalesce(sum(n), 0)::int as n from (${['ledger', 'transfer', 'pse_deposit', 'collect_key'].map((s) => `select count(*) as n from "${s}".outbox where attempts > 0`).join(' union all ')}) t`)],
  ];
}

/**
 * Proof that the checks can fail: inside a transaction that is rolled back, break each invariant
 * once (a wallet off its journal, an extra journal line, a live transfer, a double effect, a
 * disagreement with the provider, a paid deposit not credited, a lost receipt row, an unpublished
 * outbox row, a second transfer on one reference, an inbound payment not credited) and require
 * the matching SQL check to report it. Returns the names of the checks that did not fire.
 */
export async function sabotageSelfTest({ db, record }) {
  const sabotage = [
    ['every wallet equals its journal', `update ledger.wallets set available_cents = available_cents + 1 where (company_id, rail) = (select company_id, rail from ledger.wallets limit 1)`],
    ['journal sums to zero', `insert into ledger.entries (posting_id, seq, account, amount) select posting_id, 999, 'funding:sabotage', 1 from ledger.entries limit 1`],
    ['every accepted send (201/200) is known and final: COMPLETED, FAILED or EXPIRED', `update transfer.transfers set state = 'DISPATCHED' where id = (select id from transfer.transfers where state = 'COMPLETED' limit 1)`],
    ['each final send has its ledger effect exactly once (reserve + commit or release); a refused one none', `update ledger.postings set kind = 'release' where id = (select id from ledger.postings where kind = 'commit' limit 1)`],
    ['the provider and the product agree: paid out at the rail ⇔ COMPLETED', `update sandbox.transfers set status = 'COMPLETED' where provider_transfer_id = (select provider_transfer_id from sandbox.transfers where status = 'FAILED' limit 1)`],
    ['every paid PSE deposit credited exactly once (and reversed once if the provider reversed it); an unpaid one never', `update ledger.postings set kind = 'credit' where id = (select p.id from ledger.postings p join pse_deposit.deposits d on d.movement_id = p.movement_id where p.kind = 'inflow' and d.source = 'PSE' limit 1)`],
    ['every inbound Bre-B payment credited exactly once, listed once', `update collect_key.payments set status = 'UNASSIGNED', total_charged = 0, subtotal_fee = 0, fixed_fee = 0, variable_fee = 0, iva_amount = 0, net_amount = amount where deposit_id = (select deposit_id from collect_key.payments limit 1)`],
    ['receipt read model: one row per transfer and per deposit, at its final status', `delete from receipt.transactions where id = (select id from receipt.transactions limit 1)`],
    ['every outbox drained', `update transfer.outbox set published_at = null where seq = (select max(seq) from transfer.outbox)`],
    ['no (company, reference) produced two transfers inside the idempotency window', `update transfer.transfers t set reference = o.reference from (
        select a.id as target, b.reference from transfer.transfers a join transfer.transfers b on b.company_id = a.company_id and b.id <> a.id
         where a.state = 'COMPLETED' and b.state = 'COMPLETED' and b.reference is not null and abs(extract(epoch from b.created_at - a.created_at)) < 30 limit 1) o
       where t.id = o.target`],
  ];
  const missed = [];
  const fake = { checkInvariants: async () => ({ ok: true, violations: [] }) };
  for (const [name, sql] of sabotage) {
    await db.query('begin');
    try {
      const n = (await db.query(sql)).rowCount;
      if (!n) { missed.push(`${name} (sabotage changed nothing)`); continue; }
      const checks = await runChecks({ db, ledger: fake, record, only: name });
      const c = checks.find((x) => x.name === name);
      if (!c || !c.violations.some((v) => !v.startsWith('check failed to run'))) missed.push(name);
    } catch (err) {
      missed.push(`${name} (sabotage failed: ${err.message})`);
    } finally {
      await db.query('rollback');
    }
  }
  return { tried: sabotage.length, missed };
}
