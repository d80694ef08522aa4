/**
 * Breaking changes between two OpenAPI 3.1 documents: what a client written against `before` can
 * no longer rely on in `after` (docs/api-versioning.md, "What counts as breaking").
 *
 * Requests must accept at least what they accepted (a new required field or parameter, a removed
 * field of a closed object, a narrower type, enum, format, pattern or bound are breaking); answers
 * must give at most what they gave (a removed operation, status, media type or field, a field no
 * longer required, a wider type, a removed enum value are breaking; a new optional field or a new
 * enum value is not: clients must ignore what they do not know). Descriptions, summaries and
 * examples never count. Local `$ref`s are resolved; `allOf` is merged; `oneOf`/`anyOf` alternatives
 * are matched one by one (each old request alternative must still be accepted by some new one; each
 * new answer alternative must fit some old one).
 *
 * Each change carries a stable `id` (`<kind> <where>`): a new version announces the breaking changes
 * it makes by listing their ids (http/api-versions.ts).
 */

type Json = Record<string, unknown>;

export type BreakingKind =
  | 'operation-removed'
  | 'request-parameter-added-required'
  | 'request-parameter-became-required'
  | 'request-parameter-removed'
  | 'request-body-added-required'
  | 'request-body-became-required'
  | 'request-media-type-removed'
  | 'request-property-added-required'
  | 'request-property-became-required'
  | 'request-property-removed'
  | 'request-additional-properties-refused'
  | 'request-type-narrowed'
  | 'request-enum-narrowed'
  | 'request-format-changed'
  | 'request-pattern-changed'
  | 'request-bound-narrowed'
  | 'request-alternative-refused'
  | 'response-status-removed'
  | 'response-success-status-added'
  | 'response-media-type-removed'
  | 'response-header-removed'
  | 'response-property-removed'
  | 'response-property-became-optional'
  | 'response-type-widened'
  | 'response-enum-value-removed'
  | 'response-values-unrestricted'
  | 'response-format-changed'
  | 'response-alternative-added';

export interface BreakingChange {
  kind: BreakingKind;
  /** Where, e.g. `GET /wallets/balance response 200 application/json body.wallets[].type`. */
  where: string;
  /** `<kind> <where>`: what a version entry lists to announce it. */
  id: string;
  detail?: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** Keywords whose values are maps of names (a property called `description` is not the keyword). */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Words for people only: never part of the contract. */
const PROSE = new Set(['description', 'summary', 'example', 'examples', 'title', '$comment', 'externalDocs']);

/** Lists the breaking changes from `before` to `after`, sorted by id. */
export function breakingChanges(before: Json, after: Json): BreakingChange[] {
  const diff = new Diff(before, after);
  diff.run();
  const seen = new Set<string>();
  return diff.out.filter((c) => !seen.has(c.id) && seen.add(c.id)).sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * The document as a release snapshot: prose (descriptions, summaries, examples), `servers` and
 * `info.description` removed, keys sorted. What is left is the contract; prose changes never show in
 * a diff of two snapshots.
 */
export function contractOf(doc: Json): Json {
  const out = strip(doc, false) as Json;
  delete out.servers;
  if (out.info && typeof out.info === 'object') out.info = { title: (out.info as Json).title, version: (out.info as Json).version };
  return out;
}

function strip(node: unknown, names: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => strip(n, false));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const key of Object.keys(node).sort()) {
    if (!names && PROSE.has(key)) continue;
    out[key] = strip((node as Json)[key], !names && NAME_MAPS.has(key));
  }
  return out;
}

type Direction = 'request' | 'response';

/** A flattened schema: `$ref` resolved and `allOf` merged. */
interface Flat {
  types: Set<string> | undefined; // undefined: any type
  properties: Map<string, unknown>;
  required: Set<string>;
  additionalFalse: boolean;
  items: unknown;
  enum: unknown[] | undefined;
  const: { value: unknown } | undefined;
  format: string | undefined;
  pattern: string | undefined;
  bounds: Record<string, number>;
  alternatives: unknown[] | undefined; // oneOf / anyOf
}

