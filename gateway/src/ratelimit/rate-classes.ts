/**
 * The rate-limit classes of the reference (§8), defined once. A route names its class when it is
 * registered; the limit of a class is configurable by its environment variable and multiplied by
 * the authenticated company's `rateLimitMultiplier`.
 */
export const RATE_CLASSES = {
  READS: { perMinute: 100, envVar: 'RATE_LIMIT_READS', description: 'Reads' },
  QUOTES: { perMinute: 30, envVar: 'RATE_LIMIT_QUOTES', description: 'Quotes' },
  RESOLVE_KEY: { perMinute: 30, envVar: 'RATE_LIMIT_RESOLVE_KEY', description: 'Resolve key' },
  FINANCIAL: { perMinute: 10, envVar: 'RATE_LIMIT_FINANCIAL', description: 'Financial operations' },
  COLLECT_KEY_WRITES: { perMinute: 60, envVar: 'RATE_LIMIT_COLLECT_KEY_WRITES', description: 'Collect-key writes' },
  AUTHENTICATION: { perMinute: 5, envVar: 'RATE_LIMIT_AUTHENTICATION', description: 'Authentication (POST /auth/*)' },
  /** Every /admin request: counted per client IP before authentication (failed attempts count) and per operator after it. */
  ADMIN: { perMinute: 300, envVar: 'RATE_LIMIT_ADMIN', description: 'Admin (/admin/*, per IP and per operator)' },
  /** Operator login and enrollment: every attempt counts, per client IP (no per-e-mail count: it let anyone keep an operator out; lockouts in auth/dashboard-lockouts.ts). */
  ADMIN_LOGIN: { perMinute: 5, envVar: 'RATE_LIMIT_ADMIN_LOGIN', description: 'Admin login (POST /admin/auth/*)' },
  /** The public receipt verification page (GET /receipts/verify/*): per client IP, no credential. */
  RECEIPT_VERIFICATION: { perMinute: 30, envVar: 'RATE_LIMIT_RECEIPT_VERIFICATION', description: 'Receipt verification (public, per client IP)' },
} as const;

export type RateClass = keyof typeof RATE_CLASSES;
