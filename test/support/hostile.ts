/**
 * Helpers for the hostile-input and security suites: the OpenAPI document as a list of operations,
 * a conservative "surely invalid" oracle over its JSON schemas, fast-check arbitraries biased to
 * invalid input, a raw HTTP sender with a hang detector, the error-shape assertion and a snapshot
 * of every table of the test database (to show a refused request wrote nothing).
 */
import fc from 'fast-check';
import pg from 'pg';
import { ERRORS } from '@wallet/platform';
import { checkDocumented, type CheckOptions } from './openapi-check.js';

// ---- OpenAPI ----------------------------------------------------------------------------------

export type JsonSchema = Record<string, any>;

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  description: string;
  /** 'apiKey' | 'adminToken' | 'public' | another scheme name (e.g. a dashboard session). */
  auth: string;
  pathParams: Array<{ name: string; schema: JsonSchema }>;
  queryParams: Array<{ name: string; required: boolean; schema: JsonSchema }>;
  headerParams: Array<{ name: string; required: boolean; schema: JsonSchema }>;
  body: JsonSchema | undefined;
}

/** Resolves every `$ref` (local ones only) into a plain tree; cycles stop at an empty schema. */
export function deref(doc: any, schema: any, seen: Set<string> = new Set()): any {
  if (Array.isArray(schema)) return schema.map((s) => deref(doc, s, seen));
  if (!schema || typeof schema !== 'object') return schema;
  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref as string;
    if (seen.has(ref)) return {};
    const target = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((o: any, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    return deref(doc, target, new Set([...seen, ref]));
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'example' || k === 'examples' ? v : deref(doc, v, seen);
  return out;
}

export function operations(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      const params = deref(doc, [...(item.parameters ?? []), ...(op.parameters ?? [])]) as any[];
      const security = (op.security ?? doc.security ?? []) as Array<Record<string, unknown>>;
      const auth = security.length === 0 ? 'public' : (Object.keys(security[0]!)[0] ?? 'public');
      const bodySchema = op.requestBody?.content?.['application/json']?.schema;
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        description: op.description ?? '',
        auth,
        pathParams: params.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        queryParams: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: !!p.required, schema: p.schema ?? {} })),
        headerParams: params.filter((p) => p.in === 'header').map((p) => ({ name: p.name, required: !!p.required, schema: p.schema ?? {} })),
        body: bodySchema ? deref(doc, bodySchema) : undefined,
      });
    }
  }
  return out;
}

// ---- The oracle -------------------------------------------------------------------------------

const jsonType = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;

function typeMatches(t: string, v: unknown): boolean {
  const jt = jsonType(v);
  if (t === 'number') return jt === 'number' || jt === 'integer';
  return t === jt;
}

const codePoints = (s: string) => [...s].length;

/**
 * True only when `value` certainly breaks `schema` (so a correct server must refuse it): wrong JSON
 * type, missing required property, unknown property where `additionalProperties: false`, a number
 * outside its bounds or not an integer, a value outside enum/const, a string failing its pattern
 * or length both as sent and trimmed (the API trims text). Anything it cannot judge is "maybe valid".
 */
export function violates(schema: JsonSchema | undefined, value: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false;
  if (Array.isArray(schema.anyOf))
    return (schema.anyOf.length > 0 && schema.anyOf.every((s: JsonSchema) => violates(s, value))) || ownViolations(schema, value);
  if (Array.isArray(schema.oneOf))
    return (schema.oneOf.length > 0 && schema.oneOf.every((s: JsonSchema) => violates(s, value))) || ownViolations(schema, value);
  if (Array.isArray(schema.allOf) && schema.allOf.some((s: JsonSchema) => violates(s, value))) return true;
  return ownViolations(schema, value);
}

