import { baseEnvSchema, env, parseConfig } from '@wallet/platform';
import { z } from 'zod';

/** The ledger's environment, parsed once; every bad variable is named in one error (habit 9). */
export const ledgerEnvSchema = baseEnvSchema.extend({
  LEDGER_GRPC_HOST: env.str('0.0.0.0'),
  LEDGER_GRPC_PORT: env.port(50051),
  LEDGER_OPS_PORT: env.port(9101),
  /** Apply pending migrations at start; defaults to true outside production (there a Job runs `migrate`). */
  LEDGER_MIGRATE_ON_START: z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
  /** Postgres connections; the hot path is one statement per call, so a small pool saturates the database. */
  LEDGER_DB_POOL_MAX: env.int(10, 1),
  /** How often wallets that moved are checked against their balance alerts (docs/balance-alerts.md). */
  BALANCE_ALERT_INTERVAL_MS: env.int(1000, 50),
  /** How often committed postings are sealed into the tamper-evident journal (docs/journal.md). */
  JOURNAL_SEAL_INTERVAL_MS: env.int(1000, 50),
  /** How often the balance checkpointer looks for a newly closed hour (docs/balance-checkpoints.md). */
  BALANCE_CHECKPOINT_INTERVAL_MS: env.int(60_000, 50),
  /** How long after an hour's end its checkpoints may be written (beside the open-transaction fence). */
  BALANCE_CHECKPOINT_MARGIN_SECONDS: env.int(300, 0),
  /** How often the ledger checks what its journal sealed since the verified cut (docs/ledger-check.md); 0: never. */
  LEDGER_SELF_CHECK_INTERVAL_MS: env.int(3_600_000, 0),
});

export type LedgerConfig = Omit<z.infer<typeof ledgerEnvSchema>, 'LEDGER_MIGRATE_ON_START'> & { LEDGER_MIGRATE_ON_START: boolean };

export function loadConfig(source: Record<string, string | undefined>): LedgerConfig {
  const raw = parseConfig(ledgerEnvSchema, source);
  const flag = raw.LEDGER_MIGRATE_ON_START;
  return {
    ...raw,
    LEDGER_MIGRATE_ON_START: flag === undefined ? raw.NODE_ENV !== 'production' : ['true', '1', 'yes'].includes(flag),
  };
}
