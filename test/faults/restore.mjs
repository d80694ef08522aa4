// Backups you can restore (issue 45): the ha profiles' primary and standbys archive their WAL; a base backup is
// taken before the workload. After the run the suite restores that backup twice, as an operator would after
// losing every node (services/platform/src/testing/pg-cluster.ts: startRestored):
//
// - to the end of the archive: the restored copy must hold everything committed (the tables' rows equal the
//   live database's) and the money invariants must hold on it, the rails' side read from the provider's live
//   records (a rail keeps its own, whatever happened to our database);
// - to a point in time in the middle of the workload (a restore that loses minutes): the same check must name
//   every transfer the rail received that the restored copy no longer knows, the difference reconciliation
//   against the rail's report finds (docs/operations.md "Backups and point-in-time restore").
//
// Then the product itself is moved onto each restored copy (`reconcileOnRestoredCopies`), as after losing the
// whole cluster, and the reconciliation service reconciles the run's days against the rails' reports.
import { join } from 'node:path';
import { Snapshot, checkInvariants, sandboxRail } from '@wallet/invariants';
import { pgClientFor } from '@wallet/platform';
import { archiveCurrentWal, asPostgres, pgBin, postgresOwnedDirectory, startRestored } from '@wallet/platform/testing';

/** The tables whose rows a complete restore must hold, as many as the live database. */
const COUNTED = ['transfer.transfers', 'ledger.postings', 'ledger.entries', 'pse_deposit.deposits', 'collect_key.payments', 'webhook.deliveries'];

const withDatabase = (url, name) => url.replace(/^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?/, `$1/${name}`);

async function counts(db) {
  const out = {};
  for (const t of COUNTED) {
    const exists = (await db.query('select to_regclass($1) is not null as ok', [t])).rows[0].ok;
    if (exists) out[t] = (await db.query(`select count(*)::int as n from ${t}`)).rows[0].n;
  }
  return out;
}

/** The invariants on the restored copy with the live provider's records as the rails' truth (every violation listed). */
async function invariantsAgainstLiveRail(restoredDb, liveDb) {
  const live = await Snapshot.begin(liveDb);
  try {
    return await checkInvariants(restoredDb, { settled: true, rail: sandboxRail(live.reader('sandbox')), list: 1_000_000 });
  } finally {
    await live.rollback();
  }
}

/**
 * Restores `backup` (to the end of the archive, then to `targetTime`) on `port` and checks each copy against the
 * live database `liveDb` (a pg client on the run's database). Returns the suite's checks and the figures.
 */
export async function restoreDrill({ backup, archiveDir, primary, port, dbName, liveDb, targetTime, log }) {
  const checks = [];
  const figures = {};
  const restoreAndCheck = async (label, opts, verdict) => {
    const started = Date.now();
    const cluster = startRestored(backup, archiveDir, port, opts);
    const restoreMs = Date.now() - started;
    const db = pgClientFor(withDatabase(cluster.url, dbName));
    try {
      await db.connect();
      const report = await invariantsAgainstLiveRail(db, liveDb);
      const got = await counts(db);
      const want = await counts(liveDb);
      const liveIds = (await liveDb.query('select id::text as id from transfer.transfers')).rows.map((r) => r.id);
      const restoredIds = new Set((await db.query('select id::text as id from transfer.transfers')).rows.map((r) => r.id));
      const lost = liveIds.filter((id) => !restoredIds.has(id));
      const atRail = new Set(
        (await liveDb.query('select transaction_id as id from sandbox.transfers where transaction_id = any($1::text[])', [lost])).rows.map((r) => r.id),
      );
      const lines = report.checks.flatMap((c) => c.violations.map((v) => `[${c.name}] ${v}`));
      const r = { restoreMs, got, want, lost: lost.length, lostAtRail: atRail.size, atRailIds: [...atRail], lines };
      figures[label] = { restoreMs, lostTransfers: lost.length, lostTransfersAtRail: atRail.size, invariantViolations: lines.length };
      log(`restore ${label}: ${restoreMs} ms; ${lost.length} transfers not in the copy (${atRail.size} at the rail); ${lines.length} invariant violations`);
      checks.push(verdict(r));
    } finally {
      await db.end().catch(() => {});
      cluster.destroy();
    }
  };

  archiveCurrentWal(primary, archiveDir);
  await restoreAndCheck('to the end of the archive', {}, (r) => ({
    name: `backup restored to the end of the archive (${r.restoreMs} ms): every committed row there (${Object.entries(r.want)
      .map(([t, n]) => `${n} ${t}`)
      .join(', ')}), the money invariants hold against the live rail`,
    violations: [
      ...Object.entries(r.want)
        .filter(([t, n]) => r.got[t] !== n)
        .map(([t, n]) => `${t}: ${r.got[t]} rows restored, ${n} committed`),
      ...r.lines,
    ],
  }));
  await restoreAndCheck(`to ${targetTime.toISOString()}`, { targetTime }, (r) => ({
    name: `backup restored to ${targetTime.toISOString()} (${r.restoreMs} ms): of the ${r.lost} transfers made later, the ${r.lostAtRail} the rail received are each named by ledger:check against the rail`,
    violations: [
      ...(r.lostAtRail === 0 ? ['the copy lost no transfer the rail had: the drill showed nothing'] : []),
      ...r.atRailIds
        .filter((id) => !r.lines.some((l) => l.includes(`received transfer ${id}, unknown`)))
        .map((id) => `transfer ${id}: at the rail, lost by the copy, not named`),
    ],
  }));
  return { checks, figures };
}

