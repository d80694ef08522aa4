/**
 * fast-check arbitraries from the JSON Schemas (2020-12, OpenAPI 3.1's dialect) of the served
 * OpenAPI document: what an integrator's tool may send when it believes the document.
 *
 * A small converter of our own: json-schema-faker has no fast-check backend (it draws with its own
 * random source, so no seeds, no `fc.sample`), and the keywords the document uses are few. Every
 * value is drawn from the schema's own constraints (type, enum/const, format, pattern through
 * `fc.stringMatching`, bounds, lengths, required/optional, oneOf/anyOf/allOf, `$ref`, closed
 * objects); whatever the converter cannot express exactly (a `not`, overlapping `oneOf` branches,
 * a pattern combined with lengths) is caught by the Ajv check of the request (requests.ts), which
 * decides what counts as document-valid. Generation is deliberately within the document, not beyond
 * it: the fuzzer asks "does the server accept what the document allows?".
 *
 * One deliberate narrowing: URLs (`format: uri`/`url`, and string properties named `…url`/`…Url`)
 * are drawn on loopback (`LOOPBACK_URL_BASE`), because the stack really delivers webhooks and the
 * tests may send traffic to this machine only.
 */
import fc from 'fast-check';

type Json = Record<string, any>;

export interface ArbitraryOptions {
  /** The whole document, for `#/...` references. */
  doc: Json;
  /** Base of every generated URL (a loopback sink), e.g. `http://127.0.0.1:4567/hook`. */
  urlBase: string;
  /**
   * Values to offer, some of the time, for a property or parameter of this name (ids of real
   * resources, so a path can hit something that exists). Drawn beside the schema's own values.
   */
  seeds?: (name: string) => unknown[] | undefined;
}

const MAX_DEPTH = 8;
/** Printable text with Spanish letters: the common case an integrator sends. */
const SPANISH = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 áéíóúñÁÉÍÓÚÑüÜ.,-_@#/()';

