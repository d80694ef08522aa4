// The invariants checked after a fault run. The money invariants are the shared module's
// (services/invariants: holds ⇔ transfers ⇔ the sandbox rail, deposits, inbound, journal, exceptions:
// the same code as `npm run ledger:check` and the interleaving tests), settled, through each service's
// read-only role; beside them the ledger's CheckInvariants RPC, what the clients observed, and the
// plumbing (outboxes, callbacks, consumers, receipts). Each check returns its offenders as lines.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { checkInvariants, selfTest } from '@wallet/invariants';

const LIVE = `('RECEIVED','RESERVED','AWAITING_APPROVAL','EXECUTING','DISPATCHED','ABANDONING','RELEASING','EXPIRING','COMPLETING')`;
const LIST = 50;

/** Postings per movement by kind, aggregated once (postings have no index on movement_id). */
const PC = `pc as (select movement_id,
    count(*) filter (where kind = 'reserve')::int as reserves, count(*) filter (where kind = 'commit')::int as commits,
    count(*) filter (where kind = 'release')::int as releases, count(*) filter (where kind = 'inflow')::int as inflows,
    count(*) filter (where kind = 'reversal')::int as reversals, count(*)::int as postings
  from ledger.postings where movement_id is not null group by movement_id)`;

export const JOURNAL_CHECK = 'tamper-evident journal: every posting sealed once, the chain intact (VerifyJournal, docs/journal.md)';

