// The deposits listing at scale (issue 44; docs/benchmarks.md "The deposits listing at scale"): in a scratch
// database, the pse-deposit schema as its migrations leave it, filled through bulk statements that keep every
// constraint of the table: SCALE_DEPOSITS deposits (default 1,000,000) over the last 365 days for
// SCALE_COMPANIES companies (default 100,000), SCALE_LARGE_DEPOSITS of them (default 200,000) on one large
// company. Both kinds the listing shows: PSE links (60%: paid, failed, expired, reversed, and pending when
// younger than the link's 24 hours) and Bre-B payments (40%, on three keys per company: assigned, unassigned,
// reversed). The large company has no reversed deposit: the status filter that matches none.
//
// Measured with the service's own code (the built store, SqlDepositStore, called through the ListDeposits use
// case exactly as the gRPC handler ListDeposits calls it; GetDeposit's store read for the detail), p50/p99 over
// SCALE_SAMPLES calls (default 2,000; a figure stops early after SCALE_LABEL_SECONDS, default 20 s, and says
// how many calls it made), on the empty schema (the same companies, no deposit) and on the full one:
//   - the first page (20, page style with its total) of a typical company and of the large company, and the
//     large company's first page cursor style (no total);
//   - a page 10,000 deep by cursor, the large company;
//   - a page from a date: GET /deposits has no date range (its filters are status, rail, externalId,
//     brebKeyId), so the nearest shape, a cursor at a random instant of the year (a month back from it is
//     what the next pages read), the large company;
//   - each status the API filters by (PENDING_CONFIRM, ASSIGNED, FAILED, EXPIRED, UNASSIGNED, REVERSED), cursor
//     style, the large company: ASSIGNED matches most, REVERSED none, PENDING_CONFIRM a few;
//   - by rail (PSE, BREB), by Bre-B key id and by key external id, the large company;
//   - a deposit's detail (GetDeposit's store read).
// "before" is the listing as it was before this bench (SCALE_LISTING_BEFORE=1: the one statement whose
// filters were disabled by null parameters; no pseDepositOnlineIndexes, the unordered key indexes they replace);
// "after" the current store with the online indexes built and the ones they replace dropped, as the migrate Job
// leaves them. By default one run measures both: empty before and after, the fill, full before, the
// online indexes built (timed), full after. SCALE_LISTING_BEFORE=1 measures only before, =0 only after.
// Prints a JSON report on stdout, progress on stderr; drops the database (SCALE_KEEP=1 keeps it and prints its
// name; SCALE_REUSE=<name> measures a kept one again, full only, with the same sizes, without filling it).
//   node test/bench/scale-deposits.mjs          (after `npx turbo run build --filter=@wallet/pse-deposit...`)
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { imp, int, scratchDatabase, timedRuns } from './scale-support.mjs';

/** The unordered key indexes the migrations made, which the online ones replace (the "before" state). */
const RETIRED = [
  { name: 'deposits_breb_key_idx', on: 'pse_deposit.deposits (company_id, breb_key_id) where breb_key_id is not null' },
  { name: 'deposits_breb_ext_idx', on: 'pse_deposit.deposits (company_id, breb_key_external_id) where breb_key_external_id is not null' },
];

