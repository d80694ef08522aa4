// Cost at scale (issue 44; docs/benchmarks.md "Scale", docs/balance-checkpoints.md): in a scratch
// database, the ledger's schema as its migrations leave it, filled through bulk statements that keep
// every invariant: SCALE_COMPANIES companies (default 100,000) with both wallets, SCALE_POSTINGS
// postings (default 10,000,000) of two entries each over the last 365 days, SCALE_LARGE_POSTINGS of
// them (default 1,000,000) on one large company's BREB wallet. Each posting is queued for the
// tamper-evident journal, as the posting statements leave it.
//
// Measured with the ledger's own code (its store, its checkpointer, its invariant check):
//   - a balance at an instant (GetBalanceAt's query), p50/p99 over SCALE_SAMPLES calls (default
//     2,000) at random instants of the year, for a typical company and for the large one: on the
//     empty ledger (the same wallets, no postings), on the full one before any checkpoint (the sum
//     from the beginning: the cost before this issue) and after the checkpointer's backfill pass;
//   - the backfill pass (how long, rows written) and a pass with nothing new;
//   - `ledger:check` (checkInvariants) on the full ledger, recording the verified cut (SCALE_CHECK_PLAIN=1: once
//     without recording before it), then incremental over a day's postings since it (docs/ledger-check.md),
//     unless SCALE_CHECK=0;
//   - a migration adding an indexed column to the postings, with a writer inserting meanwhile: its
//     longest wait, the index built in the migration's transaction and online (docs/migrations.md).
//   - the transaction listing (GET /wallets/transactions: first page, a page 10,000 deep by cursor, a month by
//     date, a type filter every movement matches and one none does, a rail filter none matches), a movement's detail and the large
//     company's month statement read page by page (lines/s, RSS), empty and full (each posting gets its
//     movement, a BALANCE_ADD); SCALE_ONLY=listings measures only these (SCALE_REUSE=<kept db>, or an empty
//     one with SCALE_POSTINGS=0); SCALE_LISTINGS=0 leaves them (and the movements' fill) out;
// Prints a JSON report; drops the database (SCALE_KEEP=1 keeps it and prints its name; SCALE_REUSE=<name>
// measures a kept one again without filling it). SCALE_SLOW_SAMPLES (20): calls for the large company
// before checkpoints, each of which reads its whole history.
//   node test/bench/scale.mjs          (after `npx turbo run build`)
//   BENCH_ONLY=scale node test/bench/run.mjs   (the same, as a phase of the bench)
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { imp, int, quantiles, scratchDatabase } from './scale-support.mjs';