const LOWER_BOUNDS = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties'] as const;
const UPPER_BOUNDS = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties'] as const;

class Diff {
  readonly out: BreakingChange[] = [];
  private readonly visited = new Map<unknown, Map<unknown, Set<string>>>();

  constructor(
    private readonly before: Json,
    private readonly after: Json,
  ) {}

  run(): void {
    const oldOps = operations(this.before);
    const newOps = operations(this.after);
    for (const [key, o] of oldOps) {
      const n = newOps.get(key);
      const where = `${o.method.toUpperCase()} ${o.path}`;
      if (!n) {
        this.add('operation-removed', where);
        continue;
      }
      this.parameters(where, o, n);
      this.requestBody(where, o.op.requestBody, n.op.requestBody);
      this.responses(where, o.op.responses, n.op.responses);
    }
  }

  private add(kind: BreakingKind, where: string, detail?: string): void {
    this.out.push({ kind, where, id: `${kind} ${where}`, ...(detail ? { detail } : {}) });
  }

  private resolve(doc: Json, node: unknown): Json {
    let n = node;
    for (let hops = 0; n && typeof n === 'object' && typeof (n as Json).$ref === 'string' && hops < 32; hops++) {
      const ref = (n as Json).$ref as string;
      if (!ref.startsWith('#/')) throw new Error(`only local $refs are compared: ${ref}`);
      const target = ref
        .slice(2)
        .split('/')
        .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<unknown>((at, k) => (at && typeof at === 'object' ? (at as Json)[k] : undefined), doc);
      if (target === undefined) throw new Error(`unresolved $ref ${ref}`);
      // Sibling keywords of a $ref (3.1 allows them) apply too.
      const { $ref: _ref, ...siblings } = n as Json;
      n = Object.keys(siblings).length ? { allOf: [target, siblings] } : target;
    }
    return (n ?? {}) as Json;
  }

  private parameters(where: string, o: Op, n: Op): void {
    const params = (doc: Json, op: Op) => {
      const map = new Map<string, Json>();
      for (const p of [...op.shared, ...((op.op.parameters as unknown[]) ?? [])]) {
        const r = this.resolve(doc, p);
        const name = String(r.name);
        map.set(`${r.in} ${r.in === 'header' ? name.toLowerCase() : name}`, r);
      }
      return map;
    };
    const before = params(this.before, o);
    const after = params(this.after, n);
    for (const [key, np] of after) {
      const op = before.get(key);
      // Path parameters are named by the template, compared by position: their names do not matter.
      if (np.in === 'path') continue;
      if (!op && np.required === true) this.add('request-parameter-added-required', `${where} ${key}`);
      else if (op && op.required !== true && np.required === true) this.add('request-parameter-became-required', `${where} ${key}`);
    }
    for (const [key, op] of before) {
      if (op.in === 'path') continue;
      const np = after.get(key);
      // A header the server ignores can go; a query parameter a strict server would now refuse cannot.
      if (!np) {
        if (op.in !== 'header') this.add('request-parameter-removed', `${where} ${key}`);
        continue;
      }
      this.schema('request', `${where} ${key}`, op.schema, np.schema);
    }
    const pathParams = (m: Map<string, Json>) => [...m.values()].filter((p) => p.in === 'path');
    const op = pathParams(before);
    const np = pathParams(after);
    // Path parameters in template order: `{id}` then `{keyId}`.
    const order = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    const oldNames = order(o.path);
    const newNames = order(n.path);
    oldNames.forEach((name, i) => {
      const a = op.find((p) => p.name === name);
      const b = np.find((p) => p.name === newNames[i]);
      if (a && b) this.schema('request', `${where} path ${name}`, a.schema, b.schema);
    });
  }

