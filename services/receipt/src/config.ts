import { baseEnvSchema, env, parseConfig } from '@wallet/platform';
import { z } from 'zod';

/** The receipt service's environment, parsed once; every bad variable is named in one error. */
export const receiptEnvSchema = baseEnvSchema.extend({
  RECEIPT_GRPC_HOST: env.str('0.0.0.0'),
  RECEIPT_GRPC_PORT: env.port(50055),
  RECEIPT_OPS_PORT: env.port(9105),
  /** Apply pending migrations at start; defaults to true outside production. */
  RECEIPT_MIGRATE_ON_START: z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
  RECEIPT_DB_POOL_MAX: env.int(10, 1),
  /** The public verification page printed (as a QR) on every receipt: `<base>/<receiptNumber>?h=<sha256 first 16>`. */
  RECEIPT_VERIFY_BASE_URL: z.union([z.literal(''), z.string().url()]).default(''),
});

export type ReceiptConfig = Omit<z.infer<typeof receiptEnvSchema>, 'RECEIPT_MIGRATE_ON_START'> & { RECEIPT_MIGRATE_ON_START: boolean };

export function loadConfig(source: Record<string, string | undefined>): ReceiptConfig {
  const raw = parseConfig(receiptEnvSchema, source);
  const flag = raw.RECEIPT_MIGRATE_ON_START;
  return {
    ...raw,
    RECEIPT_MIGRATE_ON_START: flag === undefined ? raw.NODE_ENV !== 'production' : ['true', '1', 'yes'].includes(flag),
  };
}
