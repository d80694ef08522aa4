import { createLogger, Database } from '@wallet/platform';
import { CheckInvariants } from '../app/check-invariants.js';
import { loadConfig } from '../config.js';
import { LEDGER_SCHEMA } from '../compose.js';
import { SqlLedgerStore } from '../persistence/ledger.store.js';
import { ledgerMigrations } from '../persistence/migrations/index.js';

/**
 * `npm run ledger:check`: prints the LEDGER.md invariant report for the database in DATABASE_URL
 * and exits 1 when any invariant is violated (2 when the check itself could not run).
 * Reads only; safe against a live database (one repeatable-read snapshot).
 */
const config = loadConfig(process.env);
const log = createLogger('ledger-check', config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
const db = await Database.open({ url: config.DATABASE_URL, schema: LEDGER_SCHEMA, migrations: ledgerMigrations, logger: log, poolMax: 1 });
try {
  const report = await new CheckInvariants({ store: new SqlLedgerStore(db) }).execute();
  const out = process.stdout;
  out.write(`ledger invariants: ${report.ok ? 'OK' : 'VIOLATED'}\n`);
  out.write(`  postings ${report.postings}, entries ${report.entries}, wallets ${report.wallets}\n`);
  for (const v of report.violations) out.write(`  - ${v}\n`);
  process.exitCode = report.ok ? 0 : 1;
} catch (err) {
  process.stderr.write(`ledger invariant check failed to run: ${(err as Error).message}\n`);
  process.exitCode = 2;
} finally {
  await db.close();
}
