import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { trace } from '@opentelemetry/api';
import { currentLogContext } from './log-context.js';

export type { Logger };

/**
 * Paths that must never reach a log line: secrets, keys, passwords, full account numbers.
 * Values are replaced, not removed, so a reader sees that something was there.
 */
export const REDACT_PATHS = [
  'authorization', '*.authorization', 'req.headers.authorization', 'headers.authorization',
  'password', '*.password', 'passwordHash', '*.passwordHash',
  'key', '*.key', 'apiKey', '*.apiKey', 'secret', '*.secret', 'token', '*.token', 'totpSecret', '*.totpSecret',
  'accountNumber', '*.accountNumber', '*.*.accountNumber', '*.*.*.accountNumber', 'bankAccountNumber', '*.bankAccountNumber',
  'adminToken', '*.adminToken', 'DATABASE_URL', '*.DATABASE_URL',
  '*.*.password', '*.*.secret', '*.*.totpSecret', '*.*.apiKey', '*.*.authorization',
  'cookie', '*.cookie', 'req.headers.cookie', 'headers.cookie', 'pepper', '*.pepper', 'apiKeyPepper', '*.apiKeyPepper',
  'accessToken', '*.accessToken', 'refreshToken', '*.refreshToken', 'clientSecret', '*.clientSecret',
  'callbackSecret', '*.callbackSecret', 'privateKey', '*.privateKey', 'otp', '*.otp', 'totp', '*.totp',
];

/** The fields the logger adds to every line: requestId, companyId, eventId (log context) and traceId/spanId (active span). */
export function logMixin(): Record<string, string> {
  const out: Record<string, string> = {};
  const lc = currentLogContext();
  if (lc) {
    const { requestId, companyId, eventId } = lc;
    if (requestId) out.requestId = requestId;
    if (companyId) out.companyId = companyId;
    if (eventId) out.eventId = eventId;
  }
  const sc = trace.getActiveSpan()?.spanContext();
  if (sc && sc.traceId !== INVALID_TRACE_ID) {
    out.traceId = sc.traceId;
    out.spanId = sc.spanId;
  }
  return out;
}

const INVALID_TRACE_ID = '00000000000000000000000000000000';

/** Full API keys (`wk_test_…`/`wk_live_…`) and bearer credentials inside free text (messages, error strings). */
const KEY_IN_TEXT = /wk_(?:test|live)_[0-9A-Za-z]{4,}|Bearer\s+[^\s"',;]+/g;

/** Replaces credentials inside a string with `[redacted]`; cheap when there are none. */
export function scrubSecrets(text: string): string {
  if (!text.includes('wk_') && !text.includes('Bearer')) return text;
  return text.replace(KEY_IN_TEXT, (m) => (m.startsWith('wk_') ? `${m.slice(0, 12)}…[redacted]` : 'Bearer [redacted]'));
}

/** Scrubs the top-level string fields of a log object (nested secrets are covered by REDACT_PATHS). */
function scrubFields(obj: Record<string, unknown>): Record<string, unknown> {
  let out = obj;
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v === 'string') {
      const clean = scrubSecrets(v);
      if (clean !== v) { if (out === obj) out = { ...obj }; out[k] = clean; }
    }
  }
  return out;
}

/** `destination`: where lines go (default stdout); tests pass a stream to read them back. */
export function createLogger(name: string, level: string = 'info', opts: LoggerOptions = {}, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }), log: scrubFields },
    hooks: {
      // The message string and its interpolation arguments: a key pasted into a message is scrubbed too.
      logMethod(args, method) {
        for (let i = 0; i < args.length; i++) {
          const a = args[i];
          if (typeof a === 'string') (args as unknown[])[i] = scrubSecrets(a);
        }
        return method.apply(this, args);
      },
    },
    // Adds the request/call/message ids and the active trace id, so logs and traces can be joined.
    mixin: logMixin,
    ...opts,
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Masks an account number to its last 4 digits: `****1234` (listings, receipts, logs). */
export function maskAccount(value: string | null | undefined): string | null {
  if (value == null || value === '') return null;
  return `****${value.slice(-4)}`;
}
