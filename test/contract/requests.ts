/**
 * Requests generated from the served OpenAPI document, one arbitrary per operation: path
 * parameters, declared query parameters and headers, and the JSON request body, each drawn from its
 * schema (arbitraries.ts). Every drawn request is then checked against the same schemas with Ajv
 * (JSON Schema 2020-12, the document registered whole so `$ref`s resolve): only a request the
 * document allows counts as document-valid.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { resolveRef, SchemaArbitraries, type ArbitraryOptions } from './arbitraries.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
type Json = Record<string, any>;

const DOC_ID = 'https://wallet.test/contract-fuzz/openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

export interface Operation {
  operationId: string;
  method: string;
  template: string;
  /** Names of the security schemes that may authorize it (any one of them). */
  security: string[];
  parameters: Json[];
  /** The JSON body's schema, when it takes one. */
  bodySchema?: Json;
  bodyRequired: boolean;
  /** Its request body is of a media type the fuzzer does not draw (multipart, CSV). */
  nonJsonBody?: string;
  pointer: string;
}

export interface FuzzRequest {
  operationId: string;
  method: string;
  template: string;
  path: string;
  pathParams: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body?: unknown;
}

export interface Invalid {
  where: string;
  errors: string;
}

/** JSON pointer (URI fragment) of a list of keys. */
export function pointer(...keys: string[]): string {
  return keys.map((k) => '/' + encodeURIComponent(k.replace(/~/g, '~0').replace(/\//g, '~1'))).join('');
}

/** Every operation of the document. */
export function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op: Json | undefined = item[method];
      if (!op) continue;
      const params = new Map<string, Json>();
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
        const r = resolveRef(doc, p);
        params.set(`${r.in}:${r.name}`, r);
      }
      const content: Json = op.requestBody ? (resolveRef(doc, op.requestBody).content ?? {}) : {};
      const json = Object.keys(content).find((k) => k.split(';')[0]!.trim() === 'application/json');
      const other = Object.keys(content).find((k) => k !== json);
      out.push({
        operationId: op.operationId ?? `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        security: (op.security ?? doc.security ?? []).flatMap((req: Json) => Object.keys(req)),
        parameters: [...params.values()],
        bodySchema: json ? content[json].schema : undefined,
        bodyRequired: !!(op.requestBody && resolveRef(doc, op.requestBody).required),
        nonJsonBody: !json && other ? other : undefined,
        pointer: pointer('paths', template, method),
      });
    }
  }
  return out;
}

/** Serializes a parameter value the way OpenAPI's default styles do (simple for path/header, form for query). */
function serialize(value: unknown): string {
  if (value === null) return '';
  if (typeof value === 'object') return Array.isArray(value) ? value.map(serialize).join(',') : JSON.stringify(value);
  return String(value);
}

export class RequestFactory {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    readonly doc: Json,
    private readonly urlBase: string,
  ) {
    this.ajv = addFormats(new Ajv2020({ allErrors: true, strict: false, validateFormats: true, multipleOfPrecision: 6 }));
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
  }

  /**
   * An arbitrary of requests to this operation (`seeds`: real ids offered for a parameter or property
   * name, read now). Headers the tests set themselves (authorization,
   * content type) are left out; a declared header whose drawn value cannot travel in HTTP is redrawn.
   */
  arbitrary(op: Operation, seeds?: ArbitraryOptions['seeds']): fc.Arbitrary<FuzzRequest> {
    const arbs = new SchemaArbitraries({ doc: this.doc, urlBase: this.urlBase, seeds });
    const pick = (where: string) => op.parameters.filter((p) => p.in === where && !(where === 'header' && /^(authorization|content-type)$/i.test(p.name)));
    const group = (params: Json[]) => {
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const p of params) {
        // An opaque paging cursor is one a listing returned (the document says so in prose; no
        // schema can): drawn from the cursors earlier answers gave, or left out.
        if (p.in === 'query' && p.name === 'cursor') {
          const known = seeds?.(`cursor ${op.template}`) ?? [];
          model[p.name] = known.length ? fc.constantFrom(...known) : fc.constant(undefined);
        } else model[p.name] = arbs.of(p.schema ?? {}, p.name);
      }
      return fc.record(model, { requiredKeys: params.filter((p) => p.required || p.in === 'path').map((p) => p.name) });
    };
    const body: fc.Arbitrary<unknown> = op.bodySchema
      ? op.bodyRequired
        ? arbs.of(op.bodySchema)
        : fc.option(arbs.of(op.bodySchema), { nil: undefined, freq: 5 })
      : fc.constant(undefined);
    return fc
      .record({ path: group(pick('path')), query: group(pick('query')), header: group(pick('header')), body })
      .filter(({ header }) => Object.values(header).every((v) => /^[\t\x20-\x7e]*$/.test(serialize(v)) && serialize(v).trim() === serialize(v)))
      .map(({ path, query, header, body }) => {
        const concrete = op.template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(serialize(path[name])));
        const search = new URLSearchParams();
        for (const [k, v] of Object.entries(query)) {
          if (v === undefined) continue;
          if (Array.isArray(v)) for (const item of v) search.append(k, serialize(item));
          else search.append(k, serialize(v));
        }
        const qs = search.toString();
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(header)) if (v !== undefined) headers[k] = serialize(v);
        return {
          operationId: op.operationId,
          method: op.method,
          template: op.template,
          path: qs ? `${concrete}?${qs}` : concrete,
          pathParams: path,
          query,
          headers,
          ...(body === undefined ? {} : { body }),
        };
      });
  }

  /** Why the document does not allow this request (empty: it does). */
  invalid(op: Operation, r: FuzzRequest): Invalid[] {
    const out: Invalid[] = [];
    for (const p of op.parameters) {
      const bag = p.in === 'path' ? r.pathParams : p.in === 'query' ? r.query : p.in === 'header' ? r.headers : undefined;
      if (!bag) continue;
      const value = bag[p.name];
      if (value === undefined) {
        if (p.required && !(p.in === 'header' && /^(authorization|content-type)$/i.test(p.name))) out.push({ where: `${p.in}.${p.name}`, errors: 'required' });
        continue;
      }
      if (!p.schema) continue;
      // Headers travel as text; a typed header schema is checked on the text converted back.
      const v = this.validator(p.schema, `${p.in}.${p.name}`);
      if (!v(value)) out.push({ where: `${p.in}.${p.name}`, errors: formatErrors(v.errors) });
    }
    if (r.body === undefined) {
      if (op.bodyRequired) out.push({ where: 'body', errors: 'required' });
    } else if (op.bodySchema) {
      const v = this.validator(op.bodySchema, `${op.operationId} body`);
      if (!v(r.body)) out.push({ where: 'body', errors: formatErrors(v.errors) });
    }
    return out;
  }

  private validator(schema: Json, key: string): ValidateFunction {
    const cacheKey = JSON.stringify(schema) + key;
    let v = this.validators.get(cacheKey);
    if (!v) {
      v = this.ajv.compile(rebase(schema));
      this.validators.set(cacheKey, v);
    }
    return v;
  }
}

/** A schema taken out of the document, its local references pointed at the registered document. */
function rebase(schema: unknown): any {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (schema && typeof schema === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(schema)) out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOC_ID}${v}` : rebase(v);
    return out;
  }
  return schema;
}

function formatErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 4)
    .map((e) => `${e.instancePath || '(root)'} ${e.message}`)
    .join('; ');
}
