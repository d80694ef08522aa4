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
import { Snapshot, checkInvariants, sandboxRail } from '@wallet/invariants';
import { pgClientFor } from '@wallet/platform';
import { archiveCurrentWal, startRestored } from '@wallet/platform/testing';

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
