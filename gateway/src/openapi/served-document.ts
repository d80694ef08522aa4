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
 * The gateway app composed with inert dependencies: nothing is called, only the declarations are read
 * (routes, schemas, the document). No database, cache or service is needed.
 */
export function composeInertApp(): ReturnType<typeof createApp> {
  return createApp({
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
}

/** The document the gateway serves, from the inert app: for the release snapshot and the breaking-change check. */
export async function servedDocument(): Promise<Record<string, unknown>> {
  const gw = composeInertApp();
  try {
    return JSON.parse(JSON.stringify(gw.openApiDocument())) as Record<string, unknown>;
  } finally {
    await gw.close();
  }
}
