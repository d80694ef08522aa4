import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { trace } from '@opentelemetry/api';
import { currentLogContext } from './log-context.js';
import { logTap } from './log-tap.js';

export type { Logger };

/**
 * Fields that must never reach a log line (secrets, keys, passwords, credentials), at any depth.
 * Values are replaced, not removed, so a reader sees that something was there.
 */
export const REDACTED_FIELDS = [
  'authorization',
  'password',
  'passwordHash',
  'key',
  'apiKey',
  'secret',
  'token',
  'totpSecret',
  'adminToken',
  'DATABASE_URL',
  'cookie',
  'pepper',
  'apiKeyPepper',
  'accessToken',
  'refreshToken',
  'clientSecret',
  'callbackSecret',
  'privateKey',
  'otp',
  'totp',
] as const;

/**
 * Personal data (Bre-B key values, which are phone numbers, e-mails and document numbers; payers' and
 * targets' documents; e-mail addresses) and account numbers, at any depth: kept in logs only masked,
 * so a line can still be matched to a case (`******4567`, `j***@example.com`, accounts `****1234`).
 */
export const MASKED_FIELDS = [
  'keyValue',
  'brebKeyValue',
  'targetDocument',
  'payerDocument',
  'documentNumber',
  'counterpartyDocument',
  'nit',
  'email',
  'payerEmail',
  'phone',
  'accountNumber',
  'bankAccountNumber',
] as const;
const REDACTED = new Set<string>(REDACTED_FIELDS);
const MASKED = new Set<string>(MASKED_FIELDS);
const ACCOUNT_FIELDS = new Set<string>(['accountNumber', 'bankAccountNumber']);
/** Fields that hold free text (error strings, reasons) rather than values: personal data inside is masked. */
const FREE_TEXT_FIELDS = new Set(['err', 'error', 'reason', 'message', 'msg', 'lastError']);
const MAX_DEPTH = 8;

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

function maskField(field: string, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => maskField(field, v));
  if (value == null || value === '') return value;
  if (typeof value !== 'string' && typeof value !== 'number') return '[redacted]';
  const text = String(value);
  if (text.includes('***')) return text; // masked already by the call site (`****1234`, `@t***a1`)
  return ACCOUNT_FIELDS.has(field) ? maskAccount(text) : maskPersonalData(text);
}

const isPlainObject = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/**
 * One value of a log object as it may be written: secrets replaced, personal data masked (by field
 * name, at any depth of plain objects and arrays), credentials and, in free-text fields, personal
 * data scrubbed out of strings. Copies only what it changes; errors are left to `serializeError`.
 */
function sanitize(value: unknown, field: string | undefined, depth: number): unknown {
  if (field !== undefined) {
    if (REDACTED.has(field)) return value == null ? value : '[redacted]';
    if (MASKED.has(field)) return maskField(field, value);
  }
  if (typeof value === 'string') {
    const clean = scrubSecrets(value);
    return field !== undefined && FREE_TEXT_FIELDS.has(field) ? scrubPersonalData(clean) : clean;
  }
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = sanitize(value[i], field, depth + 1);
      if (v !== value[i]) (out ??= [...value])[i] = v;
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;
  return sanitizeObject(value as Record<string, unknown>, depth);
}

function sanitizeObject(obj: Record<string, unknown>, depth = 0): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const k in obj) {
    const v = obj[k];
    const clean = sanitize(v, k, depth + 1);
    if (clean !== v) (out ??= { ...obj })[k] = clean;
  }
  return out ?? obj;
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
    // Secrets and personal data by field name, at any depth (a walk over the line's own object:
    // pino's wildcard `redact` paths cost ~50 µs a line and reach only the depths they name).
    formatters: { level: (label) => ({ level: label }), log: (o) => sanitizeObject(o), bindings: (b) => sanitizeObject(b) },
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

/**
 * The request path as logs may show it: a segment that is a phone or document number or an e-mail
 * (a client probing `/…/3001234567`, a collect key's `ext:<externalId>` holding a document) is masked;
 * ids and other segments stay as sent. Spans carry the same (telemetry: `url.path`, provider calls).
 */
export function pathForLog(path: string): string {
  if (!/@|%40|[/:][\d+ -]{6,}(\/|$)/.test(path)) return path;
  return path
    .split('/')
    .map((segment) => {
      let s = segment;
      try {
        s = decodeURIComponent(segment);
      } catch {
        /* kept as sent */
      }
      const ext = s.startsWith('ext:') ? 'ext:' : '';
      const value = s.slice(ext.length);
      return value.includes('@') || /^[\d+ -]{6,}$/.test(value) ? `${ext}${maskPersonalData(value)}` : segment;
    })
    .join('/');
}
