import type { Redis } from 'ioredis';
import { createLogger, type Database } from '@wallet/platform';
import { createApp } from '../compose.js';
import { loadConfig } from '../config.js';
import type { CollectKeyClient } from '../clients/collect-key-client.js';
import type { DepositClient } from '../clients/deposit-client.js';
import type { LedgerClient } from '../clients/ledger-client.js';
import type { ReceiptClient } from '../clients/receipt-client.js';
import type { TransferClient } from '../clients/transfer-client.js';

/**
 * The document the gateway serves, built from the route table of an app composed with inert
 * dependencies (nothing is called: only the declarations are read). For the release snapshot and the
 * breaking-change check, which need no database, cache or service.
 */
export async function servedDocument(): Promise<Record<string, unknown>> {
  const gw = createApp({
    config: loadConfig({ NODE_ENV: 'test' }),
    log: createLogger('openapi', 'silent'),
    db: {} as Database,
    ledger: {} as LedgerClient,
    transfer: {} as TransferClient,
    deposit: {} as DepositClient,
    collectKey: {} as CollectKeyClient,
    receipt: {} as ReceiptClient,
    redis: {} as Redis,
  });
  try {
    return JSON.parse(JSON.stringify(gw.openApiDocument())) as Record<string, unknown>;
  } finally {
    await gw.close();
  }
}