  private requestBody(where: string, oldBody: unknown, newBody: unknown): void {
    if (!newBody) return;
    const nb = this.resolve(this.after, newBody);
    if (!oldBody) {
      if (nb.required === true) this.add('request-body-added-required', `${where} request`);
      return;
    }
    const ob = this.resolve(this.before, oldBody);
    if (ob.required !== true && nb.required === true) this.add('request-body-became-required', `${where} request`);
    const oc = (ob.content ?? {}) as Record<string, Json>;
    const nc = (nb.content ?? {}) as Record<string, Json>;
    for (const [media, m] of Object.entries(oc)) {
      if (!nc[media]) {
        this.add('request-media-type-removed', `${where} request ${media}`);
        continue;
      }
      this.schema('request', `${where} request ${media} body`, m.schema, nc[media].schema);
    }
  }

  private responses(where: string, oldResponses: unknown, newResponses: unknown): void {
    const or = (oldResponses ?? {}) as Record<string, unknown>;
    const nr = (newResponses ?? {}) as Record<string, unknown>;
    for (const status of Object.keys(nr)) {
      if (!or[status] && /^[23]/.test(status)) this.add('response-success-status-added', `${where} response ${status}`);
    }
    for (const [status, oldR] of Object.entries(or)) {
      if (!nr[status]) {
        this.add('response-status-removed', `${where} response ${status}`);
        continue;
      }
      const o = this.resolve(this.before, oldR);
      const n = this.resolve(this.after, nr[status]);
      const oh = (o.headers ?? {}) as Record<string, unknown>;
      const nh = Object.fromEntries(Object.entries((n.headers ?? {}) as Record<string, unknown>).map(([k, v]) => [k.toLowerCase(), v]));
      for (const [name, h] of Object.entries(oh)) {
        const oldHeader = this.resolve(this.before, h);
        const newHeader = nh[name.toLowerCase()];
        if (!newHeader) {
          if (oldHeader.required === true) this.add('response-header-removed', `${where} response ${status} header ${name}`);
          continue;
        }
        this.schema('response', `${where} response ${status} header ${name}`, oldHeader.schema, this.resolve(this.after, newHeader).schema);
      }
      const oc = (o.content ?? {}) as Record<string, Json>;
      const nc = (n.content ?? {}) as Record<string, Json>;
      for (const [media, m] of Object.entries(oc)) {
        if (!nc[media]) {
          this.add('response-media-type-removed', `${where} response ${status} ${media}`);
          continue;
        }
        this.schema('response', `${where} response ${status} ${media} body`, m.schema, nc[media].schema);
      }
    }
  }

  /** Compares two schemas in one direction, recording what breaks. */
  private schema(dir: Direction, where: string, oldSchema: unknown, newSchema: unknown): void {
    for (const c of this.compare(dir, where, oldSchema, newSchema)) this.out.push(c);
  }

  /** The breaking changes from `oldSchema` to `newSchema` (returned, so alternatives can be tried without recording). */
  private compare(dir: Direction, where: string, oldSchema: unknown, newSchema: unknown): BreakingChange[] {
    if (oldSchema === undefined || newSchema === undefined) return [];
    // Recursive schemas: each pair of nodes is compared once per direction.
    let inner = this.visited.get(oldSchema);
    if (!inner) this.visited.set(oldSchema, (inner = new Map()));
    let dirs = inner.get(newSchema);
    if (!dirs) inner.set(newSchema, (dirs = new Set()));
    if (dirs.has(dir)) return [];
    dirs.add(dir);
    try {
      return this.compareFlat(dir, where, this.flatten(this.before, oldSchema), this.flatten(this.after, newSchema));
    } finally {
      dirs.delete(dir);
    }
  }