/**
 * The whole cluster lost, the product run on a restored copy: the live nodes crash, the copy starts in the
 * primary's place (every process follows the writable host by itself), the provider's records are put back as
 * the provider keeps them (the simulator shares our database; a real provider's records are its own), every
 * process answers ready again, and `reconcile(days)` reconciles the four rails' reports through a gateway.
 * To the end of the archive: every run RECONCILED, every break excused by a money exception of the copy (as on
 * the live database). To `targetTime`: each transfer the rail paid that the copy lost is a `missing_in_our_books`
 * break naming it. Runs last: the live cluster does not come back.
 */
export async function reconcileOnRestoredCopies({ backup, archiveDir, pair, port, liveUrl, dbName, targetTime, days, reconcile, ready, log }) {
  const live = pgClientFor(liveUrl);
  await live.connect();
  const liveIds = (await live.query('select id::text as id from transfer.transfers')).rows.map((r) => r.id);
  const paidAtRail = new Set((await live.query(`select transaction_id as id from sandbox.transfers where status = 'COMPLETED'`)).rows.map((r) => r.id));
  await live.end();
  archiveCurrentWal(pair.primary, archiveDir);
  const dumpDir = postgresOwnedDirectory('wallet-faults-provider-');
  const dump = join(dumpDir, 'sandbox.sql');
  const [host, p] = [`127.0.0.1`, String(pair.primary.port)];
  asPostgres(pgBin('pg_dump'), ['-h', host, '-p', p, '-U', 'postgres', '-d', dbName, '--data-only', '--schema=sandbox', '--disable-triggers', '-f', dump]);
  pair.primary.stop('immediate');
  pair.standby.stop('immediate');
  log('the live cluster crashed (primary and standby); the product goes onto restored copies');

  const checks = [];
  const onCopy = async (label, opts, verdict) => {
    const started = Date.now();
    const cluster = startRestored(backup, archiveDir, port, opts);
    const url = cluster.url.replace(/\/postgres$/, `/${dbName}`);
    const db = pgClientFor(url);
    try {
      await db.connect();
      // the provider's records as the provider has them
      const tables = (await db.query(`select format('%I.%I', schemaname, tablename) as t from pg_tables where schemaname = 'sandbox'`)).rows.map((r) => r.t);
      await db.query(`truncate ${tables.join(', ')}`);
      asPostgres(pgBin('psql'), ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', host, '-p', String(port), '-U', 'postgres', '-d', dbName, '-f', dump]);
      await ready();
      const upMs = Date.now() - started;
      const restoredIds = new Set((await db.query('select id::text as id from transfer.transfers')).rows.map((r) => r.id));
      const exc = await db.query('select resource_id from transfer.money_exceptions union all select resource_id from pse_deposit.money_exceptions');
      const r = await reconcile(days);
      const lostPaid = liveIds.filter((id) => !restoredIds.has(id) && paidAtRail.has(id));
      log(
        `product on the copy restored ${label}: serving after ${upMs} ms; ${r.lines} report lines, ${r.breaks.length} breaks; ${lostPaid.length} transfers the rail paid are not in the copy`,
      );
      checks.push(verdict({ ...r, upMs, lostPaid, excused: new Set(exc.rows.map((x) => x.resource_id)) }));
    } finally {
      await db.end().catch(() => {});
      cluster.destroy();
    }
  };
  try {
    await onCopy('to the end of the archive', {}, (r) => ({
      name: `the product on the copy restored to the end of the archive (serving ${r.upMs} ms after the restore began): the four rails' reports of ${days.join(', ')} RECONCILED (${r.lines} lines), each of the ${r.breaks.length} breaks about a resource with a money exception`,
      violations: [
        ...r.failed,
        ...r.breaks.filter((b) => !(b.ourId && r.excused.has(b.ourId))).map((b) => `${b.key}: ${b.kind} with no money exception about it`),
      ],
    }));
    await onCopy(`to ${targetTime.toISOString()}`, { targetTime }, (r) => {
      const named = new Set(r.breaks.filter((b) => b.kind === 'missing_in_our_books').map((b) => b.theirs?.ourId ?? b.ourId));
      return {
        name: `the product on the copy restored to ${targetTime.toISOString()}: reconciliation finds each of the ${r.lostPaid.length} transfers the rail paid and the copy lost (${r.breaks.length} breaks)`,
        violations: [
          ...r.failed,
          ...(r.lostPaid.length === 0 ? ['the copy lost no transfer the rail paid: the drill showed nothing'] : []),
          ...r.lostPaid.filter((id) => !named.has(id)).map((id) => `transfer ${id}: paid by the rail, lost by the copy, no missing_in_our_books break`),
        ],
      };
    });
  } finally {
    asPostgres('rm', ['-rf', dumpDir]);
  }
  return checks;
}
