import { baseEnvSchema, ConfigError, env, parseConfig } from '@wallet/platform';
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
  /**
   * Path of the PKCS#12 (`.p12`/`.pfx`, DER) every receipt is signed with (PAdES), e.g. a Kubernetes
   * Secret mounted read-only; read once at start. Required in production. Elsewhere, unset: a
   * development key is made at start (self-signed, CN "Wallet receipts (development)"; a warning
   * says so).
   */
  RECEIPT_SIGNING_P12_FILE: z.string().default(''),
  /** The PKCS#12's passphrase; required in production (by the service; not by migrate/rebuild). */
  RECEIPT_SIGNING_P12_PASSPHRASE: env.secret('RECEIPT_SIGNING_P12_PASSPHRASE'),
});

export type ReceiptConfig = Omit<z.infer<typeof receiptEnvSchema>, 'RECEIPT_MIGRATE_ON_START'> & { RECEIPT_MIGRATE_ON_START: boolean };

/**
 * `signing: false` for the commands that sign nothing (migrate, rebuild): production then does not
 * ask them for the signing key, which their Job or shell need not hold.
 */
export function loadConfig(source: Record<string, string | undefined>, o: { signing?: boolean } = {}): ReceiptConfig {
  // Listed with the schema's problems, so one error names every bad variable.
  const production: string[] = [];
  if ((o.signing ?? true) && source.NODE_ENV === 'production') {
    if (!source.RECEIPT_SIGNING_P12_FILE) {
      production.push('RECEIPT_SIGNING_P12_FILE: required in production (the PKCS#12 receipts are signed with; the development key is for development only)');
    }
    if (!source.RECEIPT_SIGNING_P12_PASSPHRASE)
      production.push('RECEIPT_SIGNING_P12_PASSPHRASE: required in production (the passphrase of RECEIPT_SIGNING_P12_FILE)');
  }
  let raw: z.infer<typeof receiptEnvSchema>;
  try {
    raw = parseConfig(receiptEnvSchema, source);
  } catch (err) {
    if (err instanceof ConfigError && production.length > 0) throw new ConfigError([...err.problems, ...production]);
    throw err;
  }
  if (production.length > 0) throw new ConfigError(production);
  const flag = raw.RECEIPT_MIGRATE_ON_START;
  return {
    ...raw,
    RECEIPT_MIGRATE_ON_START: flag === undefined ? raw.NODE_ENV !== 'production' : ['true', '1', 'yes'].includes(flag),
  };
}
