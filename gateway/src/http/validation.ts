import { z } from 'zod';
import { AppError, invalidRequest, parseInstant, parseInstantOrBogotaDate, type ErrorCode, type FieldProblem } from '@wallet/platform';

/** Field messages in Spanish, like every human-readable message of the API. */
export const spanish = z.locales.es().localeError;

export function issuesToFields(issues: readonly z.core.$ZodIssue[]): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: [...base, key].join('.'), message: 'Campo no permitido.' });
    } else {
      out.push({ path: base.join('.'), message: issue.message });
    }
  }
  return out;
}

/** Parses `input` with `schema` or throws INVALID_REQUEST with `details.fields`. `prefix` names where the input came from (e.g. "query"). */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, prefix?: string): z.output<S> {
  const r = schema.safeParse(input, { error: spanish });
  if (r.success) return r.data;
  const fields = issuesToFields(r.error.issues);
  throw invalidRequest(prefix ? fields.map((f) => ({ ...f, path: f.path ? `${prefix}.${f.path}` : prefix })) : fields);
}

/**
 * One style of `details.fields[].path` for every answer (see FieldProblem): a service behind the
 * gateway names a listing's filter bare (`cursor`, `limit`); on a route that takes no body such a
 * name is one of its query parameters, so it is answered as `query.<name>`, as the gateway's own
 * validation does. Other errors pass unchanged.
 */
export function withQueryPaths(err: unknown, query: z.ZodType | undefined, hasBody: boolean): unknown {
  if (!(err instanceof AppError) || hasBody || !query || !('shape' in query)) return err;
  const names = new Set(Object.keys((query as z.ZodObject).shape));
  const fields = (err.details as { fields?: unknown } | undefined)?.fields;
  if (!Array.isArray(fields)) return err;
  const rewritten = (fields as FieldProblem[]).map((f) =>
    typeof f?.path === 'string' && names.has(f.path.split('.')[0]!) ? { ...f, path: `query.${f.path}` } : f,
  );
  const out = new AppError(err.code, err.message, { ...err.details, fields: rewritten });
  out.stack = err.stack;
  return out;
}

/** Path parameters: a malformed one answers the route's chosen code (e.g. COMPANY_NOT_FOUND), else INVALID_REQUEST. */
export function parseParams<S extends z.ZodType>(schema: S, input: unknown, errors: Record<string, ErrorCode> | undefined): z.output<S> {
  const r = schema.safeParse(input, { error: spanish });
  if (r.success) return r.data;
  for (const issue of r.error.issues) {
    const name = String(issue.path[0] ?? '');
    const code = errors?.[name];
    if (code) throw new AppError(code);
  }
  throw invalidRequest(issuesToFields(r.error.issues).map((f) => ({ ...f, path: f.path ? `params.${f.path}` : 'params' })));
}

// ---- Shared field schemas -------------------------------------------------------------------

/**
 * An amount in centavos: a JSON integer (not a string, not a float) in the safe-integer range.
 * `1.5`, `"100"`, negatives and values above 2^53-1 fail (CONTRACT §3).
 */
/** Centavos in a request, a JSON integer in [min, max] (max by default: what a JSON number holds exactly). */
export const centsSchema = (min = 0, max = Number.MAX_SAFE_INTEGER) => z.int().min(min).max(max);

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** A UUID in canonical text form, lower-cased. */
export const uuidSchema = () =>
  z
    .string()
    .regex(UUID)
    .transform((s) => s.toLowerCase())
    .meta({ format: 'uuid' });

/** Trimmed text, length counted in Unicode code points (CONTRACT §9). */
export const textSchema = (min: number, max: number) =>
  z
    .string()
    .trim()
    .refine(
      (s) => {
        const n = [...s].length;
        return n >= min && n <= max;
      },
      { message: `Debe tener entre ${min} y ${max} caracteres.` },
    )
    // Trimmed first: a required text must hold something other than spaces (`\S`), as the server counts it.
    .meta({ minLength: min, maxLength: max, ...(min > 0 ? { pattern: '\\S' } : {}) });

/**
 * A query parameter naming an instant, parsed by the platform's one parser into an Instant (RFC 3339
 * UTC, six fraction digits) that the services compare at full precision: an offset is required,
 * seconds optional, up to 9 fraction digits (past the 6th truncated). With `bogotaDates`, a bare
 * date `2026-11-01` is also taken, as that day's 00:00 in Bogotá. Anything else: 400 INVALID_REQUEST.
 */
export const instantParam = (opts: { bogotaDates?: boolean } = {}) => {
  const parse = opts.bogotaDates ? parseInstantOrBogotaDate : parseInstant;
  return z
    .string()
    .refine((s) => parse(s) !== null, {
      message: opts.bogotaDates
        ? 'Debe ser una fecha (AAAA-MM-DD, hora de Bogotá) o un instante ISO 8601 con zona horaria.'
        : 'Debe ser un instante ISO 8601 con zona horaria (p. ej. 2026-11-21T10:00:00-05:00 o 2026-11-28T16:39:52.123456Z).',
    })
    .transform((s) => parse(s)!)
    .meta(opts.bogotaDates ? DATE_OR_INSTANT_JSON : INSTANT_JSON);
};

/**
 * What the instant parser takes, as the document states it: RFC 3339 `date-time` (seconds included)
 * with an offset (`Z` or `±hh:mm`), up to 9 fraction digits. The pattern narrows what `format:
 * date-time` alone allows (a lowercase `t`/`z`, a space for `T`, an offset without its colon, a
 * 10th fraction digit, a leap second), which the parser refuses.
 */
export const INSTANT_PARAM_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-5][0-9](\\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$';
/** A calendar date `YYYY-MM-DD` as the document states it. */
export const DATE_PARAM_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
/** JSON Schema of an instant query parameter. */
export const INSTANT_JSON = { format: 'date-time', pattern: INSTANT_PARAM_PATTERN } as const;
/** JSON Schema of a query parameter that takes a calendar date or an instant. */
export const DATE_OR_INSTANT_JSON = {
  anyOf: [
    { type: 'string', format: 'date', pattern: DATE_PARAM_PATTERN },
    { type: 'string', format: 'date-time', pattern: INSTANT_PARAM_PATTERN },
  ],
} as const;

/**
 * An integer query parameter (paging `limit`, `page`): documented as `type: integer` with its
 * bounds; the query string carries it as text, so decimal digits (an optional `-`) are read as the
 * number. Anything else, or a number out of bounds: 400 INVALID_REQUEST at `query.<name>`.
 */
export function queryInt(min: number, max: number): z.ZodType<number, unknown>;
export function queryInt(min: number, max: number, byDefault: number): z.ZodType<number, unknown>;
export function queryInt(min: number, max: number, byDefault?: number): z.ZodType<number, unknown> {
  const schema = z.preprocess(
    (v) => (typeof v === 'string' && /^-?[0-9]{1,16}$/.test(v) ? Number(v) : v),
    z
      .int({ error: `Debe ser un número entero entre ${min} y ${max}.` })
      .min(min)
      .max(max),
  );
  // The default is stated as a keyword (the document turns it into words and x-default): zod leaves
  // it out of the input schema of a preprocessed value.
  return byDefault === undefined ? schema : schema.default(byDefault).meta({ default: byDefault });
}