/** `only`: run just the check of that name (the self-test). */
export async function runChecks({ db, ledger, record, natsUrl, only }) {
  const checks = [];
  const check = async (name, fn) => {
    if (only && name !== only) return;
    let violations;
    try {
      violations = await fn();
    } catch (err) {
      violations = [`check failed to run: ${err.message}`];
    }
    checks.push({
      name,
      violations: violations.slice(0, LIST).concat(violations.length > LIST ? [`… ${violations.length - LIST} more`] : []),
      total: violations.length,
    });
  };
  const rows = async (sql, params = []) => (await db.query(sql, params)).rows;

  await check('ledger CheckInvariants RPC (LEDGER.md 1-5)', async () => {
    const r = await ledger.checkInvariants({}, { requestId: 'faults-invariants' });
    return r.ok ? [] : r.violations;
  });
  // The tamper-evident journal (docs/journal.md): every posting the run wrote sealed once, every seal intact.
  await check(JOURNAL_CHECK, async () => {
    let r;
    for (let i = 0; i < 60; i++) {
      r = await ledger.verifyJournal({}, { requestId: 'faults-journal' });
      if (Number(r.pending) === 0) break;
      await new Promise((ok) => setTimeout(ok, 250)); // the sealer runs every second
    }
    const v = [];
    if (Number(r.pending) > 0) v.push(`${r.pending} postings still not sealed`);
    if (r.firstBroken) v.push(`first broken: ${r.firstBroken.reason} at #${r.firstBroken.seq} (posting ${r.firstBroken.postingId || '-'}), ${r.broken} in all`);
    for (const id of r.outsideJournal) v.push(`posting ${id} outside the journal`);
    return v;
  });
  // The shared money invariants, settled (nothing runs any more), the sandbox as the rails' truth.
  const wanted = only ? (only.startsWith('money: ') ? [only.slice('money: '.length)] : []) : undefined;
  if (!wanted || wanted.length) {
    try {
      const report = await checkInvariants(db, { settled: true, rail: 'auto', list: LIST, ...(wanted ? { only: wanted } : {}) });
      for (const c of report.checks) {
        const counts = c.counts.map(([k, n]) => (typeof n === 'number' ? `${n} ${k}` : `${k} ${n}`)).join(', ');
        checks.push({
          name: `money: ${c.name} (${counts})`,
          check: `money: ${c.name}`,
          violations: [...c.violations, ...c.notChecked.map((x) => `not checked: ${x}`)].concat(
            c.total > c.violations.length ? [`… ${c.total - c.violations.length} more`] : [],
          ),
          total: c.total,
        });
      }
      if (report.exceptions.length)
        checks.push({
          name: `open money exceptions: ${report.exceptions.length} (listed, not violations)`,
          violations: [],
          total: 0,
          exceptions: report.exceptions.map((e) => `${e.id} ${e.kind} ${e.owner} ${e.resourceId}`),
        });
    } catch (err) {
      checks.push({ name: 'money invariants (services/invariants)', violations: [`check failed to run: ${err.message}`], total: 1 });
    }
  }

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
  await check('a refused send (4xx) left no transfer and no ledger movement', async () => {
    if (!record.refusedRefs.length) return [];
    const found = await rows(
      `
        with r as (select distinct * from unnest($1::text[], $2::text[]) as r(company_id, reference)),
             t as (select company_id, reference, count(*)::int as n from transfer.transfers where reference is not null and state <> 'REJECTED' group by 1, 2),
             m as (select company_id, reference, count(*)::int as n from ledger.movements where reference is not null group by 1, 2)
        select r.company_id, r.reference, coalesce(t.n, 0) as transfers, coalesce(m.n, 0) as movements
          from r left join t using (company_id, reference) left join m using (company_id, reference)`,
      [record.refusedRefs.map((x) => x.companyId), record.refusedRefs.map((x) => x.reference)],
    );
    return found
      .filter((r) => r.transfers > 0 || r.movements > 0)
      .map((r) => `refused send ${r.reference} of ${r.company_id}: ${r.transfers} transfers, ${r.movements} movements`);
  });
  await check('no (company, reference) produced two transfers inside the idempotency window', async () => [
    ...(
      await rows(`
      select a.company_id, a.reference, a.id::text as a, b.id::text as b from transfer.transfers a
        join transfer.transfers b on b.company_id = a.company_id and b.reference = a.reference and b.id > a.id
       where a.reference is not null and a.state <> 'REJECTED' and b.state <> 'REJECTED'
         and abs(extract(epoch from b.created_at - a.created_at)) < 60`)
    ).map((r) => `reference ${r.reference} of ${r.company_id}: transfers ${r.a} and ${r.b}`),
    ...(
      await rows(`
      select a.company_id, a.reference, count(*)::int as n from ledger.movements a
       where a.type = 'TRANSFER_OUT' and a.reference is not null group by 1, 2 having count(*) > 1`)
    ).map((r) => `reference ${r.reference} of ${r.company_id}: ${r.n} ledger movements`),
  ]);

  // What the clients were told, against the providers' records (the money side is the module's).
  await check('client-observed: a PSE payment the client made is PAID (or REVERSED) at the provider; an inbound 202 is known to the network', async () => {
    const v = [];
    const links = new Map((await rows(`select deposit_id, status from sandbox.pse_links`)).map((l) => [l.deposit_id, l.status]));
    for (const [id, d] of record.deposits)
      if (d.paid && !['PAID', 'REVERSED'].includes(links.get(id))) v.push(`deposit ${id} paid per the client is ${links.get(id) ?? 'unknown'} at the provider`);
    const known = new Set((await rows(`select provider_transfer_id as id from sandbox.breb_incoming`)).map((r) => r.id));
    for (const id of record.incoming.keys()) if (!known.has(id)) v.push(`inbound payment ${id} (202 to the client) unknown to the network`);
    // A PSE link the provider made while the product's call timed out: the product stored nothing and
    // told the client so (nobody has its URL). Only a payment of such a link would lose money.
    for (const l of await rows(
      `select l.deposit_id, l.status from sandbox.pse_links l where l.status <> 'PENDING' and not exists (select 1 from pse_deposit.deposits d where d.id = l.deposit_id)`,
    )) {
      v.push(`deposit ${l.deposit_id} ${l.status} at the provider is unknown to the product`);
    }
    return v;
  });

  // Consumers: every event consumed, with its effect once.
  await check('receipt read model: one row per transfer and per deposit, at its final status', async () => [
    ...(
      await rows(`select t.id::text as id, t.state, r.status from transfer.transfers t left join receipt.transactions r on r.id = t.id::text
        where t.state <> 'REJECTED' and (r.id is null or r.status is distinct from t.state)`)
    ).map((r) => `transfer ${r.id} ${r.state}: receipt row ${r.status ?? 'missing'}`),
    ...(
      await rows(`select d.id, d.status, r.status as rs from pse_deposit.deposits d left join receipt.deposits r on r.id = d.id
        where r.id is null or r.status is distinct from d.status`)
    ).map((r) => `deposit ${r.id} ${r.status}: receipt row ${r.rs ?? 'missing'}`),
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
    (await rows(`select state, count(*)::int as n from sandbox.callbacks where state <> 'delivered' group by 1`)).map((r) => `${r.n} callbacks ${r.state}`),
  );
  if (natsUrl) {
    await check('every JetStream consumer caught up (nothing pending or unacknowledged)', async () => {
      const nc = await connect({ servers: natsUrl.split(',') });
      try {
        const jsm = await jetstreamManager(nc);
        const v = [];
        for await (const si of jsm.streams.list()) {
          for await (const ci of jsm.consumers.list(si.config.name)) {
            if (ci.num_pending > 0 || ci.num_ack_pending > 0)
              v.push(`${si.config.name}/${ci.name}: ${ci.num_pending} pending, ${ci.num_ack_pending} unacknowledged`);
          }
        }
        return v;
      } finally {
        await nc.close();
      }
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
  } finally {
    await nc.close();
  }
}

/** What the faults did to the flows (evidence that they hit work in flight), for the summary. */
export async function observations(db) {
  const one = async (sql) => (await db.query(sql)).rows[0]?.n ?? 0;
  const states = (await db.query(`select state, count(*)::int as n from transfer.transfers group by 1 order by 1`)).rows
    .map((r) => `${r.state} ${r.n}`)
    .join(', ');
  const deposits = (await db.query(`select source || ' ' || status as s, count(*)::int as n from pse_deposit.deposits group by 1 order by 1`)).rows
    .map((r) => `${r.s} ${r.n}`)
    .join(', ');
  return [
    ['transfers by state', states],
    ['deposits by source and status', deposits],
    [
      'multi-signature approvals by status',
      (await db.query(`select status, count(*)::int as n from transfer.approvals group by 1 order by 1`)).rows.map((r) => `${r.status} ${r.n}`).join(', '),
    ],
    ['transfers dispatched more than once (retry after a fault)', await one(`select count(*)::int as n from transfer.transfers where dispatch_attempts > 1`)],
    [
      'transfers whose dispatch was ambiguous (time-out / crash mid-call)',
      await one(`select count(*)::int as n from transfer.transfers where dispatch_ambiguous`),
    ],
    ['provider callbacks delivered after more than one attempt', await one(`select count(*)::int as n from sandbox.callbacks where attempts > 1`)],
    [
      'PSE links made by the provider whose creation the product gave up on',
      await one(`select count(*)::int as n from sandbox.pse_links l where not exists (select 1 from pse_deposit.deposits d where d.id = l.deposit_id)`),
    ],
    [
      'outbox rows that needed more than one publish attempt',
      await one(
        `select coalesce(sum(n), 0)::int as n from (${['ledger', 'transfer', 'pse_deposit', 'collect_key'].map((s) => `select count(*) as n from "${s}".outbox where attempts > 0`).join(' union all ')}) t`,
      ),
    ],
  ];
}

/**
 * Proof that the checks can fail: inside a transaction that is rolled back, break each invariant
 * once and require its check to report it: the shared module's own sabotage per money check (a
 * DISPATCHED transfer without a hold, an ASSIGNED deposit never credited, an inbound payment booked
 * nowhere, an unbalanced posting, a stuck exception), then this suite's SQL checks (a live transfer,
 * a lost receipt row, an unpublished outbox row, a second transfer on one reference). Returns the
 * names of the checks that did not fire.
 */
export async function sabotageSelfTest({ db, record, ledger }) {
  const missed = [];
  let tried = 0;
  for (const r of await selfTest(db, { settled: true, rail: 'auto' })) {
    // A sabotage whose schema is not installed (clearing without the reconciliation) is skipped, not missed.
    if (r.skipped) continue;
    tried++;
    if (!r.caught) missed.push(`money: ${r.check} (${r.what})`);
  }
  const sabotage = [
    [
      'every accepted send (201/200) is known and final: COMPLETED, FAILED or EXPIRED',
      `update transfer.transfers set state = 'DISPATCHED' where id = (select id from transfer.transfers where state = 'COMPLETED' limit 1)`,
    ],
    [
      'receipt read model: one row per transfer and per deposit, at its final status',
      `delete from receipt.transactions where id = (select id from receipt.transactions limit 1)`,
    ],
    ['every outbox drained', `update transfer.outbox set published_at = null where seq = (select max(seq) from transfer.outbox)`],
    [
      'no (company, reference) produced two transfers inside the idempotency window',
      `update transfer.transfers t set reference = o.reference from (
        select a.id as target, b.reference from transfer.transfers a join transfer.transfers b on b.company_id = a.company_id and b.id <> a.id
         where a.state = 'COMPLETED' and b.state = 'COMPLETED' and b.reference is not null and abs(extract(epoch from b.created_at - a.created_at)) < 30 limit 1) o
       where t.id = o.target`,
    ],
  ];
  const fake = { checkInvariants: async () => ({ ok: true, violations: [] }) };
  for (const [name, sql] of sabotage) {
    tried++;
    await db.query('begin');
    try {
      const n = (await db.query(sql)).rowCount;
      if (!n) {
        missed.push(`${name} (sabotage changed nothing)`);
        continue;
      }
      const checks = await runChecks({ db, ledger: fake, record, only: name });
      const c = checks.find((x) => x.name === name);
      if (!c || !c.violations.some((v) => !v.startsWith('check failed to run'))) missed.push(name);
    } catch (err) {
      missed.push(`${name} (sabotage failed: ${err.message})`);
    } finally {
      await db.query('rollback');
    }
  }
  if (ledger) {
    // The journal is verified by the ledger over committed rows: an entry is edited for real (as a
    // superuser would), the check run, and the edit undone whatever happens.
    tried++;
    const [target] = (
      await db.query(`select e.posting_id, e.seq from ledger.journal j join ledger.entries e on e.posting_id = j.posting_id order by j.seq desc limit 1`)
    ).rows;
    if (!target) missed.push(`${JOURNAL_CHECK} (no sealed posting to edit)`);
    else {
      await db.query('update ledger.entries set amount = amount * 10 where posting_id = $1 and seq = $2', [target.posting_id, target.seq]);
      try {
        const checks = await runChecks({ db, ledger, record, only: JOURNAL_CHECK });
        const c = checks.find((x) => x.name === JOURNAL_CHECK);
        if (!c || !c.violations.some((v) => v.startsWith('first broken: CONTENT_CHANGED'))) missed.push(JOURNAL_CHECK);
      } finally {
        await db.query('update ledger.entries set amount = amount / 10 where posting_id = $1 and seq = $2', [target.posting_id, target.seq]);
      }
    }
  }
  return { tried, missed };
}
