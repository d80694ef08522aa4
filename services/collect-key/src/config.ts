import { baseEnvSchema, env, parseConfig } from '@wallet/platform';
import { z } from 'zod';

/** The collect-key service's environment, parsed once; every bad variable is named in one error. */
export const collectKeyEnvSchema = baseEnvSchema.extend({
  COLLECT_KEY_GRPC_HOST: env.str('0.0.0.0'),
  COLLECT_KEY_GRPC_PORT: env.port(50054),
  COLLECT_KEY_OPS_PORT: env.port(9104),
  /** Apply pending migrations at start; defaults to true outside production. */
  COLLECT_KEY_MIGRATE_ON_START: z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
  COLLECT_KEY_DB_POOL_MAX: env.int(10, 1),
  LEDGER_GRPC_ADDR: env.str('127.0.0.1:50051'),
  /** The Bre-B directory where keys are registered (the sandbox by default). */
  BREB_DIRECTORY_URL: env.url('http://127.0.0.1:8090'),
  /** Where the network notifies inbound payments (the gateway's public webhook), sent with each registration. */
  BREB_INCOMING_CALLBACK_URL: env.url('http://127.0.0.1:8080/webhooks/breb/incoming'),
  /** HMAC key of the network's notifications; required in production. */
  BREB_CALLBACK_SECRET: env.secret('BREB_CALLBACK_SECRET'),
  PROVIDER_HTTP_TIMEOUT_MS: env.int(5_000, 100),
  /** EMVCo tag 59 / 60 fallbacks (tag 59 is the key's name when it has one). */
  QR_MERCHANT_NAME: env.str('PAGOS WALLET'),
  QR_MERCHANT_CITY: env.str('BOGOTA'),
  SWEEPER_INTERVAL_MS: env.int(1_000, 10),
  SWEEPER_BATCH: env.int(50, 1),
  /** A REGISTERING key, or a payment whose ledger step is unfinished, this long after its last attempt is finished by the sweeper. */
  SWEEPER_GRACE_SECONDS: env.int(15, 1),
});

export type CollectKeyConfig = Omit<z.infer<typeof collectKeyEnvSchema>, 'COLLECT_KEY_MIGRATE_ON_START'> & {
  COLLECT_KEY_MIGRATE_ON_START: boolean;
};

export function loadConfig(source: Record<string, string | undefined>): CollectKeyConfig {
  const raw = parseConfig(collectKeyEnvSchema, source);
  const production = raw.NODE_ENV === 'production';
  const flag = raw.COLLECT_KEY_MIGRATE_ON_START;
  return {
    ...raw,
    COLLECT_KEY_MIGRATE_ON_START: flag === undefined ? !production : ['true', '1', 'yes'].includes(flag),
  };
}