/** Runs the deposits listing measurements; returns the report (also what the CLI prints). */
export async function runDepositsScaleBench(opts = {}) {
  const { Database, createLogger } = await import('@wallet/platform');
  const { depositMigrations, pseDepositOnlineIndexes } = await imp('services/pse-deposit/dist/persistence/migrations/index.js');
  const { SqlDepositStore } = await imp('services/pse-deposit/dist/persistence/deposit.store.js');
  const { ListDeposits } = await imp('services/pse-deposit/dist/app/list-deposits.js');
  const { SqlDepositCounts } = await imp('services/pse-deposit/dist/persistence/deposit-counts.js');
  const { DepositCounter } = await imp('services/pse-deposit/dist/app/deposit-counter.js');
  const { statesShownAs } = await imp('services/pse-deposit/dist/domain/deposit.js');

  const COMPANIES = opts.companies ?? int('SCALE_COMPANIES', 100_000);
  const DEPOSITS = opts.deposits ?? int('SCALE_DEPOSITS', 1_000_000);
  const LARGE = Math.min(DEPOSITS, opts.large ?? int('SCALE_LARGE_DEPOSITS', 200_000));
  const SAMPLES = opts.samples ?? int('SCALE_SAMPLES', 2_000);
  const LABEL_SECONDS = int('SCALE_LABEL_SECONDS', 20);
  /** A database a previous run kept (SCALE_KEEP=1): measured again (full before and after), not filled. */
  const REUSE = process.env.SCALE_REUSE;
  const KEEP = process.env.SCALE_KEEP === '1' || !!REUSE;
  const phases = process.env.SCALE_LISTING_BEFORE === '1' ? ['before'] : process.env.SCALE_LISTING_BEFORE === '0' ? ['after'] : ['before', 'after'];
  const say = opts.log ?? ((m) => console.error(`[scale-deposits] ${m}`));
  if (COMPANIES < 2) throw new Error('SCALE_COMPANIES must be at least 2');

  const scratch = await scratchDatabase({ prefix: 'scale_deposits', reuse: REUSE, keep: KEEP });
  const { name, url } = scratch;
  const log = createLogger('scale-deposits-bench', 'warn');
  let db;
  try {
    // The online indexes are built below, when a phase needs them (after the fill: as a deployment would).
    db = await Database.open({ url, schema: 'pse_deposit', migrations: depositMigrations, onlineIndexes: [], logger: log, poolMax: 1 });
    await db.migrate();
    // "after" reads page-style totals from the deposit counts (docs/deposit-counts.md); "before" counted the deposits.
    // Rebuilt after the fill: each remembers once it saw the counts ready, and the fill starts them over.
    let counts = new SqlDepositCounts(db);
    let store = new SqlDepositStore(db, undefined, counts);
    let counter = new DepositCounter(counts, { intervalMs: 60_000 }, log);
    /** The indexes as they were before the fix: none of the online ones, the unordered key indexes they replace. */
    const dropOnline = async () => {
      for (const ix of pseDepositOnlineIndexes) await db.query(`drop index if exists pse_deposit.${ix.name}`);
      for (const ix of RETIRED) await db.buildOnlineIndex(ix);
    };
    /** As the migrate Job leaves them: the online indexes built, the ones they replace dropped. */
    const buildOnline = async () => {
      const t0 = performance.now();
      const present = async () =>
        (await db.query(`select relname from pg_class where relnamespace = 'pse_deposit'::regnamespace and relkind = 'i'`)).map((r) => r.relname);
      const had = await present();
      for (const ix of pseDepositOnlineIndexes) await db.buildOnlineIndex(ix);
      const now = await present();
      const retired = RETIRED.map((ix) => ix.name).filter((n) => had.includes(n) && !now.includes(n));
      await db.query('analyze pse_deposit.deposits');
      return { seconds: +((performance.now() - t0) / 1000).toFixed(1), retired };
    };

    /**
     * The listing as it was (the store's `list` before this bench's fix, its SQL verbatim): one statement for
     * every filter combination, a filter disabled by a null parameter; a status by `status = any(…)`.
     */
    const COLS = `d.*, to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at`;
    const beforeStore = {
      matchedCobros: (ids) => store.matchedCobros(ids),
      async list(companyId, f, page) {
        const where = `d.company_id = $1 and ($2::text[] is null or d.status = any($2::text[]))
      and ($3::text is null or (case when d.status in ('PENDING_CONFIRM', 'CREDITING')
                                       then (case when d.expires_at <= $6::timestamptz then 'EXPIRED' else 'PENDING_CONFIRM' end)
                                     when d.status = 'REVERSING' then 'ASSIGNED' else d.status end) = $3)
      and ($4::text is null or d.source = $4) and ($5::text is null or d.breb_key_external_id = $5) and ($7::text is null or d.breb_key_id = $7)`;
        const params = [
          companyId,
          f.status ? statesShownAs(f.status) : null,
          f.status ?? null,
          f.source ?? null,
          f.externalId ?? null,
          page.now.toISOString(),
          f.brebKeyId ?? null,
        ];
        let rows;
        if (page.after) {
          rows = await db.prepared(
            `select ${COLS} from pse_deposit.deposits d where ${where}
        and (d.created_at, d.id) < ($8::timestamptz, $9::text) order by d.created_at desc, d.id desc limit $10`,
            [...params, page.after.createdAt, page.after.id, page.limit + 1],
          );
        } else {
          rows = await db.prepared(
            `select ${COLS} from pse_deposit.deposits d where ${where}
        order by d.created_at desc, d.id desc limit $8 offset $9`,
            [...params, page.limit + 1, page.offset],
          );
        }
        let total = null;
        if (page.withTotal) {
          const [c] = await db.prepared(`select count(*)::text as n from pse_deposit.deposits d where ${where}`, params);
          total = Number(c?.n ?? 0);
        }
        // the row as the store maps it, enough for the use case (the cursor, the id)
        return {
          items: rows.slice(0, page.limit).map((r) => ({ ...r, cursor: { createdAt: r.cursor_at, id: r.id } })),
          hasMore: rows.length > page.limit,
          total,
        };
      },
    };

    const company = (k) => `md5('dep-scale-' || ${k})::uuid::text`;
    const idOf = (k) =>
      createHash('md5')
        .update(`dep-scale-${k}`)
        .digest('hex')
        .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
    const [{ large }] = await db.query(`select ${company(0)} as large`);
    if (idOf(0) !== large) throw new Error(`company ids: ${idOf(0)} is not ${large}`);
    // the large company's Bre-B keys (as the fill names them: three per company)
    const keyOf = (k, n) =>
      `bkey_${createHash('md5')
        .update(`${idOf(k)}:${n}`)
        .digest('hex')
        .slice(0, 20)}`;

    const yearMs = 365 * 86_400_000;
    const now = Date.now();
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const typical = Array.from({ length: SAMPLES }, () => 1 + Math.floor(rand() * (COMPANIES - 1)));
    const instants = Array.from({ length: SAMPLES }, () => new Date(now - 120_000 - Math.floor(rand() * yearMs)).toISOString());

    /** Every listing shape, p50/p99, through the use case the gRPC handler calls (with `listing` as its store). */
    const measure = async (listing) => {
      const list = new ListDeposits({ store: listing, now: () => new Date() });
      const out = {};
      const run = timedRuns(out, { samples: SAMPLES, labelSeconds: LABEL_SECONDS, say });
      const pageQ = (over = {}) => ({ page: 0, limit: 0, cursorMode: false, ...over });
      const cursorQ = (over = {}) => ({ page: 0, limit: 0, cursorMode: true, cursor: '', ...over });
      const cursorAt = (createdAt, id = 'dep_zzzzzzzzzzzzzzzzzzzzzzzz') => Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');

      await run('firstPageTypical', (i) => list.execute(idOf(typical[i % typical.length]), pageQ()));
      await run('firstPageLarge', () => list.execute(large, pageQ()));
      await run('firstPageLargeCursor', () => list.execute(large, cursorQ()));
      // the 10,000th deposit of the large company in the listing's order: the next page starts after it
      const [deep] = await db.query(
        `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at, id
           from pse_deposit.deposits where company_id = ? order by created_at desc, id desc offset 9999 limit 1`,
        [large],
      );
      const deepCursor = deep ? cursorAt(deep.created_at, deep.id) : cursorAt(new Date(now - 86_400_000).toISOString());
      await run('page10000DeepLarge', () => list.execute(large, cursorQ({ cursor: deepCursor })));
      await run('pageFromDateLarge', (i) => list.execute(large, cursorQ({ cursor: cursorAt(instants[i % instants.length]) })));
      for (const status of ['ASSIGNED', 'PENDING_CONFIRM', 'FAILED', 'EXPIRED', 'UNASSIGNED', 'REVERSED'])
        await run(`status${status}Large`, () => list.execute(large, cursorQ({ status })));
      await run('statusReversedLargePageStyle', () => list.execute(large, pageQ({ status: 'REVERSED' })));
      await run('statusAssignedLargePageStyle', () => list.execute(large, pageQ({ status: 'ASSIGNED' })));
      await run('statusExpiredLargePageStyle', () => list.execute(large, pageQ({ status: 'EXPIRED' })));
      await run('railPseLargePageStyle', () => list.execute(large, pageQ({ rail: 'PSE' })));
      await run('brebKeyLargePageStyle', () => list.execute(large, pageQ({ brebKeyId: keyOf(0, 1) })));
      await run('railPseLarge', () => list.execute(large, cursorQ({ rail: 'PSE' })));
      await run('railBrebLarge', () => list.execute(large, cursorQ({ rail: 'BREB' })));
      await run('brebKeyLarge', () => list.execute(large, cursorQ({ brebKeyId: keyOf(0, 1) })));
      await run('brebKeyUnknownLarge', () => list.execute(large, cursorQ({ brebKeyId: 'bkey_none' })));
      await run('externalIdLarge', () => list.execute(large, cursorQ({ externalId: 'ext-2' })));
      const ids = await db.query(`select company_id, id from pse_deposit.deposits tablesample system (0.2) limit ?`, [SAMPLES]);
      const detail = ids.length ? ids : typical.map((k) => ({ company_id: idOf(k), id: 'dep_000000000000000000000000' }));
      await run('detail', (i) => store.get(detail[i % detail.length].company_id, detail[i % detail.length].id));
      return out;
    };

    const report = { companies: COMPANIES, deposits: DEPOSITS, largeDeposits: LARGE, samples: SAMPLES, labelSeconds: LABEL_SECONDS };
    // Empty: the same companies, no deposit.
    if (REUSE) await dropOnline();
    else if (phases.includes('before')) {
      say('empty, before');
      report.emptyBefore = await measure(beforeStore);
    }
    if (!REUSE && phases.includes('after')) {
      await buildOnline();
      await counter.run(); // nothing to count: the counts are ready
      say('empty, after');
      report.emptyAfter = await measure(store);
      await dropOnline();
    }

    // The fill, in chunks: the large company's deposits first, then the others spread over the companies. The
    // counts' triggers are off: the fill is the history of an installation from before them, which the
    // counter's backfill then counts (timed below), as after deploying pse-deposit migration 0017.
    if (!REUSE) await db.query('alter table pse_deposit.deposits disable trigger user');
    const t = performance.now();
    const CHUNK = 250_000;
    for (let done = 0; done < (REUSE ? 0 : DEPOSITS); done += CHUNK) {
      const n = Math.min(CHUNK, DEPOSITS - done);
      await db.query(
        `with s as (
           select g, case when g <= ?::bigint then 0 else 1 + ((g * 2654435761) % (?::bigint - 1)) end as k,
                  now() - interval '2 minutes' - random() * interval '365 days' as at,
                  abs(hashtext('draw-' || g)) % 100 as r, g % 5 < 2 as breb
             from generate_series(?::bigint + 1, ?::bigint) g),
         c as (
           select s.*, ${company('s.k')} as company_id, 2000000 + (g * 104729) % 500000000 as amount,
                  case when breb then case when r < 15 then 'UNASSIGNED' when r < 19 and k <> 0 then 'REVERSED' else 'ASSIGNED' end
                       when r < 5 then case when at > now() - interval '24 hours' then 'PENDING_CONFIRM' else 'EXPIRED' end
                       when r < 15 then 'FAILED'
                       when r < 20 and k <> 0 then 'REVERSED'
                       else 'ASSIGNED' end as status
             from s),
         f as (
           select c.*, case when breb then 50000 else 150000 end as fixed_fee, case when breb then 0 else amount * 12 / 1000 end as variable_fee from c),
         v as (select f.*, fixed_fee + variable_fee as subtotal, (fixed_fee + variable_fee) * 19 / 100 as iva from f)
         insert into pse_deposit.deposits (id, company_id, source, status, amount, fixed_fee, variable_fee, subtotal_fee, iva_applicable,
           iva_amount, total_charged, net_amount, currency, payer_document_type, payer_document_number, payer_first_name, payer_last_name,
           payer_name, payer_email, payer_phone, payer_bank, internal_ref, api_key_id, paygateway_url, provider_link_id, expires_at,
           provider_transfer_id, provider_confirmed_at, movement_id, pending_step, step_at, error_message, breb_key_id, breb_key_external_id,
           breb_key_name, breb_key_value, created_at, updated_at, breb_event_at, breb_event_id, failed_at, reversed_at)
         select 'dep_' || substr(md5('dep-' || g), 1, 24), company_id, case when breb then 'BREB' else 'PSE' end, status, amount,
           fixed_fee, variable_fee, subtotal, true, iva, subtotal + iva, amount - subtotal - iva, 'COP',
           case when breb then null else 1 end, (10000000 + g % 89999999)::text,
           case when breb then null else (array['Ana', 'Luis', 'María', 'Jorge', 'Sofía'])[1 + g % 5] end,
           case when breb then null else (array['Gómez', 'Pérez', 'Rodríguez', 'Díaz'])[1 + g % 4] end,
           case when breb then (array['Ana Gómez', 'Luis Pérez', 'María Díaz'])[1 + g % 3] else null end,
           case when breb then null else 'pagador' || g || '@example.com' end, case when breb then null else '3' || (100000000 + g % 899999999) end,
           case when status in ('ASSIGNED', 'REVERSED', 'UNASSIGNED') then (array['BANCOLOMBIA', 'DAVIVIENDA', 'NEQUI'])[1 + g % 3] end,
           case when breb then null else 'ORD-' || g end, case when breb then null else 'key_scale' end,
           case when breb then null else 'https://pse.example.co/pay/' || g end, case when breb then null else 'lnk_' || g end,
           case when breb then null else at + interval '24 hours' end,
           case when status in ('ASSIGNED', 'REVERSED', 'UNASSIGNED', 'FAILED') then 'trf_' || g end,
           case when status in ('ASSIGNED', 'REVERSED', 'UNASSIGNED') then at + (g % 3600) * interval '1 second' end,
           case when breb then null else gen_random_uuid() end, null, null,
           case when status = 'FAILED' then 'El banco rechazó el pago' end,
           case when breb then 'bkey_' || substr(md5(company_id || ':' || (g % 3)), 1, 20) end,
           case when breb then 'ext-' || (g % 3) end, case when breb then 'Caja ' || (g % 3) end,
           case when breb then '@tienda' || (g % 3) end,
           at, at + interval '1 hour', case when breb then at + interval '1 second' end, case when breb then 'evt_' || g end,
           case when status = 'FAILED' then at + interval '10 minutes' end,
           case when status = 'REVERSED' and not breb then at + interval '2 days' end
         from v`,
        [LARGE, COMPANIES, done, done + n],
      );
      say(`${(done + n).toLocaleString('en')} deposits…`);
    }
    if (!REUSE) {
      await db.query('alter table pse_deposit.deposits enable trigger user');
      await db.query(`update pse_deposit.deposit_count_progress set after_company = null, done_at = null`);
      await db.query('delete from pse_deposit.deposit_counts');
      await db.query('vacuum analyze pse_deposit.deposits');
      counts = new SqlDepositCounts(db);
      store = new SqlDepositStore(db, undefined, counts);
      counter = new DepositCounter(counts, { intervalMs: 60_000 }, log);
    }
    if (!REUSE) report.fillSeconds = +((performance.now() - t) / 1000).toFixed(1);
    const [size] = await db.query(`select pg_total_relation_size('pse_deposit.deposits') as bytes`);
    report.depositsMiB = Math.round(Number(size.bytes) / 1048576);
    const mix = await db.query(
      `select source, status, count(*)::int as n, count(*) filter (where company_id = ?)::int as large from pse_deposit.deposits group by 1, 2 order by 1, 2`,
      [large],
    );
    report.mix = Object.fromEntries(mix.map((r) => [`${r.source} ${r.status}`, { all: r.n, large: r.large }]));
    say(
      `${DEPOSITS.toLocaleString('en')} deposits ${REUSE ? `(in ${REUSE})` : `in ${report.fillSeconds} s`} (${report.depositsMiB} MiB): ${JSON.stringify(report.mix)}`,
    );

    if (phases.includes('before')) {
      say('full, before');
      report.fullBefore = await measure(beforeStore);
    }
    if (phases.includes('after')) {
      if (!(await counts.ready())) {
        const t0 = performance.now();
        const run = await counter.run();
        const [c] = await db.query(
          `select count(*)::int as rows, pg_total_relation_size('pse_deposit.deposit_counts') as bytes from pse_deposit.deposit_counts`,
        );
        report.countsBackfill = {
          seconds: +((performance.now() - t0) / 1000).toFixed(1),
          companies: run.companies,
          rows: c.rows,
          kib: Math.round(Number(c.bytes) / 1024),
        };
        say(`deposit counts: the history counted ${JSON.stringify(report.countsBackfill)}`);
      }
      report.onlineIndexes = await buildOnline();
      const [ix] = await db.query(`select ${pseDepositOnlineIndexes.map((i) => `pg_relation_size('pse_deposit.${i.name}')`).join(' + ')} as bytes`);
      report.onlineIndexes.mib = Math.round(Number(ix.bytes) / 1048576);
      say(`online indexes: ${JSON.stringify(report.onlineIndexes)}; full, after`);
      report.fullAfter = await measure(store);
    }
    if (KEEP) say(`kept the database ${name}`);
    return report;
  } finally {
    await db?.close();
    await scratch.done();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const report = await runDepositsScaleBench();
  console.log(JSON.stringify(report, null, 2));
}