function ownViolations(schema: JsonSchema, value: unknown): boolean {
  if (value === null && schema.nullable === true) return false;
  if ('const' in schema && !Object.is(schema.const, value) && (typeof schema.const !== 'object' || schema.const === null)) {
    // 20 and 20.0 are the same JSON number.
    if (!(typeof schema.const === 'number' && typeof value === 'number' && schema.const === value)) return true;
  }
  if (Array.isArray(schema.enum) && schema.enum.every((e: unknown) => typeof e !== 'object' || e === null) && !schema.enum.includes(value)) return true;
  const types = schema.type === undefined ? undefined : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types && !types.some((t: string) => typeMatches(t, value))) return true;
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) return true;
    if (typeof schema.maximum === 'number' && value > schema.maximum) return true;
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) return true;
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) return true;
  }
  if (typeof value === 'string') {
    const forms = [value, value.trim()];
    if (typeof schema.pattern === 'string') {
      let re: RegExp | undefined;
      try {
        re = new RegExp(schema.pattern, 'u');
      } catch {
        try {
          re = new RegExp(schema.pattern);
        } catch {
          re = undefined;
        }
      }
      if (re && forms.every((f) => !re!.test(f))) return true;
    }
    const lens = forms.flatMap((f) => [f.length, codePoints(f)]);
    if (typeof schema.maxLength === 'number' && lens.every((n) => n > schema.maxLength)) return true;
    if (typeof schema.minLength === 'number' && lens.every((n) => n < schema.minLength)) return true;
  }
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) return true;
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) return true;
    if (schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items) && value.some((v) => violates(schema.items, v))) return true;
  }
  if (jsonType(value) === 'object' && (schema.properties || schema.required)) {
    const obj = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const r of (schema.required ?? []) as string[]) if (!Object.prototype.hasOwnProperty.call(obj, r)) return true;
    for (const [k, v] of Object.entries(obj)) {
      if (Object.prototype.hasOwnProperty.call(props, k)) {
        if (violates(props[k], v)) return true;
      } else if (schema.additionalProperties === false) return true;
    }
  }
  return false;
}

// ---- Arbitraries --------------------------------------------------------------------------------

/** Strings a careless parser or a database chokes on. */
export const nastyStrings = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'a\uDFFFb',
  '\u202Eabc\u202C',
  'مرحبا بالعالم',
  '𝕳𝖊𝖑𝖑𝖔 🏦💸',
  'e\u0301\u0301\u0301',
  '\r\nBcc: victim@example.com',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "' OR 1=1 --",
  '%00',
  '${7*7}',
  '{{7*7}}',
  '../../etc/passwd',
  'NaN',
  'Infinity',
  '-1',
  '1e308',
  '9007199254740993',
  '0x10',
  'null',
  'true',
  '[]',
  '{}',
  '\ufeff',
  '\u200b',
];

/** Numbers at and past every usual edge. */
export const edgeNumbers = [
  0,
  -1,
  1,
  1.5,
  -0.5,
  99,
  100,
  2 ** 31,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  1e308,
  -1e308,
  5e-324,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
];

function deepNest(depth: number, leaf: unknown = 1): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

/** One hostile JSON value of any type (strings up to `maxString` code units). */
export function hostileValue(maxString = 2000): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...nastyStrings), weight: 3 },
    { arbitrary: fc.constantFrom(...edgeNumbers), weight: 3 },
    { arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': '' }), weight: 2 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 64 }), weight: 2 },
    { arbitrary: fc.string({ unit: 'grapheme', maxLength: 64 }), weight: 1 },
    { arbitrary: fc.integer({ min: 1, max: maxString }).map((n) => 'x'.repeat(n)), weight: 1 },
    { arbitrary: fc.double(), weight: 1 },
    { arbitrary: fc.integer({ min: 2, max: 200 }).map((d) => deepNest(d)), weight: 1 },
    { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
  );
}

function patternArb(pattern: string): fc.Arbitrary<string> | undefined {
  try {
    return fc.stringMatching(new RegExp(pattern));
  } catch {
    return undefined;
  }
}

/** Values that are probably valid for `schema` (the base a single mutation makes invalid). */
export function plausible(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.constant('x');
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches) && branches.length) return fc.oneof(...branches.map((b: JsonSchema) => plausible(b, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'integer': {
      const min = Math.max(typeof schema.minimum === 'number' ? schema.minimum : 0, -1e9);
      const max = Math.min(typeof schema.maximum === 'number' ? schema.maximum : min + 1e6, min + 1e6);
      return fc.integer({ min, max });
    }
    case 'number':
      return fc.integer({ min: 1, max: 100 });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(plausible(schema.items, depth + 1), { maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set<string>(schema.required ?? []);
      const rec: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries(props)) rec[k] = plausible(s, depth + 1);
      return fc.record(rec, { requiredKeys: [...required].filter((k) => k in props) as never[] }).map((o) => ({ ...o }) as Record<string, unknown>);
    }
    case 'string':
    default: {
      if (typeof schema.pattern === 'string') {
        const arb = patternArb(schema.pattern);
        if (arb) return arb.filter((s) => s.length <= (schema.maxLength ?? 10_000));
      }
      const minLength = schema.minLength ?? 1;
      const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 20, 40));
      return fc.string({ unit: 'grapheme-ascii', minLength, maxLength }).filter((s) => s.trim().length >= minLength);
    }
  }
}

