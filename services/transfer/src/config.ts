import { baseEnvSchema, env, parseConfig } from '@wallet/platform';
import { z } from 'zod';

const bigintCents = (def: bigint) =>
  z
    .string()
    .regex(/^\d{1,18}$/, 'must be a whole number of centavos')
    .default(def.toString())
    .transform((v) => BigInt(v));

/** The transfer service's environment, parsed once; every bad variable is named in one error (habit 9). */
export const transferEnvSchema = baseEnvSchema.extend({
  TRANSFER_GRPC_HOST: env.str('0.0.0.0'),
  TRANSFER_GRPC_PORT: env.port(50052),
  TRANSFER_OPS_PORT: env.port(9102),
  /** Apply pending migrations at start; defaults to true outside production (there a Job runs `migrate`). */
  TRANSFER_MIGRATE_ON_START: z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
  TRANSFER_DB_POOL_MAX: env.int(10, 1),
  LEDGER_GRPC_ADDR: env.str('127.0.0.1:50051'),
  /** The deadline of a ledger call (a Reserve, a Commit…); past it the outcome is unknown and the sweeper settles it. */
  LEDGER_DEADLINE_MS: env.int(5000, 100),
  BREB_DIRECTORY_URL: env.url('http://127.0.0.1:8090'),
  BREB_RAIL_URL: env.url('http://127.0.0.1:8090'),
  ACH_RAIL_URL: env.url('http://127.0.0.1:8090'),
  /** Where providers send outcome callbacks (the gateway's public webhooks); `/breb` or `/ach` is appended. */
  RAIL_CALLBACK_BASE_URL: env.url('http://127.0.0.1:8080/webhooks/rails'),
  /** HMAC key of provider callbacks; required in production. */
  RAIL_CALLBACK_SECRET: env.secret('RAIL_CALLBACK_SECRET'),
  /**
   * Seals full ACH account numbers at rest (AES-256-GCM) and keys the fingerprints of request hashes
   * (HMAC-SHA256, HKDF-derived); required in production, by the service and by its `migrate` job.
   */
  TRANSFER_DATA_KEY: env.secret('TRANSFER_DATA_KEY'),
  /** Time-out of one HTTP call to a provider. */
  PROVIDER_HTTP_TIMEOUT_MS: env.int(5_000, 100),
  IDEMPOTENCY_WINDOW_SECONDS: env.int(60, 1),
  /** A Bre-B transfer the rail could not take for this long fails and its funds are released. */
  RAIL_DISPATCH_TIMEOUT_SECONDS: env.int(300, 1),
  /** A dispatched transfer with no callback for this long is looked up at the rail. */
  RAIL_CONFIRM_TIMEOUT_SECONDS: env.int(60, 1),
  /** First retry delay of a failed dispatch; doubles up to RAIL_DISPATCH_RETRY_MAX_MS. */
  RAIL_DISPATCH_RETRY_BASE_MS: env.int(1_000, 10),
  RAIL_DISPATCH_RETRY_MAX_MS: env.int(60_000, 10),
  SWEEPER_INTERVAL_MS: env.int(1_000, 10),
  /**
   * How long a saga step may be in flight in its owner before the sweeper takes over: a RECEIVED
   * transfer older than this was abandoned; a RESERVED one not dispatched by then is dispatched.
   */
  SWEEPER_GRACE_SECONDS: env.int(15, 1),
  SWEEPER_BATCH: env.int(50, 1),
  /** Bulk payouts (docs/batches.md): how many items of one batch are dispatched at once (per process). */
  BATCH_DISPATCH_CONCURRENCY: env.int(16, 1),
  /**
   * Bulk payouts: a page of a batch goes to each rail as one bulk submission (docs/sandbox.md "Bulk
   * submission"); false dispatches each item on its own, BATCH_DISPATCH_CONCURRENCY at once. A rail
   * without bulk submission is found at the first page and served one by one either way.
   */
  BATCH_RAIL_BULK: env.bool(true),
  /** Bulk payouts: pages of 200 items of one batch dispatched at once (per process), each leased on its own. */
  BATCH_DISPATCH_PAGES: env.int(2, 1),
  /** Bulk payouts: how many directory lookups / account validations a batch's validation runs at once. */
  BATCH_LOOKUP_CONCURRENCY: env.int(8, 1),
  /**
   * Bulk payouts: how long a batch being funded is left to its request before the batch sweeper
   * funds it (after a crash). Longer than ReserveBatch's 60 s deadline so two never overlap in
   * practice; a shorter one is still safe (the ledger answers a twin with the same holds).
   */
  BATCH_FUNDING_LEASE_SECONDS: env.int(90, 1),
  /** A multi-signature send without quorum for this long expires and its funds are released (CONTRACT §1). */
  APPROVAL_TTL_SECONDS: env.int(86_400, 1),
  /** Counterparties: a submitted ACH prenote with no callback for this long is asked about at the rail (and again every as long). */
  COUNTERPARTY_PRENOTE_CHECK_SECONDS: env.int(60, 1),
  /** Approval policies (docs/policies.md): a change that reached its quorum takes effect this long after. */
  POLICY_CHANGE_DELAY_SECONDS: env.int(3_600, 0),
  /** How long a replica keeps a company's policy versions in memory; always less than half the change delay (0 with none), so a send is decided by the version in force at its instant. */
  POLICY_CACHE_SECONDS: env.int(300, 0),
  COUNTERPARTY_DAILY_LIMIT_CENTS: bigintCents(5_000_000_000n),
  COUNTERPARTY_MONTHLY_LIMIT_CENTS: bigintCents(50_000_000_000n),
});

export type TransferConfig = Omit<z.infer<typeof transferEnvSchema>, 'TRANSFER_MIGRATE_ON_START'> & {
  TRANSFER_MIGRATE_ON_START: boolean;
};

export function loadConfig(source: Record<string, string | undefined>): TransferConfig {
  const raw = parseConfig(transferEnvSchema, source);
  const production = raw.NODE_ENV === 'production';
  const flag = raw.TRANSFER_MIGRATE_ON_START;
  return {
    ...raw,
    TRANSFER_MIGRATE_ON_START: flag === undefined ? !production : ['true', '1', 'yes'].includes(flag),
  };
}
