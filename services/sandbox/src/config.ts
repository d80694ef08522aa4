import { baseEnvSchema, env, parseConfig } from '@wallet/platform';
import { z } from 'zod';

/** The sandbox's environment, parsed once; every bad variable is named in one error (habit 9). */
export const sandboxEnvSchema = baseEnvSchema.extend({
  SANDBOX_HOST: env.str('0.0.0.0'),
  SANDBOX_PORT: env.port(8090),
  /** Delay before a Bre-B / ACH transfer's outcome callback. */
  SANDBOX_BREB_CONFIRM_MS: env.int(3000),
  SANDBOX_ACH_CONFIRM_MS: env.int(5000),
  /** Delay before an ACH prenote's outcome under the default rules (an account's behaviour sets its own). */
  SANDBOX_ACH_PRENOTE_MS: env.int(2000),
  /** HMAC key of the callbacks (the product's RAIL_CALLBACK_SECRET); required in production. */
  SANDBOX_CALLBACK_SECRET: env.secret('SANDBOX_CALLBACK_SECRET'),
  /** First retry delay and cap of the exponential backoff (1 s … 60 s). */
  SANDBOX_CALLBACK_RETRY_BASE_MS: env.int(1000, 1),
  SANDBOX_CALLBACK_RETRY_MAX_MS: env.int(60_000, 1),
  SANDBOX_CALLBACK_TIMEOUT_MS: env.int(5000, 100),
  /** How often the scheduler looks for due outcomes and callbacks. */
  SANDBOX_POLL_MS: env.int(150, 10),
  /** Rail transfer outcomes due together for one callback URL go as one signed request (docs/sandbox.md "Bulk outcomes"). */
  SANDBOX_BULK_CALLBACKS: env.bool(true),
  SANDBOX_MIGRATE_ON_START: z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
  SANDBOX_DB_POOL_MAX: env.int(5, 1),
  /** The SMTP sink: loopback, port 2525 (0 = any free port). */
  SANDBOX_SMTP_HOST: env.str('127.0.0.1'),
  SANDBOX_SMTP_PORT: env.port(2525),
  /** Base of the PSE `paygatewayUrl`s (what the payer's browser reaches); default the sandbox's own URL. */
  SANDBOX_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
});

export type SandboxConfig = Omit<z.infer<typeof sandboxEnvSchema>, 'SANDBOX_MIGRATE_ON_START'> & {
  SANDBOX_MIGRATE_ON_START: boolean;
};

export function loadConfig(source: Record<string, string | undefined>): SandboxConfig {
  const raw = parseConfig(sandboxEnvSchema, source);
  const production = raw.NODE_ENV === 'production';
  const flag = raw.SANDBOX_MIGRATE_ON_START;
  return {
    ...raw,
    SANDBOX_MIGRATE_ON_START: flag === undefined ? !production : ['true', '1', 'yes'].includes(flag),
  };
}