  private compareFlat(dir: Direction, where: string, o: Flat, n: Flat): BreakingChange[] {
    const out: BreakingChange[] = [];
    const add = (kind: BreakingKind, at: string, detail?: string) => out.push({ kind, where: at, id: `${kind} ${at}`, ...(detail ? { detail } : {}) });

    // Alternatives (oneOf/anyOf): each old request alternative must still be accepted by a new one; each new answer alternative must fit an old one.
    if (o.alternatives || n.alternatives) {
      const olds = o.alternatives ?? [undefined];
      const news = n.alternatives ?? [undefined];
      const asSchema = (alt: unknown, flat: Flat, side: 'before' | 'after') =>
        alt === undefined ? flat : this.flatten(side === 'before' ? this.before : this.after, alt);
      const fits = (from: Flat, to: Flat) => this.compareFlat(dir, where, from, to);
      if (dir === 'request') {
        olds.forEach((alt, i) => {
          const from = asSchema(alt, { ...o, alternatives: undefined }, 'before');
          const tries = news.map((b) => fits(from, asSchema(b, { ...n, alternatives: undefined }, 'after')));
          if (!tries.some((t) => t.length === 0)) add('request-alternative-refused', `${where}${o.alternatives ? ` (alternative ${i + 1})` : ''}`, best(tries));
        });
      } else {
        news.forEach((alt, i) => {
          const to = asSchema(alt, { ...n, alternatives: undefined }, 'after');
          const tries = olds.map((a) => fits(asSchema(a, { ...o, alternatives: undefined }, 'before'), to));
          if (!tries.some((t) => t.length === 0)) add('response-alternative-added', `${where}${n.alternatives ? ` (alternative ${i + 1})` : ''}`, best(tries));
        });
      }
      // Keywords beside the alternatives are not compared (the generated document puts none there).
      return out;
    }

    // Types (integer is a number).
    const covers = (wide: Set<string> | undefined, narrow: Set<string> | undefined) =>
      !wide || (!!narrow && [...narrow].every((t) => wide.has(t) || (t === 'integer' && wide.has('number'))));
    if (dir === 'request' && !covers(n.types, o.types)) add('request-type-narrowed', where, `${typesText(o.types)} → ${typesText(n.types)}`);
    if (dir === 'response' && !covers(o.types, n.types)) add('response-type-widened', where, `${typesText(o.types)} → ${typesText(n.types)}`);

    // Enumerations and constants (a constant is a one-value enumeration). A new value in an answer is
    // not breaking: clients must tolerate values they do not know.
    const ov = o.enum ?? (o.const ? [o.const.value] : undefined);
    const nv = n.enum ?? (n.const ? [n.const.value] : undefined);
    const missing = ov && nv ? ov.filter((v) => !nv.some((w) => same(v, w))) : [];
    if (dir === 'request' && nv && (!ov || missing.length))
      add('request-enum-narrowed', where, ov ? `removed ${JSON.stringify(missing)}` : `now only ${JSON.stringify(nv)}`);
    if (dir === 'response' && ov && !nv) add('response-values-unrestricted', where, `was only ${JSON.stringify(ov)}`);
    if (dir === 'response' && missing.length) add('response-enum-value-removed', where, `removed ${JSON.stringify(missing)}`);

    // Formats and patterns.
    if (dir === 'request' && n.format !== undefined && n.format !== o.format) add('request-format-changed', where, `${o.format ?? '(none)'} → ${n.format}`);
    if (dir === 'response' && o.format !== undefined && n.format !== o.format) add('response-format-changed', where, `${o.format} → ${n.format ?? '(none)'}`);
    if (dir === 'request' && n.pattern !== undefined && n.pattern !== o.pattern)
      add('request-pattern-changed', where, `${o.pattern ?? '(none)'} → ${n.pattern}`);

    // Bounds a request must now stay within.
    if (dir === 'request') {
      for (const k of LOWER_BOUNDS)
        if (n.bounds[k] !== undefined && !(o.bounds[k] !== undefined && o.bounds[k] >= n.bounds[k]))
          add('request-bound-narrowed', where, `${k} ${o.bounds[k] ?? '(none)'} → ${n.bounds[k]}`);
      for (const k of UPPER_BOUNDS)
        if (n.bounds[k] !== undefined && !(o.bounds[k] !== undefined && o.bounds[k] <= n.bounds[k]))
          add('request-bound-narrowed', where, `${k} ${o.bounds[k] ?? '(none)'} → ${n.bounds[k]}`);
    }

    // Object properties.
    for (const [name, os] of o.properties) {
      const at = `${where}.${name}`;
      const ns = n.properties.get(name);
      if (ns === undefined) {
        if (dir === 'response') add('response-property-removed', at);
        else if (n.additionalFalse) add('request-property-removed', at);
        continue;
      }
      if (dir === 'response' && o.required.has(name) && !n.required.has(name)) add('response-property-became-optional', at);
      if (dir === 'request' && !o.required.has(name) && n.required.has(name)) add('request-property-became-required', at);
      out.push(...this.compare(dir, at, os, ns));
    }
    for (const name of n.properties.keys()) {
      if (o.properties.has(name)) continue;
      if (dir === 'request' && n.required.has(name)) add('request-property-added-required', `${where}.${name}`);
    }
    if (dir === 'request' && n.additionalFalse && !o.additionalFalse) add('request-additional-properties-refused', where);

    // Arrays.
    if (o.items !== undefined && n.items !== undefined) out.push(...this.compare(dir, `${where}[]`, o.items, n.items));
    return out;
  }

