import { ServiceScope, createLogger } from '@wallet/platform';
import { Projection } from '../app/rebuild.js';
import { openStores } from '../compose.js';
import { loadConfig } from '../config.js';
import { SqlReadModelStore, sqlReadModelTables } from '../persistence/read-model.store.js';

/**
 * `npm run rebuild`: drops the receipt read model (tables + this projection's inbox rows), deletes
 * the durable consumers `receipt-transfers` / `receipt-deposits`, and replays TRANSFERS and DEPOSITS
 * from the start into fresh tables; exits once both consumers have caught up. Run it with the
 * receipt service stopped (scaled to 0): the service resumes from where the rebuild left off.
 */
const config = loadConfig(process.env, { signing: false }); // the rebuild renders no receipt
const log = createLogger('receipt-rebuild', config.LOG_LEVEL);
const scope = new ServiceScope(log);
const { db, bus } = await openStores(config, scope, 'receipt-rebuild');
const projection = new Projection(db, bus, { tables: sqlReadModelTables, reset: new SqlReadModelStore(db) }, log);
try {
  const started = Date.now();
  await projection.rebuild(Number(process.env.RECEIPT_REBUILD_TIMEOUT_MS ?? 600_000));
  const [t, d] = await Promise.all([
    db.query<{ n: string }>('select count(*)::text as n from receipt.transactions'),
    db.query<{ n: string }>('select count(*)::text as n from receipt.deposits'),
  ]);
  log.info({ transactions: Number(t[0]?.n ?? 0), deposits: Number(d[0]?.n ?? 0), ms: Date.now() - started }, 'receipt read model rebuilt');
} catch (err) {
  log.fatal({ err }, 'receipt rebuild failed');
  process.exitCode = 1;
} finally {
  await projection.stop();
  await scope.stop();
}
