// The cobro matcher's benchmark helpers (phase `cobros` of test/bench/run.mjs; docs/benchmarks.md
// "Cobro matching (issue 40)"): the bulk fill of pse_deposit.cobros for one company, the inbound
// payments as collect-key publishes them, the EXPLAIN ANALYZE of the matcher's lookups, and the
// consumer's handle-time histogram read from pse-deposit's /metrics.
//
// Both sides derive a cobro from its number g (1..N) and N alone: its id, transaction id, reference
// and expected payer are hashes or functions of them, so the payments can name existing cobros
// without reading them back (and no cobro of one size has the id of a cobro of another).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { depositEventsV1 } from '@wallet/proto';
import { PAGE_LOOKUP_SQL } from '../../services/pse-deposit/dist/persistence/cobro-matching.js';

const md5 = (s) => createHash('md5').update(s).digest('hex');
/** The id (`cob_` + 24 [a-z0-9], as newCobroId), transaction id (`CB` + 20, as a dynamic QR's) and reference of cobro g of N. */
export const cobroIdOf = (g, n) => `cob_${md5(`id${n}:${g}`).slice(0, 24)}`;
export const transactionIdOf = (g, n) => `CB${md5(`tx${n}:${g}`).slice(0, 20).toUpperCase()}`;
export const referenceOf = (g) => `FAC-${String(g).padStart(8, '0')}`;
/**
 * Every third cobro (g % 3 = 0) expects a payer, payer p = floor(g / 9): each such payer expects three
 * cobros whatever N is (a utility's customer with a few open bills), so the payer rule's index range
 * stays the same size from 1,000 to 1,000,000 cobros. Stored as `CC <number>`.
 */
const payerNumber = (p) => 10_000_000 + p;
/** The same payer as a payer's bank writes it (dots): documentKey makes both one payer. */
const withDots = (x) => String(x).replace(/\B(?=(\d{3})+(?!\d))/g, '.');

/**
 * Empties pse_deposit.cobros and fills it with N OPEN cobros of one company in one statement (generate_series), with
 * the product's indexes in place (as a company's cobros accumulate). The rows are the
 * API's: both Bre-B methods with their key and QR payload, 60% FIXED / 30% RANGE (max = 2 × min) /
 * 10% OPEN amounts of 50,000–10,000,000 COP, a third with an expected payer, expiresAt spread over
 * the next 30 days (all at least 2 hours away), createdAt over the past 30 days, 20% hold_for_review.
 * Then VACUUM ANALYZE (what autovacuum would do after such an insert, done before the measurement).
 */