export function resolveRef(doc: Json, schema: Json): Json {
  let s = schema;
  for (let i = 0; i < 32 && s && typeof s.$ref === 'string'; i++) {
    const ref: string = s.$ref;
    if (!ref.startsWith('#/')) throw new Error(`only local references are supported: ${ref}`);
    const target = ref
      .slice(2)
      .split('/')
      .reduce((o: any, k) => o?.[decodeURIComponent(k).replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    if (target === undefined) throw new Error(`unresolvable reference ${ref}`);
    // Sibling keywords beside a $ref (2020-12 allows them) apply too.
    const { $ref: _ignored, ...siblings } = s;
    s = Object.keys(siblings).length ? { allOf: [target, siblings] } : target;
  }
  return s;
}

/** allOf flattened into one schema (properties and required merged, the tightest bounds kept). */
function mergeAllOf(doc: Json, schema: Json): Json {
  if (!Array.isArray(schema.allOf)) return schema;
  const { allOf, ...rest } = schema;
  let out: Json = { ...rest };
  for (const part of allOf as Json[]) {
    const p = mergeAllOf(doc, resolveRef(doc, part));
    out = mergeTwo(out, p);
  }
  return out;
}

function mergeTwo(a: Json, b: Json): Json {
  const out: Json = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (out[k] === undefined) out[k] = v;
    else if (k === 'properties') out.properties = { ...out.properties, ...v };
    else if (k === 'required') out.required = [...new Set([...out.required, ...v])];
    else if (k === 'minimum' || k === 'minLength' || k === 'minItems' || k === 'exclusiveMinimum') out[k] = Math.max(out[k], v);
    else if (k === 'maximum' || k === 'maxLength' || k === 'maxItems' || k === 'exclusiveMaximum') out[k] = Math.min(out[k], v);
    else if (k === 'enum') out.enum = (out.enum as unknown[]).filter((x) => (v as unknown[]).some((y) => JSON.stringify(y) === JSON.stringify(x)));
    else if (k === 'additionalProperties' && (v === false || out[k] === false)) out[k] = false;
    else if (k === 'oneOf' || k === 'anyOf') out.allOf = [...(out.allOf ?? []), { [k]: v }];
    else out[k] = v;
  }
  return out;
}

/**
 * One branch of a oneOf/anyOf drawn so that it matches that branch alone: a property another branch
 * requires (and this one does not) is left out ("exactly one of destination or targetAnchorHandle"
 * written as branches of `required`).
 */
function exclusive(merged: Json, doc: Json, branches: Json[], index: number): Json {
  if (!merged.properties) return merged;
  const own = new Set<string>(merged.required ?? []);
  const others = branches.flatMap((b, j) => (j === index ? [] : ((resolveRef(doc, b).required ?? []) as string[])));
  const drop = others.filter((k) => !own.has(k));
  if (!drop.length) return merged;
  const properties = { ...merged.properties };
  for (const k of drop) delete properties[k];
  return { ...merged, properties };
}

const isUrlName = (name: string | undefined) => !!name && /url$/i.test(name);

export class SchemaArbitraries {
  constructor(private readonly o: ArbitraryOptions) {}

  /** An arbitrary of the values the schema allows (`name`: the property or parameter it belongs to). */
  of(schema: Json | boolean | undefined, name?: string, depth = 0): fc.Arbitrary<unknown> {
    const own = this.fromSchema(schema, name, depth);
    const seeds = name ? this.o.seeds?.(name) : undefined;
    return seeds?.length ? fc.oneof({ arbitrary: fc.constantFrom(...seeds), weight: 2 }, { arbitrary: own, weight: 1 }) : own;
  }

  private fromSchema(raw: Json | boolean | undefined, name: string | undefined, depth: number): fc.Arbitrary<unknown> {
    if (raw === undefined || raw === true) return this.anyJson(depth);
    if (raw === false) throw new Error('schema false: no value is allowed');
    let schema = resolveRef(this.o.doc, raw);
    schema = mergeAllOf(this.o.doc, schema);
    if (schema.allOf) {
      // allOf of oneOf/anyOf groups (after merging): draw from the first group's branches merged with the rest.
      const { allOf, ...rest } = schema;
      const group = (allOf as Json[])[0]!;
      const branches: Json[] = group.oneOf ?? group.anyOf;
      const remaining = (allOf as Json[]).slice(1);
      return fc.oneof(
        ...branches.map((b, i) =>
          this.fromSchema(
            exclusive(mergeAllOf(this.o.doc, { allOf: [rest, resolveRef(this.o.doc, b), ...remaining] }), this.o.doc, branches, i),
            name,
            depth + 1,
          ),
        ),
      );
    }
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    const branches: Json[] | undefined = schema.oneOf ?? schema.anyOf;
    if (branches) {
      const { oneOf: _o, anyOf: _a, ...rest } = schema;
      const base = Object.keys(rest).filter((k) => !['description', 'title', 'discriminator', 'examples', 'example'].includes(k)).length ? rest : {};
      return fc.oneof(
        ...branches.map((b, i) =>
          this.fromSchema(exclusive(mergeAllOf(this.o.doc, { allOf: [base, resolveRef(this.o.doc, b)] }), this.o.doc, branches, i), name, depth + 1),
        ),
      );
    }
    const type = schema.type ?? inferType(schema);
    if (Array.isArray(type)) return fc.oneof(...type.map((t: string) => this.typed({ ...schema, type: t }, t, name, depth)));
    if (type === undefined) return this.anyJson(depth);
    return this.typed(schema, type, name, depth);
  }

  private typed(schema: Json, type: string, name: string | undefined, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return integerOf(schema);
      case 'number':
        return numberOf(schema);
      case 'string':
        return this.stringOf(schema, name);
      case 'array':
        return this.arrayOf(schema, name, depth);
      case 'object':
        return this.objectOf(schema, depth);
      default:
        throw new Error(`unknown type ${type}`);
    }
  }

  private stringOf(schema: Json, name: string | undefined): fc.Arbitrary<string> {
    const minLength: number = schema.minLength ?? 0;
    const maxLength: number | undefined = schema.maxLength;
    const fits = (s: string) => [...s].length >= minLength && (maxLength === undefined || [...s].length <= maxLength);
    const format: string | undefined = schema.format;
    if (format === 'uri' || format === 'url' || format === 'uri-reference' || isUrlName(name)) {
      return fc
        .array(fc.stringMatching(/^[a-z0-9-]{1,12}$/), { maxLength: 3 })
        .map((segments) => [this.o.urlBase, ...segments].join('/'))
        .filter(fits);
    }
    let re: RegExp | undefined;
    if (typeof schema.pattern === 'string') {
      try {
        re = new RegExp(schema.pattern, 'u');
      } catch {
        re = undefined;
      }
    }
    const byFormat = format ? formatArbitrary(format) : undefined;
    // A known format is drawn as such (a date's pattern alone would give 2024-19-45), then held to the pattern.
    if (byFormat) return byFormat.filter((s) => fits(s) && (!re || re.test(s)));
    if (re) {
      try {
        const size = maxLength !== undefined && maxLength <= 40 ? 'small' : 'medium';
        return fc.stringMatching(re, { size }).filter(fits);
      } catch {
        /* a construct fast-check cannot draw from: fall through, the Ajv check sorts it out */
      }
    }
    const max = Math.min(maxLength ?? Math.max(minLength + 24, 24), minLength + 200);
    return fc.oneof(
      { arbitrary: fc.string({ unit: fc.constantFrom(...SPANISH), minLength, maxLength: max }), weight: 4 },
      { arbitrary: fc.string({ unit: 'grapheme', minLength, maxLength: max }).filter(fits), weight: 1 },
    );
  }

  private arrayOf(schema: Json, name: string | undefined, depth: number): fc.Arbitrary<unknown[]> {
    const minLength: number = schema.minItems ?? 0;
    const maxLength: number = Math.min(schema.maxItems ?? minLength + 4, minLength + 6);
    if (depth > MAX_DEPTH) return fc.constant(Array.from({ length: minLength }, () => null));
    const items = this.of(schema.items, name, depth + 1);
    return schema.uniqueItems ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) }) : fc.array(items, { minLength, maxLength });
  }

  private objectOf(schema: Json, depth: number): fc.Arbitrary<Record<string, unknown>> {
    const properties: Json = schema.properties ?? {};
    const required: string[] = schema.required ?? [];
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [key, sub] of Object.entries<Json>(properties)) {
      // Beyond the depth bound only what is required is drawn.
      if (depth > MAX_DEPTH && !required.includes(key)) continue;
      model[key] = this.of(sub, key, depth + 1);
    }
    for (const key of required) if (!(key in model)) model[key] = this.anyJson(depth + 1);
    let arb: fc.Arbitrary<Record<string, unknown>> = fc.record(model, { requiredKeys: required.filter((k) => k in model) });
    const min: number = schema.minProperties ?? 0;
    if (min > 0) arb = arb.filter((o) => Object.keys(o).length >= min);
    return arb;
  }

  private anyJson(depth: number): fc.Arbitrary<unknown> {
    return depth > MAX_DEPTH ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
  }
}

