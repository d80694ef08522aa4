import { baseEnvSchema, ConfigError, env, parseConfig } from '@wallet/platform';
import { z } from 'zod';

/** The webhook service's environment, parsed once; every bad variable is named in one error. */
export const webhookEnvSchema = baseEnvSchema.extend({
  WEBHOOK_GRPC_HOST: env.str('0.0.0.0'),
  WEBHOOK_GRPC_PORT: env.port(50056),
  WEBHOOK_OPS_PORT: env.port(9106),
  /** Apply pending migrations at start; defaults to true outside production. */
  WEBHOOK_MIGRATE_ON_START: z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
  WEBHOOK_DB_POOL_MAX: env.int(10, 1),
  /** Encrypts the endpoints' signing secrets at rest (AES-256-GCM, key = SHA-256 of this value); required in production. */
  WEBHOOK_SECRET_KEY: env.secret('WEBHOOK_SECRET_KEY'),
  /**
   * `false`: production rules for endpoint URLs (https only; no loopback, private, link-local, CGNAT,
   * multicast or metadata targets, checked at creation and again at each delivery). Defaults to
   * false in production and true elsewhere (tests deliver to loopback http receivers).
   */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
  /** One delivery attempt's time-out (connect + response). */
  WEBHOOK_TIMEOUT_MS: env.int(5_000, 50),
  /** First retry delay; doubles per attempt (with jitter) up to WEBHOOK_RETRY_MAX_DELAY_MS. */
  WEBHOOK_RETRY_BASE_MS: env.int(10_000, 1),
  WEBHOOK_RETRY_MAX_DELAY_MS: env.int(3_600_000, 1),
  /** A delivery not acknowledged with a 2xx this long after it was created is marked FAILED. */
  WEBHOOK_RETRY_HORIZON_SECONDS: env.int(86_400, 1),
  /** How often the delivery worker looks for due deliveries (new ones also wake it at once). */
  WEBHOOK_POLL_INTERVAL_MS: env.int(1_000, 10),
  WEBHOOK_WORKER_BATCH: env.int(20, 1),
  WEBHOOK_WORKER_CONCURRENCY: env.int(8, 1),
});

export type WebhookConfig = Omit<z.infer<typeof webhookEnvSchema>, 'WEBHOOK_MIGRATE_ON_START' | 'WEBHOOK_ALLOW_PRIVATE_TARGETS'> & {
  WEBHOOK_MIGRATE_ON_START: boolean;
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean;
};

const truthy = (v: string) => ['true', '1', 'yes'].includes(v);

export function loadConfig(source: Record<string, string | undefined>): WebhookConfig {
  const raw = parseConfig(webhookEnvSchema, source);
  const production = raw.NODE_ENV === 'production';
  const allowPrivate = raw.WEBHOOK_ALLOW_PRIVATE_TARGETS === undefined ? !production : truthy(raw.WEBHOOK_ALLOW_PRIVATE_TARGETS);
  if (production && allowPrivate) {
    throw new ConfigError(['WEBHOOK_ALLOW_PRIVATE_TARGETS: must not be true in production (SSRF protection)']);
  }
  return {
    ...raw,
    WEBHOOK_MIGRATE_ON_START: raw.WEBHOOK_MIGRATE_ON_START === undefined ? !production : truthy(raw.WEBHOOK_MIGRATE_ON_START),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: allowPrivate,
  };
}