export async function fillCobros(db, companyId, n) {
  // The cobros only: the payments of the sizes before stay, as a company's payment history would (emptied and
  // analyzed by autovacuum while empty, those tables would get a generic Seq Scan plan in the service — 0.5 ms
  // per lookup by deposit or cobro id after a few thousand payments — until autovacuum analyzed them again).
  await db.query(`truncate pse_deposit.cobros`);
  const t0 = performance.now();
  await db.query(
    `insert into pse_deposit.cobros (id, company_id, reference, state, amount_type, amount, min_amount, max_amount, paid_amount, description,
       expected_payer_document, expected_payer_document_key, expected_payer_name, metadata, overpayment_policy, methods, transaction_id,
       breb_key_id, breb_key_value, qr_payload, request_hash, iva_applicable, merchant_name, expires_at, created_at, updated_at)
     select 'cob_' || substr(md5('id' || $2::int || ':' || g), 1, 24), $1, r.reference, 'OPEN', r.amount_type,
       case when r.amount_type = 'FIXED' then r.base end,
       case when r.amount_type = 'RANGE' then r.base end,
       case when r.amount_type = 'RANGE' then r.base * 2 end,
       0, 'Factura ' || r.reference || ' servicio mensual',
       case when g % 3 = 0 then 'CC ' || (10000000 + g / 9) end,
       case when g % 3 = 0 then (10000000 + g / 9)::text end,
       case when g % 3 = 0 then 'Cliente ' || (g / 9) end,
       jsonb_build_object('invoice', r.reference, 'customerId', 'cli-' || (g / 9), 'period', '2026-11'),
       case when g % 5 = 0 then 'hold_for_review' else 'accept' end,
       '{BREB_QR,BREB_KEY}'::text[], r.tx,
       'bkey_' || substr(md5('key' || g), 1, 24), '@c' || substr(md5('key' || g), 1, 10),
       -- an EMVCo payload of a dynamic QR's length (tag 01 = 12, the amount when fixed, the transaction id in 62-05, the CRC)
       '000201010212' || '2650' || '0015CO.COM.BREB.LLA' || '0112@c' || substr(md5('key' || g), 1, 10) || '52040000' || '5303170'
         || case when r.amount_type = 'FIXED' then '54' || lpad(length((r.base / 100)::text)::text, 2, '0') || (r.base / 100)::text else '' end
         || '5802CO' || '5919BENCH COBROS S.A.S.' || '6006BOGOTA' || '6225' || '0522' || r.tx || '6304' || upper(substr(md5('crc' || g), 1, 4)),
       md5('req' || g) || md5('hash' || g), true, 'Bench Cobros S.A.S.',
       now() + interval '2 hours' + ((hashint4(g) & 2147483647) % 2592000) * interval '1 second',
       now() - ((hashint4(g + 1000000007) & 2147483647) % 2592000) * interval '1 second',
       now()
     from generate_series(1, $2::int) g
     cross join lateral (select 'FAC-' || lpad(g::text, 8, '0') as reference,
       'CB' || upper(substr(md5('tx' || $2::int || ':' || g), 1, 20)) as tx,
       case when g % 10 < 6 then 'FIXED' when g % 10 < 9 then 'RANGE' else 'OPEN' end as amount_type,
       (5000000 + (hashint4(g + 7) & 2147483647) % 995000001)::bigint as base) r`,
    [companyId, n],
  );
  const insertSeconds = (performance.now() - t0) / 1000;
  // What autovacuum would do next (hint bits, visibility map, statistics), done now rather than during the measurement.
  const t1 = performance.now();
  // The company uses cobros (what creating one through the API records): its payments that match none are listed unmatched.
  await db.query(`insert into pse_deposit.cobro_companies (company_id) values ($1) on conflict do nothing`, [companyId]);
  await db.query(`vacuum analyze pse_deposit.cobros`);
  const vacuumSeconds = (performance.now() - t1) / 1000;
  const { rows } = await db.query(
    `select pg_table_size('pse_deposit.cobros') / 1048576 as table_mib, pg_indexes_size('pse_deposit.cobros') / 1048576 as index_mib,
       (select count(*)::int from pse_deposit.cobros where company_id = $1 and state = 'OPEN') as open`,
    [companyId],
  );
  if (rows[0].open !== n) throw new Error(`cobros: ${rows[0].open} open cobros after the fill, expected ${n}`);
  return { n, insertSeconds, vacuumSeconds, seconds: insertSeconds + vacuumSeconds, tableMiB: Number(rows[0].table_mib), indexMiB: Number(rows[0].index_mib) };
}