/** A value that breaks `schema` at one place (wrong type / bound at the top, or deeper inside an object). */
export function mutated(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const keys = Object.keys(props);
  const required: string[] = (schema.required ?? []).filter((k: string) => k in props);
  const isObject = schema.type === 'object' || keys.length > 0;
  const top = hostileValue().filter((v) => violates(schema, v));
  if (!isObject || depth > 3) return top;
  const base = plausible(schema, depth) as fc.Arbitrary<Record<string, unknown>>;
  const options: fc.Arbitrary<unknown>[] = [top];
  if (required.length) {
    options.push(
      fc.tuple(base, fc.constantFrom(...required)).map(([o, k]) => {
        const c = { ...o };
        delete c[k];
        return c;
      }),
    );
  }
  if (keys.length) {
    options.push(fc.tuple(base, fc.constantFrom(...keys)).chain(([o, k]) => mutated(props[k]!, depth + 1).map((v) => ({ ...o, [k]: v }))));
  }
  if (schema.additionalProperties === false) {
    const extraKey = fc
      .oneof(fc.constantFrom('__proto__', 'constructor', 'id', 'companyId', 'status', '$where', ''), fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }))
      .filter((k) => !(k in props));
    options.push(
      fc.tuple(base, extraKey, hostileValue()).map(([o, k, v]) => {
        const c: Record<string, unknown> = { ...o };
        Object.defineProperty(c, k, { value: v, enumerable: true, writable: true, configurable: true });
        return c;
      }),
    );
  }
  return fc.oneof(...options);
}

/** JSON round trip: what the server will actually see (NaN → null, -0 → 0, undefined dropped). */
export const asSent = (v: unknown): unknown => {
  const s = JSON.stringify(v);
  return s === undefined ? undefined : JSON.parse(s);
};

/** A body for `schema` that the oracle proves invalid: random JSON, random objects, or one targeted mutation. */
export function invalidBody(schema: JsonSchema): fc.Arbitrary<unknown> {
  return fc
    .oneof(
      { arbitrary: mutated(schema), weight: 6 },
      { arbitrary: fc.jsonValue({ maxDepth: 4 }), weight: 2 },
      { arbitrary: fc.object({ maxDepth: 3, values: [hostileValue(200)] }), weight: 2 },
    )
    .filter((b) => b !== undefined && violates(schema, asSent(b)));
}

/** A query-string value that breaks its parameter schema (strings only: a query has no other type). */
export function invalidQueryValue(schema: JsonSchema): fc.Arbitrary<string> | undefined {
  const constrained = schema.enum || schema.pattern || schema.maxLength !== undefined || schema.minLength !== undefined || schema.const !== undefined;
  if (!constrained) return undefined;
  const candidates = fc.oneof(
    fc.constantFrom(...nastyStrings.filter((s) => !s.includes('\u0000') && !/[\uD800-\uDFFF]/.test(s))),
    fc.constantFrom(...edgeNumbers.map(String)),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.integer({ min: 1, max: 4000 }).map((n) => '9'.repeat(n)),
  );
  return candidates.filter((s) => violates(schema, s));
}

// ---- HTTP ---------------------------------------------------------------------------------------

export interface RawAnswer {
  status: number;
  text: string;
  body: any;
  headers: Headers;
}

/**
 * Sends a raw request; a server that does not answer within `hangMs` fails the test as a hang, and
 * an answer GET /openapi.json does not declare fails it too (`baseUrl` is a gateway).
 */