/** Runs the scale measurements; returns the report (also what the CLI prints). */
export async function runScaleBench(opts = {}) {
  const { Database, createLogger } = await import('@wallet/platform');
  const { ledgerMigrations, ledgerOnlineIndexes } = await imp('services/ledger/dist/persistence/migrations/index.js');
  const { SqlLedgerStore } = await imp('services/ledger/dist/persistence/ledger.store.js');
  const { CheckpointStore } = await imp('services/ledger/dist/persistence/checkpoint.store.js');
  const { BalanceCheckpointer } = await imp('services/ledger/dist/app/balance-checkpoints.js');
  const { checkInvariants } = await imp('services/ledger/dist/persistence/invariants.js');

  const COMPANIES = opts.companies ?? int('SCALE_COMPANIES', 100_000);
  const POSTINGS = opts.postings ?? int('SCALE_POSTINGS', 10_000_000);
  const LARGE = Math.min(POSTINGS, opts.large ?? int('SCALE_LARGE_POSTINGS', 1_000_000));
  const SAMPLES = opts.samples ?? int('SCALE_SAMPLES', 2_000);
  const CHECK = (process.env.SCALE_CHECK ?? '1') !== '0';
  const KEEP = process.env.SCALE_KEEP === '1' || !!process.env.SCALE_REUSE;
  /** A database a previous run kept (SCALE_KEEP=1) or left behind, filled with these sizes: measured again, not filled. */
  const REUSE = process.env.SCALE_REUSE;
  /** Calls for the large company before checkpoints: each reads its whole history (seconds each at 1,000,000). */
  const SLOW_SAMPLES = int('SCALE_SLOW_SAMPLES', 20);
  /** SCALE_ONLY=listings: only the listings and reads (on a kept database with SCALE_REUSE, or a new one). */
  const ONLY = process.env.SCALE_ONLY ?? '';
  /**
   * SCALE_LISTING_BEFORE=1: the transaction listing as it was before issue 44's fix, for the side-by-side
   * (its order named the select list's text columns, so the index could not give it; every page sorted the
   * company's movements). Nothing else changes.
   */
  const LISTING_BEFORE = process.env.SCALE_LISTING_BEFORE === '1';
  /** SCALE_LISTINGS=0: no movements and no listing figures (the movements' fill is half an hour at 10,000,000). */
  const LISTINGS = (process.env.SCALE_LISTINGS ?? '1') !== '0';
  /** SCALE_CHECK_PLAIN=1: the full check once without recording too, before the one that records. */
  const CHECK_PLAIN = process.env.SCALE_CHECK_PLAIN === '1';
  if (ONLY && ONLY !== 'listings') throw new Error(`SCALE_ONLY takes listings (got ${ONLY})`);
  const say = opts.log ?? ((m) => console.error(`[scale] ${m}`));
  if (COMPANIES < 2) throw new Error('SCALE_COMPANIES must be at least 2');

  const scratch = await scratchDatabase({ prefix: 'scale_bench', reuse: REUSE, keep: KEEP });
  const { name, url } = scratch;
  const log = createLogger('scale-bench', 'warn');
  let db;
  try {
    db = await Database.open({
      url,
      schema: 'ledger',
      migrations: ledgerMigrations,
      // before issue 44's listing fix there were no such indexes (SCALE_LISTING_BEFORE drops them)
      onlineIndexes: LISTING_BEFORE ? [] : ledgerOnlineIndexes,
      logger: log,
      poolMax: 4,
    });
    await db.migrate();
    if (LISTING_BEFORE) for (const ix of ledgerOnlineIndexes) await db.query(`drop index if exists ledger.${ix.name}`);
    const store = new SqlLedgerStore(db);
    const company = (k) => `md5('scale-' || ${k})::uuid::text`;
    const [{ large }] = await db.query(`select ${company(0)} as large`);

    let t = performance.now();
    if (REUSE) {
      // measured again from the start: no checkpoint, nothing of an earlier run's migration test
      await db.query('delete from ledger.balance_checkpoints');
      await db.query('update ledger.balance_checkpoint_progress set through = null, target = null, after_company = null, after_rail = null');
      for (const c of ['bench_old', 'bench_new']) await db.query(`alter table ledger.postings drop column if exists ${c}`);
      await db.query("delete from ledger.postings where idempotency_key like 'scale-writer-%'");
    } else
      await db.query(
        `insert into ledger.wallets (company_id, rail) select ${company('k')}, r from generate_series(0, ?::int - 1) k, unnest(array['BREB', 'ACH']) r`,
        [COMPANIES],
      );
    await db.query('analyze ledger.wallets');
    if (!REUSE) say(`${COMPANIES.toLocaleString('en')} companies, two wallets each, in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    // The instants asked: random over the year (the same ones at every stage), and companies chosen at random.
    const yearMs = 365 * 86_400_000;
    const now = Date.now();
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const typical = Array.from({ length: SAMPLES }, () => ({
      k: 1 + Math.floor(rand() * (COMPANIES - 1)),
      rail: rand() < 1 / 3 ? 'ACH' : 'BREB',
      at: new Date(now - 120_000 - Math.floor(rand() * yearMs)).toISOString(),
    }));
    const largeAt = Array.from({ length: SAMPLES }, () => new Date(now - 120_000 - Math.floor(rand() * yearMs)).toISOString());
    // md5('scale-' || k)::uuid::text, as the statements name company k
    const idOf = {
      get: (k) =>
        createHash('md5')
          .update(`scale-${k}`)
          .digest('hex')
          .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'),
    };
    if (idOf.get(0) !== large) throw new Error(`company ids: ${idOf.get(0)} is not ${large}`);

    /** `largeCalls`: fewer calls for the large company where each reads its whole history (no checkpoint yet). */
    const measure = async (largeCalls = SAMPLES) => {
      const out = {};
      for (const [label, calls] of [
        ['typical', typical.map((s) => () => store.balanceAt(idOf.get(s.k), s.rail, s.at))],
        ['large', largeAt.slice(0, largeCalls).map((at) => () => store.balanceAt(large, 'BREB', at))],
        // the large company's other wallet, which never moves: a balance read scans the company's postings
        // after this wallet's checkpoint (docs/balance-checkpoints.md, carried-forward checkpoints)
        ['largeQuietWallet', largeAt.slice(0, largeCalls).map((at) => () => store.balanceAt(large, 'ACH', at))],
      ]) {
        for (const c of calls.slice(0, Math.min(50, calls.length / 4))) await c(); // warm the pool, the plan cache and the buffers
        const ms = [];
        for (const c of calls) {
          const t0 = performance.now();
          await c();
          ms.push(performance.now() - t0);
        }
        out[label] = quantiles(ms);
      }
      return out;
    };

    /**
     * Every posting's movement (docs/LEDGER.md: what GET /wallets/transactions lists), for the postings that
     * have none: a BALANCE_ADD of the credited amount, created with its posting, the posting linked to it
     * (invariant 5: a movement equals its postings). Bulk, in one statement each.
     */
    const fillMovements = async () => {
      const t0 = performance.now();
      await db.query(
        `insert into ledger.movements (id, company_id, type, rail, wallet_rail, status, amount, net_amount, created_at, updated_at, completed_at)
         select p.id, p.company_id, 'BALANCE_ADD', p.rail, p.rail, 'COMPLETED', e.amount, e.amount, p.created_at, p.created_at, p.created_at
           from ledger.postings p join ledger.entries e on e.posting_id = p.id and e.seq = 2
          where p.kind = 'credit' and p.movement_id is null`,
      );
      await db.query(`update ledger.postings set movement_id = id where kind = 'credit' and movement_id is null`);
      await db.query('vacuum analyze ledger.movements');
      await db.query('vacuum analyze ledger.postings');
      const [m] = await db.query(`select count(*)::int as n, pg_total_relation_size('ledger.movements') as bytes from ledger.movements`);
      return { seconds: +((performance.now() - t0) / 1000).toFixed(1), movements: m.n, mib: Math.round(Number(m.bytes) / 1048576) };
    };

    /**
     * The transaction listing and the reads beside it (GET /wallets/transactions, …/{id}, the statements'
     * pages), with the ledger's own store on one connection: p50/p99 over SAMPLES calls (or fewer where
     * said). The typical company's first page; the large company's first page, a page 10,000 deep by
     * cursor, a month by date, by a type every movement has and by one none has (the whole company read
     * to find nothing: the worst case of a filter); a movement's detail; and the large company's month
     * statement read page by page (lines/s, and the process's RSS before and at its peak).
     */
    const measureListings = async () => {
      const out = {};
      const { movementCols, isoUs, toMovement } = await imp('services/ledger/dist/persistence/rows.js');
      const before = {
        async listMovements(companyId, filter, page) {
          const where = ['company_id = ?'];
          const params = [companyId];
          const and = (cond, ...values) => {
            where.push(cond);
            params.push(...values);
          };
          if (filter.type) and('type = ?', filter.type);
          if (filter.rail) and('rail = ?', filter.rail);
          if (filter.from) and('created_at >= ?::timestamptz', filter.from);
          if (filter.to) and('created_at <= ?::timestamptz', filter.to);
          if (page.after) and('(created_at, id) < (?::timestamptz, ?::uuid)', page.after.createdAt, page.after.id);
          const rows = await store.run(
            `select ${movementCols()}, ${isoUs('created_at')} as cursor_ts from ledger.movements
              where ${where.join(' and ')} order by created_at desc, id desc limit ? offset ?`,
            [...params, page.limit + 1, page.offset],
          );
          return {
            items: rows.slice(0, page.limit).map((r) => ({ ...toMovement(r), cursor: { createdAt: r.cursor_ts, id: r.id } })),
            hasMore: rows.length > page.limit,
          };
        },
      };
      const listing = LISTING_BEFORE ? before : store;
      const run = async (label, calls) => {
        for (const c of calls.slice(0, Math.min(50, Math.ceil(calls.length / 4)))) await c();
        const ms = [];
        for (const c of calls) {
          const t0 = performance.now();
          await c();
          ms.push(performance.now() - t0);
        }
        out[label] = quantiles(ms);
      };
      const page = { limit: 50, offset: 0 };
      await run(
        'firstPageTypical',
        typical.map((x) => () => listing.listMovements(idOf.get(x.k), {}, page)),
      );
      await run(
        'firstPageLarge',
        typical.map(() => () => listing.listMovements(large, {}, page)),
      );
      const [deep] = await db.query(
        `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at, id::text as id
           from ledger.movements where company_id = ? order by created_at desc, id desc offset 9999 limit 1`,
        [large],
      );
      const after = deep
        ? { createdAt: deep.created_at, id: deep.id }
        : { createdAt: new Date(now - 86_400_000).toISOString(), id: 'ffffffff-ffff-ffff-ffff-ffffffffffff' };
      await run(
        'page10000DeepLarge',
        typical.map(() => () => listing.listMovements(large, {}, { ...page, after })),
      );
      const month = (at) => ({ from: new Date(Date.parse(at) - 30 * 86_400_000).toISOString(), to: at });
      await run(
        'monthByDateLarge',
        largeAt.map((at) => () => listing.listMovements(large, month(at), page)),
      );
      await run(
        'typeEveryLarge',
        typical.map(() => () => listing.listMovements(large, { type: 'BALANCE_ADD' }, page)),
      );
      const NONE_CALLS = Math.min(SAMPLES, 20);
      await run(
        'typeNoneLarge',
        typical.slice(0, NONE_CALLS).map(() => () => listing.listMovements(large, { type: 'TRANSFER_OUT' }, page)),
      );
      // the large company's movements are all on its BREB wallet: a rail filter that matches none
      await run(
        'railNoneLarge',
        typical.slice(0, NONE_CALLS).map(() => () => listing.listMovements(large, { rail: 'ACH' }, page)),
      );
      const ids = await db.query(`select company_id, id::text as id from ledger.movements tablesample system (0.01) limit ?`, [SAMPLES]);
      if (ids.length)
        await run(
          'detail',
          ids.map((r) => () => store.getMovement(r.company_id, r.id)),
        );
      // the large company's last full month, read page by page as StreamStatement does
      const to = new Date(now - 86_400_000).toISOString();
      const from = new Date(Date.parse(to) - 30 * 86_400_000).toISOString();
      const rssBefore = process.memoryUsage().rss;
      let peak = rssBefore;
      let lines = 0;
      const t0 = performance.now();
      let cursor = { createdAt: from, id: 'ffffffff-ffff-ffff-ffff-ffffffffffff' };
      for (;;) {
        const rows = await store.statementPage(large, 'BREB', cursor, to, 1000);
        lines += rows.length;
        peak = Math.max(peak, process.memoryUsage().rss);
        if (rows.length < 1000) break;
        // the page's last line is the next page's cursor, as StreamStatement reads on
        cursor = { createdAt: rows[rows.length - 1].postedAt, id: rows[rows.length - 1].postingId };
      }
      const seconds = (performance.now() - t0) / 1000;
      out.monthStatementLarge = {
        lines,
        seconds: +seconds.toFixed(2),
        linesPerSecond: lines ? Math.round(lines / seconds) : 0,
        rssMiB: { before: Math.round(rssBefore / 1048576), peak: Math.round(peak / 1048576) },
      };
      return out;
    };

    const report = { companies: COMPANIES, postings: POSTINGS, largePostings: LARGE, samples: SAMPLES, balanceAt: {} };
    if (ONLY === 'listings') {
      if (!REUSE && POSTINGS > 0) throw new Error('SCALE_ONLY=listings measures a kept database (SCALE_REUSE) or an empty one (SCALE_POSTINGS=0)');
      if (POSTINGS > 0) {
        report.movementsFill = await fillMovements();
        say(`movements for every posting: ${JSON.stringify(report.movementsFill)}`);
      }
      report.listings = await measureListings();
      say(`listings and reads (${POSTINGS > 0 ? 'full' : 'empty'}): ${JSON.stringify(report.listings)}`);
      return report;
    }
    if (!REUSE) {
      report.balanceAt.empty = await measure();
      say(`balance at an instant, empty ledger: ${JSON.stringify(report.balanceAt.empty)}`);
      if (LISTINGS) {
        report.listingsEmpty = await measureListings();
        say(`listings and reads, empty ledger: ${JSON.stringify(report.listingsEmpty)}`);
      }

      // The postings, in chunks: the large company's first, then the others spread over the companies.
      t = performance.now();
      const CHUNK = 250_000;
      for (let done = 0; done < POSTINGS; done += CHUNK) {
        const n = Math.min(CHUNK, POSTINGS - done);
        await db.query(
          `with s as (
           select gen_random_uuid() as id, g,
                  case when g <= ?::bigint then 0 else 1 + ((g * 2654435761) % (?::bigint - 1)) end as k,
                  now() - interval '2 minutes' - random() * interval '365 days' as at
             from generate_series(?::bigint + 1, ?::bigint) g),
         c as (select s.*, ${company('s.k')} as company_id, case when s.k <> 0 and s.g % 3 = 0 then 'ACH' else 'BREB' end as rail from s),
         p as (insert into ledger.postings (id, idempotency_key, request_hash, kind, company_id, rail, created_at)
               select id, 'scale-' || g, 'h', 'credit', company_id, rail, at from c),
         e as (insert into ledger.entries (posting_id, seq, account, amount)
               select id, 1, 'funding', -(100 + g % 900) from c
               union all
               select id, 2, 'wallet_available:' || company_id || ':' || rail, 100 + g % 900 from c)
         insert into ledger.journal_queue (posting_id) select id from c order by at`,
          [LARGE, COMPANIES, done, done + n],
        );
        if ((done / CHUNK) % 8 === 7) say(`${(done + n).toLocaleString('en')} postings…`);
      }
      // The wallets as the postings left them (invariant 2: the row equals the journal, version = postings).
      await db.query(
        `update ledger.wallets w set available_cents = a.total, version = a.n
         from (select split_part(account, ':', 2) as company_id, split_part(account, ':', 3) as rail, sum(amount) as total, count(*) as n
                 from ledger.entries where starts_with(account, 'wallet_available:') group by 1, 2) a
        where w.company_id = a.company_id and w.rail = a.rail`,
      );
      await db.query('vacuum analyze ledger.postings');
      await db.query('vacuum analyze ledger.entries');
      await db.query('analyze ledger.wallets');
      report.generateSeconds = +((performance.now() - t) / 1000).toFixed(1);
      if (LISTINGS) {
        report.movementsFill = await fillMovements();
        say(`movements for every posting: ${JSON.stringify(report.movementsFill)}`);
      }
    }
    const [size] = await db.query(`select pg_total_relation_size('ledger.postings') as postings, pg_total_relation_size('ledger.entries') as entries`);
    report.sizesMiB = { postings: Math.round(Number(size.postings) / 1048576), entries: Math.round(Number(size.entries) / 1048576) };
    say(
      `${POSTINGS.toLocaleString('en')} postings${REUSE ? ` (in ${REUSE})` : ` generated in ${report.generateSeconds} s`} (${JSON.stringify(report.sizesMiB)} MiB)`,
    );

    report.balanceAt.fullBeforeCheckpoints = await measure(Math.min(SAMPLES, SLOW_SAMPLES));
    say(`balance at an instant, full ledger, no checkpoint: ${JSON.stringify(report.balanceAt.fullBeforeCheckpoints)}`);

    const checkpointer = new BalanceCheckpointer(new CheckpointStore(db), { intervalMs: 3_600_000, marginSeconds: 60 }, log);
    t = performance.now();
    const pass = await checkpointer.run();
    report.backfill = { seconds: +((performance.now() - t) / 1000).toFixed(1), wallets: pass.wallets, written: pass.written, through: pass.through };
    t = performance.now();
    const again = await checkpointer.run();
    report.idlePass = { seconds: +((performance.now() - t) / 1000).toFixed(2), written: again.written };
    await db.query('analyze ledger.balance_checkpoints');
    const [cps] = await db.query(`select pg_total_relation_size('ledger.balance_checkpoints') as bytes, count(*)::int as n from ledger.balance_checkpoints`);
    report.checkpoints = { rows: cps.n, mib: Math.round(Number(cps.bytes) / 1048576) };
    say(
      `checkpoint backfill: ${JSON.stringify(report.backfill)}; a pass with nothing new: ${JSON.stringify(report.idlePass)}; ${JSON.stringify(report.checkpoints)}`,
    );

    report.balanceAt.fullWithCheckpoints = await measure();
    say(`balance at an instant, full ledger, with checkpoints: ${JSON.stringify(report.balanceAt.fullWithCheckpoints)}`);
    if (LISTINGS) {
      report.listings = await measureListings();
      say(`listings and reads, full ledger: ${JSON.stringify(report.listings)}`);
    }

    if (CHECK) {
      // The journal as the sealer leaves it (docs/journal.md): every queued posting given its position.
      // The hashes are placeholders (the chain's cost is the journal bench's; no check here reads them).
      const sealAll = () =>
        db.query(
          `with q as (delete from ledger.journal_queue returning n, posting_id)
           insert into ledger.journal (seq, posting_id, content_hash, hash)
           select coalesce((select max(seq) from ledger.journal), 0) + row_number() over (order by n), posting_id,
                  sha256(convert_to(posting_id::text, 'UTF8')), sha256(convert_to(posting_id::text, 'UTF8'))
             from q`,
        );
      t = performance.now();
      await sealAll();
      await db.query('vacuum analyze ledger.journal');
      say(`journal positions for every posting: ${((performance.now() - t) / 1000).toFixed(1)} s`);
      if (CHECK_PLAIN) {
        t = performance.now();
        const plain = await checkInvariants(db);
        report.ledgerCheckPlain = { seconds: +((performance.now() - t) / 1000).toFixed(1), violations: plain.violations.length };
        say(`ledger:check (full, not recording): ${JSON.stringify(report.ledgerCheckPlain)}`);
      }
      t = performance.now();
      const inv = await checkInvariants(db, { record: true });
      report.ledgerCheck = {
        seconds: +((performance.now() - t) / 1000).toFixed(1),
        violations: inv.violations.length,
        postings: String(inv.postings),
        cut: inv.cut ? String(inv.cut.seq) : null,
      };
      say(
        `ledger:check (full, recording the verified cut): ${JSON.stringify(report.ledgerCheck)}${inv.violations.length ? `\n${inv.violations.slice(0, 5).join('\n')}` : ''}`,
      );

      // A day's postings after the cut (the year's average day), in the last hour, then sealed: what the
      // hourly self-check and `ledger:check --incremental` read (docs/ledger-check.md).
      const DAY = Math.max(1, Math.round(POSTINGS / 365));
      t = performance.now();
      await db.query(
        `with s as (
           select gen_random_uuid() as id, g, 1 + ((g * 2654435761) % (?::bigint - 1)) as k, now() - random() * interval '1 hour' as at
             from generate_series(?::bigint + 1, ?::bigint) g),
         c as (select s.*, ${company('s.k')} as company_id, case when s.g % 3 = 0 then 'ACH' else 'BREB' end as rail from s),
         p as (insert into ledger.postings (id, idempotency_key, request_hash, kind, company_id, rail, created_at)
               select id, 'scale-day-' || g, 'h', 'credit', company_id, rail, at from c),
         e as (insert into ledger.entries (posting_id, seq, account, amount)
               select id, 1, 'funding', -(100 + g % 900) from c
               union all
               select id, 2, 'wallet_available:' || company_id || ':' || rail, 100 + g % 900 from c),
         w as (update ledger.wallets w set available_cents = w.available_cents + a.total, version = w.version + a.n
                 from (select company_id, rail, sum(100 + g % 900) as total, count(*) as n from c group by 1, 2) a
                where w.company_id = a.company_id and w.rail = a.rail)
         insert into ledger.journal_queue (posting_id) select id from c order by at`,
        [COMPANIES, POSTINGS, POSTINGS + DAY],
      );
      await sealAll();
      await db.query('analyze ledger.journal');
      say(`a day's ${DAY.toLocaleString('en')} postings after the cut: ${((performance.now() - t) / 1000).toFixed(1)} s`);
      t = performance.now();
      const inc = await checkInvariants(db, { mode: 'incremental' });
      const incSeconds = +((performance.now() - t) / 1000).toFixed(1);
      t = performance.now();
      const rec = await checkInvariants(db, { mode: 'incremental', record: true });
      report.ledgerCheckIncremental = {
        postingsSinceCut: DAY,
        seconds: incSeconds,
        violations: inc.violations.length,
        recordingSeconds: +((performance.now() - t) / 1000).toFixed(1),
        cut: rec.cut ? String(rec.cut.seq) : null,
      };
      say(
        `ledger:check (incremental, a day since the cut): ${JSON.stringify(report.ledgerCheckIncremental)}${inc.violations.length ? `\n${inc.violations.slice(0, 5).join('\n')}` : ''}`,
      );
    }
    // A migration that adds an indexed column to the postings (docs/migrations.md), while a writer
    // inserts postings one at a time: the writer's longest wait, the old way (column and index in the
    // migration's transaction) and the rules' way (the column in the migration, the index online).
    const writerDuring = async (work) => {
      const w = new pg.Client({ connectionString: url });
      await w.connect();
      let stop = false;
      const waits = [];
      const writer = (async () => {
        for (let i = 0; !stop; i++) {
          const t0 = performance.now();
          await w.query(
            `insert into ledger.postings (id, idempotency_key, request_hash, kind, company_id, rail) values (gen_random_uuid(), $1, 'h', 'credit', $2, 'BREB')`,
            [`scale-writer-${process.pid}-${Date.now()}-${i}`, large],
          );
          waits.push(performance.now() - t0);
        }
      })();
      await new Promise((r) => setTimeout(r, 500));
      const t0 = performance.now();
      await work();
      const seconds = (performance.now() - t0) / 1000;
      await new Promise((r) => setTimeout(r, 500));
      stop = true;
      await writer;
      await w.end();
      return { seconds: +seconds.toFixed(1), writes: waits.length, longestWriteWaitMs: Math.round(Math.max(...waits)), p99WriteMs: quantiles(waits).p99 };
    };
    const m = new pg.Client({ connectionString: url });
    await m.connect();
    try {
      report.migration = {};
      report.migration.inTransaction = await writerDuring(async () => {
        await m.query('begin');
        await m.query('alter table ledger.postings add column bench_old text');
        await m.query('create index postings_bench_old_idx on ledger.postings (bench_old)');
        await m.query('commit');
      });
      say(`a column and its index in the migration's transaction: ${JSON.stringify(report.migration.inTransaction)}`);
      report.migration.online = await writerDuring(async () => {
        await m.query('begin');
        await m.query('alter table ledger.postings add column bench_new text');
        await m.query('commit');
        await db.buildOnlineIndex({ name: 'postings_bench_new_idx', on: 'ledger.postings (bench_new)' });
      });
      say(`the column in the migration, the index online: ${JSON.stringify(report.migration.online)}`);
    } finally {
      await m.end();
    }

    if (KEEP) say(`kept the database ${name}`);
    return report;
  } finally {
    await db?.close();
    await scratch.done();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const report = await runScaleBench();
  console.log(JSON.stringify(report, null, 2));
  if (report.ledgerCheck && report.ledgerCheck.violations > 0) process.exitCode = 1;
}