/** A 32-bit mix of i (deterministic spread of the payments over the cobros). */
function mix(i) {
  let x = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** What payment i carries: 40% a cobro's transaction id, 30% its cobro id, 20% only an expected payer's document, 10% nothing that matches. */
export function paymentKind(i) {
  const s = i % 10;
  return s < 4 ? 'TRANSACTION_ID' : s < 7 ? 'DYNAMIC_KEY' : s < 9 ? 'PAYER_RULE' : 'NONE';
}

const newDepositId = () => {
  const a = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `dep_${[...randomBytes(24)].map((b) => a[b % 36]).join('')}`;
};

/**
 * Inbound payment i among N cobros, as collect-key publishes a credited Bre-B payment (app/events.ts
 * depositEvent + proto-views paymentToDeposit): `deposit.paid`, a DepositEvent with source BREB,
 * status ASSIGNED, the key it was paid to, the payer, and the transaction id / cobro id when it was a
 * dynamic QR / key. Amounts are installments (10–1,000 COP): a FIXED or RANGE cobro never fills during
 * the bench, so every size sees the same mix of outcomes (COUNTED + cobro.partially_paid); an OPEN-amount
 * cobro is PAID by its first payment and later ones are EXCESS or HELD_FOR_REVIEW.
 */
export function paymentEvent(i, n, companyId, { kind = paymentKind(i) } = {}) {
  const h = mix(i);
  const g = 1 + (h % n);
  const amount = BigInt(1_000 + (mix(i + 1) % 99_001));
  const fee = 500n;
  const iva = 95n;
  const now = new Date();
  const id = newDepositId();
  const forCobro = kind === 'TRANSACTION_ID' || kind === 'DYNAMIC_KEY';
  const keyHash = md5(`key${g}`);
  // Payer rule: one of the payers that expects three cobros (p ≥ 1 and 9p + 6 ≤ N); otherwise a payer no cobro expects.
  const payers = Math.max(1, Math.floor((n - 6) / 9));
  const payerDocument = kind === 'PAYER_RULE' ? `CC ${withDots(payerNumber(1 + (h % payers)))}` : `CC ${withDots(50_000_000 + (mix(i + 2) % 40_000_000))}`;
  const customer = mix(i + 3) % 5_000;
  const deposit = {
    id,
    status: 'ASSIGNED',
    amountCents: amount,
    feeAmountCents: fee,
    ivaAmountCents: iva,
    netAmountCents: amount - fee - iva,
    currency: 'COP',
    source: 'BREB',
    brebKey: forCobro
      ? { id: `bkey_${keyHash.slice(0, 24)}`, externalId: `cobro:${cobroIdOf(g, n)}`, name: 'Bench Cobros S.A.S.', value: `@c${keyHash.slice(0, 10)}` }
      : { id: `bkey_cust${String(customer).padStart(19, '0')}`, externalId: `cliente-${customer}`, name: `Cliente ${customer}`, value: `@cliente${customer}` },
    payerName: 'Pedro Pérez',
    payerDocument,
    payerBank: 'Nequi',
    providerTransferId: `tr-${id.slice(4)}`,
    providerConfirmedAt: now,
    createdAt: now,
    ...(kind === 'TRANSACTION_ID' ? { transactionId: transactionIdOf(g, n) } : {}),
    ...(kind === 'DYNAMIC_KEY' ? { cobroId: cobroIdOf(g, n) } : {}),
  };
  const eventId = randomUUID();
  return {
    depositId: id,
    kind,
    event: {
      id: eventId,
      subject: 'deposit.paid',
      payload: depositEventsV1.DepositEvent.toJSON({ eventId, companyId, deposit, occurredAt: now }),
      time: now.toISOString(),
      source: 'collect-key',
    },
  };
}

/** The matcher's statements as SqlCobroStore.match and the sweeper run them (`$n` for the prepared statement). */
const LOOKUPS = [
  {
    name: 'transaction id (dynamic QR)',
    sql: `select * from pse_deposit.cobros where transaction_id = $1 and company_id = $2 for update`,
    types: ['text', 'text'],
    args: (g, co, n) => [transactionIdOf(g, n), co],
  },
  {
    name: 'cobro id (dynamic key)',
    sql: `select * from pse_deposit.cobros where id = $1 and company_id = $2 for update`,
    types: ['text', 'text'],
    args: (g, co, n) => [cobroIdOf(g, n), co],
  },
  {
    name: 'reference',
    sql: `select * from pse_deposit.cobros where company_id = $1 and reference = $2 and state <> 'ABANDONED' for update`,
    types: ['text', 'text'],
    args: (g, co) => [co, referenceOf(g)],
  },
  {
    name: 'payer rule',
    sql: `select * from pse_deposit.cobros
           where company_id = $1 and expected_payer_document_key = $2 and state in ('OPEN', 'PARTIALLY_PAID') and expires_at >= $3::timestamptz
             and (amount_type = 'OPEN' or paid_amount + $4::bigint <= coalesce(max_amount, amount))
           order by expires_at, id limit 1 for update`,
    types: ['text', 'text', 'text', 'text'],
    args: (g, co, n) => [co, String(payerNumber(1 + (g % Math.max(1, Math.floor((n - 6) / 9))))), new Date().toISOString(), '50000'],
  },
  {
    // What the listing consumer runs once per page of payments (SqlCobroStore.matchMany), its own text: 32 payments,
    // a third by transaction id, a third by cobro id, a third by payer rule; the median time is per page.
    name: 'a page of 32 payments: already matched?, each lookup, uses cobros? (one statement)',
    sql: (() => {
      let i = 0;
      return PAGE_LOOKUP_SQL.replace(/\?/g, () => `$${++i}`);
    })(),
    types: ['text[]', 'text[]', 'text[]', 'text[]', 'text[]', 'text[]', 'timestamptz[]', 'bigint[]'],
    args: (g, co, n) => {
      const gs = Array.from({ length: 32 }, (_, k) => 1 + ((g + k * 7919) % n));
      const arr = (xs) => `{${xs.map((x) => (x === null ? 'NULL' : `"${String(x).replace(/(["\\])/g, '\\$1')}"`)).join(',')}}`;
      const by = (k) => k % 3;
      return [
        arr(gs.map((x) => `dep_${md5(`p${x}`).slice(0, 24)}`)),
        arr(gs.map(() => co)),
        arr(gs.map((x, k) => (by(k) === 0 ? transactionIdOf(x, n) : null))),
        arr(gs.map((x, k) => (by(k) === 1 ? cobroIdOf(x, n) : null))),
        arr(gs.map(() => null)),
        arr(gs.map((x, k) => (by(k) === 2 ? String(payerNumber(1 + (x % Math.max(1, Math.floor((n - 6) / 9))))) : null))),
        arr(gs.map(() => new Date().toISOString())),
        arr(gs.map(() => '50000')),
      ];
    },
  },
  {
    name: 'no match: does the company use cobros?',
    sql: `select 1 as x from pse_deposit.cobro_companies where company_id = $1`,
    types: ['text'],
    args: (_g, co) => [co],
    extra: true,
  },
  {
    // Every Bre-B payment of a company that never made a cobro ends here (after an empty payer-rule lookup).
    name: 'no match: does the company use cobros? (a company without any)',
    sql: `select 1 as x from pse_deposit.cobro_companies where company_id = $1`,
    types: ['text'],
    args: (_g, _co, _n, other) => [other],
    extra: true,
  },
  {
    name: 'already matched? (deposit id)',
    sql: `select 1 as x from pse_deposit.cobro_payments where deposit_id = $1 union all select 1 from pse_deposit.cobro_unmatched where deposit_id = $2`,
    types: ['text', 'text'],
    args: (g) => [`dep_${md5(`d${g}`).slice(0, 24)}`, `dep_${md5(`d${g}`).slice(0, 24)}`],
    extra: true,
  },
  {
    name: 'sweeper: stuck CREATING (every 1 s)',
    sql: `select c.*, to_char(c.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at from pse_deposit.cobros c
           where c.state = 'CREATING' and c.created_at < $1 order by c.created_at limit $2`,
    types: ['timestamptz', 'int'],
    args: () => [new Date(Date.now() - 30_000).toISOString(), 50],
    extra: true,
  },
  {
    name: 'sweeper: due for expiry (every 1 s)',
    sql: `select id from pse_deposit.cobros where state in ('OPEN', 'PARTIALLY_PAID') and expires_at < $1 order by expires_at limit $2`,
    types: ['timestamptz', 'int'],
    args: () => [new Date(Date.now() - 60_000).toISOString(), 50],
    extra: true,
  },
  {
    name: 'sweeper: keys to close (every 1 s)',
    sql: `select id, company_id from pse_deposit.cobros
           where key_closed_at is null and breb_key_id is not null
             and (state in ('EXPIRED', 'CANCELLED') or (state = 'PAID' and expires_at < $1))
           order by expires_at limit $2`,
    types: ['timestamptz', 'int'],
    args: () => [new Date().toISOString(), 50],
    extra: true,
  },
];

