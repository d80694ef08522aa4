import { createLogger, Database } from '@wallet/platform';
import { LEDGER_SCHEMA } from '../compose.js';
import { verifyJournal } from '../app/journal.js';
import { GENESIS } from '../domain/journal.js';
import { JournalStore } from '../persistence/journal.store.js';
import { ledgerMigrations } from '../persistence/migrations/index.js';

/**
 * `npm run ledger:verify` — verifies the tamper-evident journal (docs/journal.md) from genesis, or
 * from a head the auditor trusts (a daily head kept outside our systems: a statement's, an event's):
 *
 *   npm run ledger:verify                                         from genesis
 *   npm run ledger:verify -- --from-seq 120394 --from-hash <hex>   from a trusted head
 *   npm run ledger:verify -- --json                                the report as JSON
 *
 * Only reads. DATABASE_URL (or LEDGER_VERIFY_DATABASE_URL): a login that may read the ledger schema
 * (a member of wallet_ledger_reader is enough). Exit codes: 0 intact, 1 broken (the first broken
 * posting is named), 2 the verification could not run.
 */
const argv = process.argv.slice(2);
const value = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const fail = (msg: string): never => {
  process.stderr.write(`${msg}\n`);
  process.exit(2);
};
const fromSeq = value('from-seq');
const fromHash = value('from-hash');
if ((fromSeq === undefined) !== (fromHash === undefined)) fail('a trusted head takes both --from-seq and --from-hash');
if (fromSeq !== undefined && !/^\d{1,18}$/.test(fromSeq)) fail('--from-seq takes a position (0 or more)');
if (fromHash !== undefined && !/^[0-9a-f]{64}$/.test(fromHash)) fail('--from-hash takes a SHA-256 as 64 lowercase hex digits');
const url = process.env.LEDGER_VERIFY_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

const db = await Database.open({ url, schema: LEDGER_SCHEMA, migrations: ledgerMigrations, logger: createLogger('ledger-verify', 'warn'), poolMax: 2 }).catch(
  (err: unknown) => fail(`could not connect to the ledger's database: ${(err as Error).message}`),
);
try {
  const from = fromSeq !== undefined && fromHash !== undefined ? { seq: BigInt(fromSeq), hash: fromHash } : GENESIS;
  const r = await verifyJournal(new JournalStore(db), from);
  if (argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);
  } else {
    const lines = [
      `journal ${r.ok ? 'INTACT' : 'BROKEN'}: ${r.verified.toLocaleString('en')} sealed postings verified from ${r.from.seq === 0n ? 'genesis' : `trusted head #${r.from.seq}`} in ${r.durationMs} ms`,
      `head      #${r.head.seq} ${r.head.hash}`,
      `daily heads checked: ${r.headsChecked}; postings queued, not yet sealed: ${r.pending}`,
    ];
    if (r.firstBroken) {
      lines.push(
        `first broken: ${r.firstBroken.reason} at #${r.firstBroken.seq}${r.firstBroken.postingId ? ` (posting ${r.firstBroken.postingId})` : ''}; ${r.broken} break(s) in all`,
      );
    }
    if (r.outsideJournal.length > 0) lines.push(`postings outside the journal (neither sealed nor queued): ${r.outsideJournal.join(', ')}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  process.exitCode = r.ok ? 0 : 1;
} catch (err) {
  process.stderr.write(`the verification could not run: ${(err as Error).message}\n`);
  process.exitCode = 2;
} finally {
  await db.close();
}