function inferType(schema: Json): string | undefined {
  if (schema.properties || schema.required || 'additionalProperties' in schema) return 'object';
  if (schema.items) return 'array';
  if ('minLength' in schema || 'maxLength' in schema || 'pattern' in schema || 'format' in schema) return 'string';
  if ('minimum' in schema || 'maximum' in schema) return 'number';
  return undefined;
}

function integerOf(schema: Json): fc.Arbitrary<number> {
  let min = schema.minimum ?? Number.MIN_SAFE_INTEGER;
  let max = schema.maximum ?? Number.MAX_SAFE_INTEGER;
  if (typeof schema.exclusiveMinimum === 'number') min = Math.max(min, Math.floor(schema.exclusiveMinimum) + 1);
  if (typeof schema.exclusiveMaximum === 'number') max = Math.min(max, Math.ceil(schema.exclusiveMaximum) - 1);
  min = Math.max(Math.ceil(min), Number.MIN_SAFE_INTEGER);
  max = Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER);
  const m: number | undefined = schema.multipleOf;
  if (m && Number.isInteger(m) && m > 1) return fc.integer({ min: Math.ceil(min / m), max: Math.floor(max / m) }).map((k) => k * m);
  // Small values and the bounds are where servers disagree with documents: weight them.
  const small = fc.integer({ min: Math.max(min, Math.min(max, -1000)), max: Math.min(max, Math.max(min, 1000)) });
  return fc.oneof({ arbitrary: fc.integer({ min, max }), weight: 2 }, { arbitrary: small, weight: 2 }, { arbitrary: fc.constantFrom(min, max), weight: 1 });
}

