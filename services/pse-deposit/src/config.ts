import { baseEnvSchema, env, parseConfig } from '@wallet/platform';
import { z } from 'zod';

/** The pse-deposit service's environment, parsed once; every bad variable is named in one error. */
export const depositEnvSchema = baseEnvSchema.extend({
  DEPOSIT_GRPC_HOST: env.str('0.0.0.0'),
  DEPOSIT_GRPC_PORT: env.port(50053),
  DEPOSIT_OPS_PORT: env.port(9103),
  /** Apply pending migrations at start; defaults to true outside production. */
  DEPOSIT_MIGRATE_ON_START: z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
  DEPOSIT_DB_POOL_MAX: env.int(10, 1),
  LEDGER_GRPC_ADDR: env.str('127.0.0.1:50051'),
  /** collect-key: a cobro's dynamic Bre-B key and QR (IssueCobroKey / CloseCobroKey). */
  COLLECT_KEY_GRPC_ADDR: env.str('127.0.0.1:50054'),
  /** How long past a cobro's expiresAt the sweeper waits before expiring it (payments received in time and still on their way count). */
  COBRO_EXPIRY_GRACE_SECONDS: env.int(60, 0),
  /** The shortest life a cobro may be given (its expiresAt at least this far ahead). */
  COBRO_MIN_TTL_SECONDS: env.int(60, 1),
  /** The PSE provider (the sandbox by default). Empty: PSE_PROVIDER_NOT_CONFIGURED on creation. */
  PSE_PROVIDER_URL: z.union([z.literal(''), z.string().url()]).default('http://127.0.0.1:8090'),
  /** false: creation answers PSE_INFLOW_DISABLED (an operator's kill switch). */
  PSE_INFLOW_ENABLED: env.bool(true),
  PSE_LINK_TTL_SECONDS: env.int(86_400, 1),
  /** A PAID whose signed paidAt is within expires_at + this is credited (even after the link expired at expires_at); later: a money exception. */
  PSE_PAID_GRACE_SECONDS: env.int(60, 0),
  /** Where the provider sends outcome callbacks (the gateway's public webhook). */
  PSE_CALLBACK_URL: env.url('http://127.0.0.1:8080/webhooks/pse'),
  /** HMAC key of provider callbacks (same scheme as the rails); required in production. */
  PSE_CALLBACK_SECRET: env.secret('PSE_CALLBACK_SECRET'),
  PROVIDER_HTTP_TIMEOUT_MS: env.int(5_000, 100),
  SMTP_URL: env.str('smtp://127.0.0.1:2525'),
  MAIL_FROM: env.str('Pagos <no-reply@pagos.example.co>'),
  SMTP_TIMEOUT_MS: env.int(10_000, 100),
  SWEEPER_INTERVAL_MS: env.int(1_000, 10),
  SWEEPER_BATCH: env.int(50, 1),
  /** A PAID callback whose ledger credit is still unfinished after this long is retried by the sweeper. */
  SWEEPER_GRACE_SECONDS: env.int(15, 1),
});

export type DepositConfig = Omit<z.infer<typeof depositEnvSchema>, 'DEPOSIT_MIGRATE_ON_START'> & {
  DEPOSIT_MIGRATE_ON_START: boolean;
};

export function loadConfig(source: Record<string, string | undefined>): DepositConfig {
  const raw = parseConfig(depositEnvSchema, source);
  const production = raw.NODE_ENV === 'production';
  const flag = raw.DEPOSIT_MIGRATE_ON_START;
  return {
    ...raw,
    DEPOSIT_MIGRATE_ON_START: flag === undefined ? !production : ['true', '1', 'yes'].includes(flag),
  };
}
