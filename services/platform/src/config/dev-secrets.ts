/**
 * Every secret the product reads from its environment, with its development default, in ONE place.
 *
 * Outside production an unset secret takes its development default (a laptop, CI, the e2e stack
 * run with no secrets at all). Those defaults are public (they are in this repository), so in
 * production the shared loader (`parseConfig`) refuses, in every process, a secret that is unset
 * or whose value contains any development default, and any other variable of the process whose
 * value contains one (a development secret pasted into a URL). Errors name the variable, never
 * the value.
 *
 * A new secret is declared here and read with `env.secret('NAME')`; a development default written
 * anywhere else is caught by the architecture test (test/rules/architecture-rules.test.ts).
 */

/** The development defaults. Several variables share one (the sandbox signs with the rails' secret). */
const DEV = {
  providerCallback: 'dev-rail-callback-secret',
  adminToken: 'dev-admin-token',
  apiKeyPepper: 'dev-api-key-pepper-not-for-production',
  gatewayEncryptionKey: 'dev-gateway-encryption-key-not-for-production',
  webhookSecretKey: 'dev-webhook-secret-key-not-for-production',
  transferDataKey: 'dev-transfer-data-key-not-for-production',
  receiptSigningPassphrase: 'dev-receipt-signing-passphrase-not-for-production',
} as const;

export interface SecretSpec {
  /** The value used when the variable is unset outside production; refused in production. */
  readonly dev: string;
  /** Minimum length of a value that is set (any environment). */
  readonly min: number;
  /** Who reads it, for the operator. */
  readonly what: string;
  /** Production may leave it unset (the feature it unlocks is then off), never set it to a development value. */
  readonly optionalInProduction?: boolean;
}

export const SECRET_VARIABLES = {
  RAIL_CALLBACK_SECRET: { dev: DEV.providerCallback, min: 16, what: 'HMAC key of Bre-B/ACH rail callbacks (transfer)' },
  PSE_CALLBACK_SECRET: { dev: DEV.providerCallback, min: 16, what: 'HMAC key of PSE callbacks (pse-deposit)' },
  BREB_CALLBACK_SECRET: { dev: DEV.providerCallback, min: 16, what: 'HMAC key of Bre-B inbound-payment notifications (collect-key)' },
  SANDBOX_CALLBACK_SECRET: { dev: DEV.providerCallback, min: 16, what: 'HMAC key the sandbox signs its callbacks with' },
  ADMIN_TOKEN: { dev: DEV.adminToken, min: 12, what: 'bootstrap token of the /admin API (gateway)', optionalInProduction: true },
  API_KEY_PEPPER: { dev: DEV.apiKeyPepper, min: 16, what: 'pepper of the stored API key hashes (gateway)' },
  GATEWAY_ENCRYPTION_KEY: { dev: DEV.gatewayEncryptionKey, min: 32, what: 'seals TOTP secrets and stored Idempotency-Key answers (gateway)' },
  WEBHOOK_SECRET_KEY: { dev: DEV.webhookSecretKey, min: 32, what: "seals the endpoints' signing secrets (webhook)" },
  TRANSFER_DATA_KEY: { dev: DEV.transferDataKey, min: 32, what: 'seals ACH account numbers and keys their hashes (transfer)' },
  // Outside production, unset: the passphrase of the development signing key the receipt service makes at start.
  // Optional here because the receipt's migrate and rebuild commands sign nothing; the service itself
  // requires it in production (services/receipt/src/config.ts).
  RECEIPT_SIGNING_P12_PASSPHRASE: {
    dev: DEV.receiptSigningPassphrase,
    min: 8,
    what: 'passphrase of the PKCS#12 receipts are signed with (receipt)',
    optionalInProduction: true,
  },
} as const satisfies Record<string, SecretSpec>;

export type SecretVariable = keyof typeof SECRET_VARIABLES;

export function isSecretVariable(name: string): name is SecretVariable {
  return Object.hasOwn(SECRET_VARIABLES, name);
}

/** Every development secret value, once each. */
export const DEVELOPMENT_SECRET_VALUES: readonly string[] = [...new Set(Object.values(DEV))];

/** True when `value` is, or contains, a development secret (case-insensitive). */
export function containsDevelopmentSecret(value: string): boolean {
  const v = value.toLowerCase();
  return DEVELOPMENT_SECRET_VALUES.some((d) => v.includes(d.toLowerCase()));
}

/**
 * The production rules for secrets, on the raw environment of a process. `variables`: the names the
 * process's schema declares. Returns the problems (variable names and rules, never values).
 */
export function developmentSecretProblems(variables: Iterable<string>, source: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  for (const name of variables) {
    const value = source[name];
    if (isSecretVariable(name) && (value === undefined || value === '')) {
      if ((SECRET_VARIABLES[name] as SecretSpec).optionalInProduction) continue;
      problems.push(`${name}: required in production (${SECRET_VARIABLES[name].what}; at least ${SECRET_VARIABLES[name].min} characters)`);
    } else if (typeof value === 'string' && containsDevelopmentSecret(value)) {
      problems.push(`${name}: contains a development secret, which is public; not allowed in production`);
    }
  }
  return problems;
}
