import { pino, type Logger, type LoggerOptions } from 'pino';
import { trace } from '@opentelemetry/api';

export type { Logger };

/**
 * Paths that must never reach a log line: secrets, keys, passwords, full account numbers.
 * Values are replaced, not removed, so a reader sees that something was there.
 */
export const REDACT_PATHS = [
  'authorization', '*.authorization', 'req.headers.authorization', 'headers.authorization',
  'password', '*.password', 'passwordHash', '*.passwordHash',
  'key', '*.key', 'apiKey', '*.apiKey', 'secret', '*.secret', 'token', '*.token', 'totpSecret', '*.totpSecret',
  'accountNumber', '*.accountNumber', '*.*.accountNumber', 'bankAccountNumber', '*.bankAccountNumber',
  'adminToken', '*.adminToken', 'DATABASE_URL', '*.DATABASE_URL',
];

export function createLogger(name: string, level: string = 'info', opts: LoggerOptions = {}): Logger {
  return pino({
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
    // Adds the active trace id so logs and traces can be joined.
    mixin() {
      const span = trace.getActiveSpan();
      const ctx = span?.spanContext();
      return ctx ? { traceId: ctx.traceId, spanId: ctx.spanId } : {};
    },
    ...opts,
  });
}

/** Masks an account number to its last 4 digits: `****1234` (listings, receipts, logs). */
export function maskAccount(value: string | null | undefined): string | null {
  if (value == null || value === '') return null;
  return `****${value.slice(-4)}`;
}