function planFacts(plan) {
  const indexes = new Set();
  const nodes = [];
  const walk = (p) => {
    nodes.push(p['Node Type']);
    if (p['Index Name']) indexes.add(p['Index Name']);
    for (const c of p.Plans ?? []) walk(c);
  };
  walk(plan);
  return { indexes: [...indexes], seqScan: nodes.includes('Seq Scan'), nodes };
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of each lookup as the service runs it: a named prepared statement (the
 * Database's `prepared`), executed 6 times first so Postgres may switch to its generic plan as it does
 * for the service, then explained for `samples` different cobros; in a transaction rolled back (the
 * FOR UPDATE locks nothing for long). Median and highest execution time, the index(es) used, the
 * buffers touched, and whether the plan is the generic one.
 */
export async function explainMatch(db, companyId, n, { otherCompanyId, samples = 30 }) {
  const out = [];
  await db.query('begin');
  try {
    for (const [k, l] of LOOKUPS.entries()) {
      const stmt = `bench_cobro_${k}`;
      await db.query(`prepare ${stmt}(${l.types.join(', ')}) as ${l.sql}`);
      const exec = (g) =>
        `execute ${stmt}(${l
          .args(g, companyId, n, otherCompanyId)
          .map((v) => db.escapeLiteral(String(v)))
          .join(', ')})`;
      for (let w = 0; w < 6; w++) await db.query(exec(1 + (mix(1000 + w) % n)));
      const times = [];
      const buffers = [];
      let facts;
      let generic = false;
      for (let s = 0; s < samples; s++) {
        const { rows } = await db.query(`explain (analyze, buffers, format json) ${exec(1 + (mix(s) % n))}`);
        const top = rows[0]['QUERY PLAN'][0];
        times.push(top['Execution Time']);
        buffers.push((top.Plan['Shared Hit Blocks'] ?? 0) + (top.Plan['Shared Read Blocks'] ?? 0));
        facts = planFacts(top.Plan);
        generic ||= JSON.stringify(top.Plan).includes('$1');
      }
      await db.query(`deallocate ${stmt}`);
      times.sort((a, b) => a - b);
      buffers.sort((a, b) => a - b);
      out.push({
        name: l.name,
        extra: !!l.extra,
        medianMs: times[Math.floor(times.length / 2)],
        maxMs: times[times.length - 1],
        buffers: buffers[Math.floor(buffers.length / 2)],
        indexes: facts.indexes,
        seqScan: facts.seqScan,
        generic,
      });
    }
  } finally {
    await db.query('rollback');
  }
  return out;
}

/** The cumulative buckets of `nats_consumer_handle_seconds` for one consumer, from a /metrics text: [[le, count], …]. */
export function handleHistogram(metricsText, consumer) {
  const out = [];
  const re = /^nats_consumer_handle_seconds_bucket\{([^}]*)\}\s+(\S+)/gm;
  for (const m of metricsText.matchAll(re)) {
    if (!m[1].includes(`consumer="${consumer}"`)) continue;
    const le = /le="([^"]+)"/.exec(m[1])[1];
    out.push([le === '+Inf' ? Infinity : Number(le), Number(m[2])]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/**
 * Quantile q of the observations between two scrapes of a histogram (Prometheus-style linear
 * interpolation inside the bucket; the buckets are 1, 2.5, 5, 10, 25 ms…, so the figure is as coarse).
 * Milliseconds (`> 2500` past the last bucket); null when nothing was observed.
 */
export function histogramQuantileMs(before, after, q) {
  const prev = new Map(before);
  const cum = after.map(([le, c]) => [le, c - (prev.get(le) ?? 0)]);
  const total = cum.at(-1)?.[1] ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [le, c] of cum) {
    if (c >= rank) {
      if (le === Infinity) return `> ${lower * 1000}`; // beyond the last bucket
      return +((lower + ((le - lower) * (rank - below)) / Math.max(1, c - below)) * 1000).toFixed(1);
    }
    lower = le;
    below = c;
  }
  return null;
}