  private flatten(doc: Json, node: unknown): Flat {
    const flat: Flat = {
      types: undefined,
      properties: new Map(),
      required: new Set(),
      additionalFalse: false,
      items: undefined,
      enum: undefined,
      const: undefined,
      format: undefined,
      pattern: undefined,
      bounds: {},
      alternatives: undefined,
    };
    this.mergeInto(doc, flat, node, 0);
    return flat;
  }

  private mergeInto(doc: Json, flat: Flat, node: unknown, depth: number): void {
    if (depth > 32) return;
    if (node === true || node === undefined) return;
    const s = this.resolve(doc, node);
    for (const part of (s.allOf as unknown[]) ?? []) this.mergeInto(doc, flat, part, depth + 1);
    if (s.type !== undefined) {
      const t = new Set(Array.isArray(s.type) ? (s.type as string[]) : [s.type as string]);
      flat.types = flat.types ? new Set([...flat.types].filter((x) => t.has(x) || (x === 'integer' && t.has('number')))) : t;
    }
    if (s.properties && typeof s.properties === 'object') {
      for (const [k, v] of Object.entries(s.properties as Json)) {
        const had = flat.properties.get(k);
        flat.properties.set(k, had === undefined ? v : { allOf: [had, v] });
      }
    }
    for (const r of (s.required as string[]) ?? []) flat.required.add(r);
    if (s.additionalProperties === false || s.unevaluatedProperties === false) flat.additionalFalse = true;
    if (s.items !== undefined) flat.items = flat.items === undefined ? s.items : { allOf: [flat.items, s.items] };
    if (Array.isArray(s.enum)) flat.enum = flat.enum ? flat.enum.filter((v) => (s.enum as unknown[]).some((w) => same(v, w))) : [...(s.enum as unknown[])];
    if ('const' in s) flat.const = { value: s.const };
    if (typeof s.format === 'string') flat.format = s.format;
    if (typeof s.pattern === 'string') flat.pattern = s.pattern;
    for (const k of LOWER_BOUNDS) if (typeof s[k] === 'number') flat.bounds[k] = Math.max(flat.bounds[k] ?? -Infinity, s[k]);
    for (const k of UPPER_BOUNDS) if (typeof s[k] === 'number') flat.bounds[k] = Math.min(flat.bounds[k] ?? Infinity, s[k]);
    const alts = (s.oneOf ?? s.anyOf) as unknown[] | undefined;
    if (Array.isArray(alts)) flat.alternatives = alts;
  }
}

interface Op {
  path: string;
  method: string;
  op: Json;
  shared: unknown[];
}

/** Operations by method and path template with parameter names blanked (`/x/{id}` = `/x/{keyId}`). */
function operations(doc: Json): Map<string, Op> {
  const out = new Map<string, Op>();
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      out.set(`${method} ${path.replace(/\{[^}]+\}/g, '{}')}`, { path, method, op, shared: (item.parameters as unknown[]) ?? [] });
    }
  }
  return out;
}

function best(tries: BreakingChange[][]): string {
  const fewest = [...tries].sort((a, b) => a.length - b.length)[0] ?? [];
  return fewest.map((c) => c.id).join('; ');
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function typesText(t: Set<string> | undefined): string {
  return t ? [...t].sort().join('|') : 'any';
}