function numberOf(schema: Json): fc.Arbitrary<number> {
  const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : -1e12;
  const max = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum : 1e12;
  const m = schema.multipleOf;
  if (typeof m === 'number' && m > 0) {
    // A decimal step (0.01: two decimals): k steps, written with the step's decimals so 1.15 is 1.15, not 1.1500000000000001.
    const decimals = Math.max(0, -Math.floor(Math.log10(m)));
    const lo = Math.ceil(min / m) + (typeof schema.exclusiveMinimum === 'number' && Math.ceil(min / m) * m === min ? 1 : 0);
    const hi = Math.floor(max / m) - (typeof schema.exclusiveMaximum === 'number' && Math.floor(max / m) * m === max ? 1 : 0);
    return fc.integer({ min: lo, max: hi }).map((k) => Number((k * m).toFixed(decimals)));
  }
  return fc.double({
    min,
    max,
    noNaN: true,
    noDefaultInfinity: true,
    minExcluded: typeof schema.exclusiveMinimum === 'number',
    maxExcluded: typeof schema.exclusiveMaximum === 'number',
  });
}

/** RFC 3339 date-times, with `Z` or a numeric offset, around now. */
function dateTime(): fc.Arbitrary<string> {
  const now = Date.now();
  const year = 365 * 24 * 3600 * 1000;
  return fc
    .tuple(
      fc.date({ min: new Date(now - 3 * year), max: new Date(now + year), noInvalidDate: true }),
      fc.constantFrom('Z', '+00:00', '-05:00', '+01:00'),
      fc.boolean(),
    )
    .map(([d, offset, millis]) => {
      const shift = offset === 'Z' ? 0 : (offset[0] === '-' ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
      const local = new Date(d.getTime() + shift * 60_000).toISOString();
      const body = millis ? local.slice(0, 23) : local.slice(0, 19);
      return `${body}${offset}`;
    });
}

function formatArbitrary(format: string): fc.Arbitrary<string> | undefined {
  switch (format) {
    case 'uuid':
      return fc.uuid({ version: [1, 2, 3, 4, 5, 7] });
    case 'date-time':
      return dateTime();
    case 'date':
      return dateTime().map((s) => s.slice(0, 10));
    case 'time':
      return dateTime().map((s) => s.slice(11));
    case 'email':
      // fast-check's own emailAddress() is RFC-wide and slow to draw (seconds per 30 values here): addresses as people have them.
      return simpleEmail();
    case 'ipv4':
      return fc.ipV4();
    case 'ipv6':
      return fc.ipV6();
    case 'int64':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
    default:
      return undefined;
  }
}

function simpleEmail(): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9+_-]{0,12}(\.[A-Za-z0-9_-]{1,8})?$/),
      fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/),
      fc.constantFrom('com', 'co', 'com.co', 'org', 'example'),
    )
    .map(([local, host, tld]) => `${local}@${host}.${tld}`);
}
