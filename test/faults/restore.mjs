// Backups you can restore (issue 45): the ha profiles' primary and standbys archive their WAL; a base backup is
// taken before the workload. Last in the run, the whole cluster is lost (primary and standby crash) and the product
// is run on a restored copy, twice, as an operator would after a disaster (services/platform/src/testing/
// pg-cluster.ts: startRestored). Each copy starts in the primary's place, so every process follows it by itself;
// the provider simulator's records are put back as the provider keeps them (the simulator shares our database, a
// real provider's records are its own); then:
//
// - to the end of the archive: the copy holds every row committed (the main tables counted against the live
//   database before the crash), the money invariants hold on it against the rails' records, and the
//   reconciliation service reconciles the run's days with every break excused by a money exception, as live;
// - to a point in time in the middle of the workload (a restore that loses minutes): each transfer the rail
//   received that the copy lost is named by the invariants, and each the rail paid is a `missing_in_our_books`
//   break of the reconciliation (docs/operations.md "Backups and point-in-time restore").
import { join } from 'node:path';
import { checkInvariants } from '@wallet/invariants';
import { pgClientFor } from '@wallet/platform';
import { archiveCurrentWal, asPostgres, pgBin, postgresOwnedDirectory, startRestored } from '@wallet/platform/testing';

/** The tables whose rows a complete restore must hold, as many as the live database. */
const COUNTED = ['transfer.transfers', 'ledger.postings', 'ledger.entries', 'pse_deposit.deposits', 'collect_key.payments', 'webhook.deliveries'];

/** The URL with another database (several hosts allowed: not a WHATWG URL). */
export const withDatabase = (url, name) => url.replace(/^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?/, `$1/${name}`);

async function counts(db) {
  const out = {};
  for (const t of COUNTED) out[t] = (await db.query(`select count(*)::int as n from ${t}`)).rows[0].n;
  return out;
}
const ids = async (db, sql) => new Set((await db.query(sql)).rows.map((r) => r.id));

/**
 * `pair`'s primary and standby crash; `backup` is restored on `port` to the end of the archive, then to
 * `targetTime`, each with the product on it. `liveUrl`: the run's database before the crash; `reconcile(db, days)`:
 * the four rails' reports of `days` reconciled through a gateway, with the breaks no money exception of `db` is about; `ready()`: every process answers ready.
 * Returns the suite's checks and the figures. Runs last: the live cluster does not come back.
 */