export async function send(
  baseUrl: string,
  method: string,
  path: string,
  opts: { token?: string; headers?: Record<string, string>; body?: string | Buffer; hangMs?: number } & CheckOptions = {},
): Promise<RawAnswer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`${baseUrl}${path}`, { method, headers, body: opts.body, signal: AbortSignal.timeout(opts.hangMs ?? 15_000) });
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') throw new Error(`HANG: ${method} ${path} did not answer within ${opts.hangMs ?? 15_000} ms`, { cause: err });
    throw err;
  }
  const text = await res.text();
  await checkDocumented(baseUrl, { method, path, status: res.status, headers: res.headers, text }, { malformedHttp: opts.malformedHttp });
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, text, body, headers: res.headers };
}

/** What must never reach a client: stacks, SQL, internal addresses and paths. */
const LEAK =
  /\bat [\w.<>]+ \(|node:internal|node_modules|\/work\/|\.(?:ts|js):\d+|\bSELECT\b|\bINSERT INTO\b|\bUPDATE \w+ SET\b|relation "|syntax error at|duplicate key|violates|ECONNREFUSED|127\.0\.0\.1|localhost|::1\b|grpc|UNAVAILABLE:|TypeError|RangeError|ReferenceError|SyntaxError|Maximum call stack/i;

/** Why an answer is not a proper client error (`undefined` when it is one). */
export function clientErrorProblem(r: RawAnswer, allowed: (status: number) => boolean = (s) => s >= 400 && s < 500): string | undefined {
  if (!allowed(r.status)) return `status ${r.status}`;
  if (!r.body || typeof r.body !== 'object') return `not a JSON error body: ${r.text.slice(0, 200)}`;
  if (typeof r.body.error !== 'string' || !/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/.test(r.body.error)) return `error code ${JSON.stringify(r.body.error)}`;
  const known = (ERRORS as Record<string, { message: string }>)[r.body.error];
  if (!known) return `error code ${r.body.error} is not in the catalogue`;
  // The catalogue's message, or a more precise Spanish one a domain error chose (e.g. INVALID_KEY names the key type).
  if (typeof r.body.message !== 'string' || !r.body.message.trim()) return 'no message';
  if (r.body.message !== known.message && !/[áéíóúñ¿¡]|\b(el|la|los|las|de|del|no|es|un|una)\b/i.test(r.body.message))
    return `message ${JSON.stringify(r.body.message)} is not Spanish`;
  if (LEAK.test(r.text)) return `leaks internals: ${r.text.slice(0, 300)}`;
  return undefined;
}

// ---- The database, whole ------------------------------------------------------------------------

/**
 * Background work every installation has that waits on a timer longer than the quiet window: the
 * ledger seals committed postings into its journal on a 1 s tick, so a posting made just before a
 * snapshot changes `ledger.journal` and `ledger.journal_queue` a moment later by itself.
 */
const ALWAYS_DRAINED = ['SELECT count(*) FROM ledger.journal_queue'];

/**
 * Tables only background work writes, from data already there, whatever the requests: the ledger's
 * balance checkpoints (docs/balance-checkpoints.md), written for hours already closed, on a pass that
 * starts each hour a few minutes past it (a suite running then would see them change by themselves);
 * pse-deposit's deposit counts (docs/deposit-counts.md), folded from their deltas every 2 s (a delta is
 * written only with a change to `pse_deposit.deposits`, which is compared).
 */
const BACKGROUND_TABLES = [
  'ledger.balance_checkpoints',
  'ledger.balance_checkpoint_progress',
  'pse_deposit.deposit_counts',
  'pse_deposit.deposit_count_deltas',
  'pse_deposit.deposit_count_progress',
];

/** Columns that change on reads or by themselves and say nothing about a write. */
const VOLATILE_COLUMNS = ['last_used_at'];

export class DbSnapshotter {
  /** One connection, opened once and kept: the suites must not need a free Postgres slot later on. */
  private readonly pool: pg.Pool;
  private readonly ready: Promise<pg.PoolClient>;
  constructor(databaseUrl: string) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 1, idleTimeoutMillis: 0 });
    this.ready = this.pool.connect();
    this.ready.catch(() => undefined);
  }

  /** The one statement that reads every table's state (built once: the tables do not change during a suite). */
  private statement: Promise<string> | undefined;

  /**
   * table → "rows:checksum" over every application schema, in one statement. A table's checksum is
   * over its live row versions (each one's ctid and the transaction that wrote it), so any insert,
   * update or delete changes it, whatever it wrote; a table with a column that changes by itself on
   * reads (VOLATILE_COLUMNS) is compared by content instead, without that column.
   */
  async snapshot(): Promise<Map<string, string>> {
    const client = await this.ready;
    this.statement ??= (async () => {
      const tables = await client.query<{ s: string; t: string; volatile: boolean }>(
        `SELECT t.table_schema AS s, t.table_name AS t,
                exists (SELECT 1 FROM information_schema.columns c
                         WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.column_name = ANY($1)) AS volatile
           FROM information_schema.tables t
          WHERE t.table_type = 'BASE TABLE' AND t.table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`,
        [VOLATILE_COLUMNS],
      );
      const strip = VOLATILE_COLUMNS.map((c) => ` - '${c}'`).join('');
      return tables.rows
        .filter(({ s, t }) => !BACKGROUND_TABLES.includes(`${s}.${t}`))
        .map(({ s, t, volatile }) =>
          volatile
            ? `SELECT '${s}.${t}' AS k, count(*)::text || ':' || coalesce(md5(string_agg(j, '|' ORDER BY j)), '') AS v
                 FROM (SELECT (to_jsonb(x)${strip})::text AS j FROM "${s}"."${t}" x) y`
            : `SELECT '${s}.${t}' AS k, count(*)::text || ':' || coalesce(sum(hashtextextended(x.ctid::text || ':' || x.xmin::text, 0)), 0)::text AS v
                 FROM "${s}"."${t}" x`,
        )
        .join('\nUNION ALL\n');
    })();
    const r = await client.query<{ k: string; v: string }>(await this.statement);
    return new Map(r.rows.map((row) => [row.k, row.v]));
  }

  /** The number a `select count(*) …` answers (its one column, whatever its name). */
  async count(sql: string): Promise<number> {
    const client = await this.ready;
    const r = await client.query<Record<string, string>>(sql);
    const row = r.rows[0];
    if (!row || Object.keys(row).length !== 1) throw new Error(`count: ${sql} must answer one row of one column`);
    return Number(Object.values(row)[0]);
  }

  /**
   * A snapshot taken once the background work (outbox relays, projections) has settled: nothing
   * changed for 400 ms, and each `drained` count is 0 (work that waits for a timer, such as a mail
   * the sender will take on its next tick, shows no change while it waits).
   */
  async settled(timeoutMs = 10_000, opts: { countOnly?: string[]; drained?: string[] } = {}): Promise<Map<string, string>> {
    const deadline = Date.now() + timeoutMs;
    const drained = [...ALWAYS_DRAINED, ...(opts.drained ?? [])];
    let prev = await this.snapshot();
    for (;;) {
      await new Promise((r) => setTimeout(r, 400));
      // counted between the two snapshots: a queue drained just after `next` read it would otherwise
      // count 0 while `next` (and `prev`, equal to it) still holds its rows
      const empty = (await Promise.all(drained.map((q) => this.count(q)))).every((n) => n === 0);
      const next = await this.snapshot();
      const idle = empty && diff(prev, next, opts).length === 0;
      if (idle || Date.now() > deadline) return next;
      prev = next;
    }
  }

  async close(): Promise<void> {
    const client = await this.ready.catch(() => undefined);
    client?.release();
    await this.pool.end();
  }
}

/**
 * Tables whose rows differ between two snapshots. `countOnly` tables are compared by row count
 * alone (rows a background worker updates by itself, e.g. delivery attempts being retried).
 */
export function diff(a: Map<string, string>, b: Map<string, string>, opts: { countOnly?: string[] } = {}): string[] {
  const names = new Set([...a.keys(), ...b.keys()]);
  const count = (v: string | undefined) => v?.split(':')[0];
  return [...names].filter((n) => (opts.countOnly?.includes(n) ? count(a.get(n)) !== count(b.get(n)) : a.get(n) !== b.get(n))).sort();
}

/** fast-check settings of these suites: a fixed seed unless FC_SEED is given, printed on failure. */
export function fcParams(numRuns: number): fc.Parameters<unknown> {
  const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : 20261121;
  return { numRuns, seed, endOnFailure: true, verbose: 1 };
}

export { deepNest };
