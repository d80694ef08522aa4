import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { trace } from '@opentelemetry/api';
import { currentLogContext } from './log-context.js';
import { logTap } from './log-tap.js';

export type { Logger };

/**
 * Paths that must never reach a log line: secrets, keys, passwords, full account numbers.
 * Values are replaced, not removed, so a reader sees that something was there.
 */
export const REDACT_PATHS = [
  'authorization', '*.authorization', 'req.headers.authorization', 'headers.authorization',
  'password', '*.password', 'passwordHash', '*.passwordHash',
  'key', '*.key', 'apiKey', '*.apiKey', 'secret', '*.secret', 'token', '*.token', 'totpSecret', '*.totpSecret',
  'adminToken', '*.adminToken', 'DATABASE_URL', '*.DATABASE_URL',
  '*.*.password', '*.*.secret', '*.*.totpSecret', '*.*.apiKey', '*.*.authorization',
  'cookie', '*.cookie', 'req.headers.cookie', 'headers.cookie', 'pepper', '*.pepper', 'apiKeyPepper', '*.apiKeyPepper',
  'accessToken', '*.accessToken', 'refreshToken', '*.refreshToken', 'clientSecret', '*.clientSecret',
  'callbackSecret', '*.callbackSecret', 'privateKey', '*.privateKey', 'otp', '*.otp', 'totp', '*.totp',
];

/**
 * Personal data (Bre-B key values, which are phone numbers, e-mails and document numbers; payers' and
 * targets' documents; e-mail addresses) and account numbers: kept in logs only masked, so a line can
 * still be matched to a case (`******4567`, `j***@example.com`, accounts `****1234`). Masked at any
 * depth down to four levels.
 */
export const MASKED_FIELDS = [
  'keyValue', 'brebKeyValue', 'targetDocument', 'payerDocument', 'documentNumber', 'counterpartyDocument', 'nit',
  'email', 'payerEmail', 'phone', 'accountNumber', 'bankAccountNumber',
] as const;
const ACCOUNT_FIELDS = new Set<string>(['accountNumber', 'bankAccountNumber']);
const MASKED = new Set<string>(MASKED_FIELDS);
const MASKED_PATHS = MASKED_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`, `*.*.*.${f}`]);

const EMAIL = /^([^@\s])[^@\s]*@([^@\s]+)$/;

/**
 * A personal value as logs may show it: an e-mail keeps its first letter and its domain
 * (`j***@example.com`); anything else its last 4 characters when it has at least 8, its last 2
 * when it has 5 to 7, none when shorter (`******4567`, `******a1`, `******`).
 */
export function maskPersonalData(value: string): string {
  const email = EMAIL.exec(value);
  if (email) return `${email[1]}***@${email[2]}`;
  const n = [...value].length;
  const keep = n >= 8 ? 4 : n >= 5 ? 2 : 0;
  return `******${keep ? [...value].slice(-keep).join('') : ''}`;
}

/** The redaction censor: masked fields are masked (strings; arrays of strings), everything else is replaced. */
function censor(value: unknown, path: string[]): unknown {
  const field = path[path.length - 1] ?? '';
  if (!MASKED.has(field)) return '[redacted]';
  const mask = (v: unknown): unknown => {
    if (v == null || v === '') return v;
    if (typeof v !== 'string' && typeof v !== 'number') return '[redacted]';
    const text = String(v);
    if (text.includes('***')) return text; // masked already by the call site (`****1234`, `@t***a1`)
    return ACCOUNT_FIELDS.has(field) ? maskAccount(text) : maskPersonalData(text);
  };
  return Array.isArray(value) ? value.map(mask) : mask(value);
}

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

/** E-mail addresses, and runs of 8 or more digits standing alone (phones, documents, account numbers), in free text. */
const PERSONAL_IN_TEXT = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|(?<![\w.-])\+?\d{8,}(?![\w-])/g;

/**
 * Masks personal data inside free text (messages, error strings: a database error quoting a value,
 * a provider's answer): e-mails and standalone numbers of 8+ digits. Structured fields are masked by name.
 */
export function scrubPersonalData(text: string): string {
  if (!/@|\d{8}/.test(text)) return text;
  return text.replace(PERSONAL_IN_TEXT, (m) => maskPersonalData(m));
}

/** Top-level fields that hold free text (error strings, reasons) rather than values. */
const FREE_TEXT_FIELDS = new Set(['err', 'error', 'reason', 'message', 'msg', 'lastError']);

/** Scrubs the top-level string fields of a log object (nested secrets are covered by REDACT_PATHS). */
function scrubFields(obj: Record<string, unknown>): Record<string, unknown> {
  let out = obj;
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v === 'string') {
      let clean = scrubSecrets(v);
      if (FREE_TEXT_FIELDS.has(k)) clean = scrubPersonalData(clean);
      if (clean !== v) { if (out === obj) out = { ...obj }; out[k] = clean; }
    }
  }
  return out;
}

/** Error properties that quote values: Postgres `detail` ("Key (…)=(…)", "Failing row contains (…)"), queries and their parameters. */
const ERROR_VALUE_FIELDS = ['detail', 'where', 'internalQuery', 'query', 'sql', 'parameters', 'params', 'values', 'body'];

/** pino's error serializer, then without the properties that quote values, and with message and stack scrubbed. */
export function serializeError(err: unknown): unknown {
  const out = pino.stdSerializers.err(err as Error) as unknown;
  if (!out || typeof out !== 'object') return out;
  const o = { ...(out as Record<string, unknown>) };
  for (const f of ERROR_VALUE_FIELDS) if (o[f] !== undefined) o[f] = '[redacted]';
  for (const f of ['message', 'stack']) if (typeof o[f] === 'string') o[f] = scrubPersonalData(scrubSecrets(o[f] as string));
  if (o.cause && typeof o.cause === 'object') o.cause = serializeError(o.cause);
  return o;
}

/**
 * `destination`: where lines go (default stdout); tests pass a stream to read them back. While a
 * test captures every process's logs (log-tap.ts) the capture's level and stream win.
 */
export function createLogger(name: string, level: string = 'info', opts: LoggerOptions = {}, destination?: DestinationStream): Logger {
  const tap = logTap();
  const options: LoggerOptions = {
    name,
    level: tap ? tap.level : level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: [...REDACT_PATHS, ...MASKED_PATHS], censor },
    formatters: { level: (label) => ({ level: label }), log: scrubFields },
    serializers: { err: serializeError },
    hooks: {
      // The message string and its interpolation arguments: a key or personal value pasted into a message is scrubbed too.
      logMethod(args, method) {
        for (let i = 0; i < args.length; i++) {
          const a = args[i];
          if (typeof a === 'string') (args as unknown[])[i] = scrubPersonalData(scrubSecrets(a));
        }
        return method.apply(this, args);
      },
    },
    // Adds the request/call/message ids and the active trace id, so logs and traces can be joined.
    mixin: logMixin,
    ...opts,
  };
  const dest = tap ? tap.stream : destination;
  return dest ? pino(options, dest) : pino(options);
}

/** Masks an account number to its last 4 digits: `****1234` (listings, receipts, logs). */
export function maskAccount(value: string | null | undefined): string | null {
  if (value == null || value === '') return null;
  return `****${value.slice(-4)}`;
}