export async function restoreDrill({ backup, archiveDir, pair, port, liveUrl, dbName, targetTime, days, reconcile, ready, log }) {
  // What the live database held, and what the rail did, read before the cluster is lost.
  const live = pgClientFor(liveUrl);
  await live.connect();
  const want = await counts(live);
  const liveIds = await ids(live, 'select id::text as id from transfer.transfers');
  const atRail = await ids(live, 'select transaction_id as id from sandbox.transfers');
  const paidAtRail = await ids(live, `select transaction_id as id from sandbox.transfers where status = 'COMPLETED'`);
  await live.end();
  archiveCurrentWal(pair.primary, archiveDir);
  const dumpDir = postgresOwnedDirectory('wallet-faults-provider-');
  const dump = join(dumpDir, 'sandbox.sql');
  const host = ['-h', '127.0.0.1', '-U', 'postgres', '-d', dbName];
  asPostgres(pgBin('pg_dump'), [...host, '-p', String(pair.primary.port), '--data-only', '--schema=sandbox', '--disable-triggers', '-f', dump]);
  pair.primary.stop('immediate');
  pair.standby.stop('immediate');
  log('the live cluster crashed (primary and standby); the product goes onto restored copies');

  const checks = [];
  const figures = {};
  const onCopy = async (label, opts, verdict) => {
    const started = Date.now();
    const cluster = startRestored(backup, archiveDir, port, opts);
    const restoreMs = Date.now() - started;
    const db = pgClientFor(withDatabase(cluster.url, dbName));
    try {
      await db.connect();
      // The provider's records as the provider has them, in one transaction: the processes already reach the copy, and
      // the simulator writes a dispatch that reaches it meanwhile after the records are back (its own, idempotent).
      const tables = (await db.query(`select format('%I.%I', schemaname, tablename) as t from pg_tables where schemaname = 'sandbox'`)).rows.map((r) => r.t);
      asPostgres(pgBin('psql'), ['-X', '-q', '-1', '-v', 'ON_ERROR_STOP=1', ...host, '-p', String(port), '-c', `truncate ${tables.join(', ')}`, '-f', dump]);
      const got = await counts(db);
      const restored = await ids(db, 'select id::text as id from transfer.transfers');
      const report = await checkInvariants(db, { settled: true, rail: 'auto', list: 1_000_000 });
      const violations = report.checks.flatMap((c) => c.violations.map((v) => `[${c.name}] ${v}`));
      await ready();
      const upMs = Date.now() - started;
      const r = await reconcile(db, days);
      const lost = [...liveIds].filter((id) => !restored.has(id));
      const f = {
        restoreMs,
        upMs,
        lostTransfers: lost.length,
        lostAtRail: lost.filter((id) => atRail.has(id)),
        lostPaid: lost.filter((id) => paidAtRail.has(id)),
        invariantViolations: violations.length,
      };
      figures[label] = { ...f, lostAtRail: f.lostAtRail.length, lostPaid: f.lostPaid.length, reportLines: r.lines, breaks: r.breaks.length };
      log(
        `restored ${label}: in ${restoreMs} ms, serving after ${upMs} ms; ${lost.length} transfers not in the copy (${f.lostAtRail.length} at the rail, ${f.lostPaid.length} paid); ${violations.length} invariant violations; ${r.lines} report lines, ${r.breaks.length} breaks`,
      );
      checks.push(verdict({ ...r, ...f, got, violations }));
    } finally {
      await db.end().catch(() => {});
      cluster.destroy();
    }
  };
  try {
    await onCopy('to the end of the archive', {}, (r) => ({
      name: `backup restored to the end of the archive (${r.restoreMs} ms; the product serving after ${r.upMs} ms): every committed row there (${Object.entries(
        want,
      )
        .map(([t, n]) => `${n} ${t}`)
        .join(
          ', ',
        )}), the money invariants hold against the rail, the four rails' reports of ${days.join(', ')} RECONCILED (${r.lines} lines) with each of the ${r.breaks.length} breaks about a resource with a money exception`,
      violations: [
        ...Object.entries(want)
          .filter(([t, n]) => r.got[t] !== n)
          .map(([t, n]) => `${t}: ${r.got[t]} rows restored, ${n} committed`),
        ...r.violations,
        ...r.failed,
        ...r.unexcused,
      ],
    }));
    await onCopy(`to ${targetTime.toISOString()}`, { targetTime }, (r) => {
      const broken = new Set(r.breaks.filter((b) => b.kind === 'missing_in_our_books').map((b) => b.theirs?.ourId ?? b.ourId));
      return {
        name: `backup restored to ${targetTime.toISOString()} (${r.restoreMs} ms): of the ${r.lostTransfers} transfers made later, the ${r.lostAtRail.length} the rail received are each named by ledger:check against the rail, and the ${r.lostPaid.length} it paid are each a missing_in_our_books break of the reconciliation (${r.breaks.length} breaks)`,
        violations: [
          ...(r.lostPaid.length === 0 ? ['the copy lost no transfer the rail paid: the drill showed nothing'] : []),
          ...r.failed,
          ...r.lostAtRail
            .filter((id) => !r.violations.some((l) => l.includes(`received transfer ${id}, unknown`)))
            .map((id) => `transfer ${id}: at the rail, lost by the copy, not named by ledger:check`),
          ...r.lostPaid.filter((id) => !broken.has(id)).map((id) => `transfer ${id}: paid by the rail, lost by the copy, no missing_in_our_books break`),
        ],
      };
    });
  } finally {
    asPostgres('rm', ['-rf', dumpDir]);
  }
  return { checks, figures };
}
