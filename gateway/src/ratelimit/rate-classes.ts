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
} as const;

export type RateClass = keyof typeof RATE_CLASSES;
