/**
 * Every answer the e2e suites receive from the gateway is checked against the OpenAPI document the
 * gateway itself serves (GET /openapi.json), so the document and the answers cannot drift apart:
 * the operation must exist for the method and the concrete path (matched against the path
 * templates), the status must be declared (or `default`), the content type must be declared, a
 * JSON body must validate against the declared schema (Ajv, JSON Schema 2020-12 = OpenAPI 3.1's
 * dialect; the whole document is registered so `#/components/...` references resolve), and headers
 * the document marks `required` must be there (any declared header present must match its schema).
 *
 * What the gateway answers before an operation is chosen is declared in the document too, under
 * `x-responses-before-routing`: `unrouted` (no operation serves the method and path) and, only for
 * requests a test deliberately sends as broken HTTP (`malformedHttp`), `protocol` (refused by the
 * HTTP server itself: bad header bytes, a header block too large, a request too slow).
 *
 * The document is fetched once per gateway. Each checked answer is also tallied by operation, so a
 * run can say which operations no test ever saw answer 2xx (openapi-coverage.setup.mjs, .teardown.mjs).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, any>;

/** One request and its answer, as a test saw it. */
export interface Exchange {
  method: string;
  /** As sent: the path, with any query string. */
  path: string;
  status: number;
  headers: Headers;
  /** The body as text; undefined when the caller did not read it as text (binary: only status and content type are checked). */
  text?: string;
  /** The request body as sent, when it was text (kept as a candidate example by the record mode, see ExampleRecorder). */
  request?: { contentType?: string | undefined; text: string };
}

export interface CheckOptions {
  /**
   * The request was deliberately broken HTTP (raw bytes a client library would refuse to send):
   * the HTTP server's own refusals (`x-responses-before-routing.protocol`) are acceptable answers too.
   */
  malformedHttp?: boolean;
  /** Where the document is served when `baseUrl` does not serve it (the production admin listener serves /admin only). */
  documentFrom?: string;
}

export class UndocumentedResponseError extends Error {
  constructor(
    readonly exchange: Exchange,
    readonly problems: string[],
  ) {
    const pathname = exchange.path.split('?')[0];
    const excerpt = exchange.text === undefined ? '(not read as text)' : JSON.stringify(exchange.text.slice(0, 600)) + (exchange.text.length > 600 ? '…' : '');
    super(
      [
        `${exchange.method.toUpperCase()} ${pathname} → ${exchange.status} ${exchange.headers.get('content-type') ?? '(no content type)'}: not what GET /openapi.json declares`,
        ...problems.map((p) => `  - ${p}`),
        `  body: ${excerpt}`,
      ].join('\n'),
    );
    this.name = 'UndocumentedResponseError';
  }
}

const DOC_ID = 'https://wallet.test/openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** JSON pointer of a path of keys, percent-encoded for use as a URI fragment. */
function pointer(...keys: string[]): string {
  return keys.map((k) => '/' + encodeURIComponent(k.replace(/~/g, '~0').replace(/\//g, '~1'))).join('');
}

function mediaOf(contentType: string | null): string | undefined {
  return contentType ? contentType.split(';')[0]!.trim().toLowerCase() : undefined;
}

const isJsonMedia = (media: string) => media === 'application/json' || media.endsWith('+json');

interface PathTemplate {
  template: string;
  regex: RegExp;
  params: number;
  literal: number;
}

export interface MatchedOperation {
  method: string;
  template: string;
  operationId: string;
  operation: Json;
  pointer: string;
}

/** The responses the served OpenAPI document declares, compiled once. */
export class OpenApiResponses {
  private readonly ajv: Ajv2020;
  private readonly templates: PathTemplate[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly doc: Json) {
    if (typeof doc?.openapi !== 'string' || !doc.openapi.startsWith('3.1'))
      throw new Error(`not an OpenAPI 3.1 document: openapi=${JSON.stringify(doc?.openapi)}`);
    // strictSchema stays on (an unknown keyword in a schema is an error), except OpenAPI's own annotations.
    this.ajv = addFormats(
      // multipleOfPrecision: a decimal step (0.01) checked as decimals, not as binary floats (1.15 / 0.01 = 114.99999999999999).
      new Ajv2020({
        allErrors: true,
        strictSchema: true,
        strictTypes: false,
        strictTuples: false,
        strictRequired: false,
        validateFormats: true,
        multipleOfPrecision: 6,
      }),
    );
    this.ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
    // The document is registered whole, as a schema resource whose $id the validators reference;
    // its own top-level fields (and extensions) are not schema keywords.
    const rootFields = ['openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags'];
    this.ajv.addVocabulary([...rootFields, ...Object.keys(doc).filter((k) => k.startsWith('x-'))]);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
    this.templates = Object.keys(doc.paths ?? {})
      .map((template) => {
        const parts = template.split(/\{[^}]+\}/);
        const source = parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+');
        return { template, regex: new RegExp(`^${source}$`), params: parts.length - 1, literal: parts.join('').length };
      })
      // The most specific template first: fewest parameters, then the longest literal text.
      .sort((a, b) => a.params - b.params || b.literal - a.literal);
  }

  /** Every operation of the document, as `METHOD /template` → operationId. */
  operations(): Array<{ key: string; operationId: string }> {
    const out: Array<{ key: string; operationId: string }> = [];
    for (const [path, item] of Object.entries<Json>(this.doc.paths ?? {})) {
      for (const m of METHODS) if (item[m]) out.push({ key: `${m.toUpperCase()} ${path}`, operationId: item[m].operationId ?? `${m.toUpperCase()} ${path}` });
    }
    return out;
  }

  /** The operation serving a method and a concrete path (query string ignored); HEAD is served by GET. */
  match(method: string, path: string): MatchedOperation | undefined {
    const m = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const pathname = path.split('?')[0]!.split('#')[0]!;
    for (const t of this.templates) {
      if (!t.regex.test(pathname)) continue;
      const operation = this.doc.paths[t.template]?.[m];
      if (!operation) continue;
      return {
        method: m.toUpperCase(),
        template: t.template,
        operationId: operation.operationId ?? `${m.toUpperCase()} ${t.template}`,
        operation,
        pointer: pointer('paths', t.template, m),
      };
    }
    return undefined;
  }

  /** What is wrong with this answer according to the document (empty: it is a documented answer). */
  problems(x: Exchange, opts: CheckOptions = {}): string[] {
    const op = this.match(x.method, x.path);
    const status = String(x.status);
    const before = this.doc['x-responses-before-routing'] ?? {};
    // The responses this answer may be: the operation's (or, with no operation, the unrouted ones),
    // then for deliberately malformed HTTP the HTTP server's own refusals.
    const candidates: Array<{ value: Json; pointer: string }> = [];
    if (op) {
      const declared = op.operation.responses ?? {};
      const key = [status, `${status[0]}XX`, 'default'].find((k) => declared[k]);
      if (key) candidates.push(this.resolve(declared[key], `${op.pointer}${pointer('responses', key)}`));
    } else if (before.unrouted?.[status]) {
      candidates.push(this.resolve(before.unrouted[status], pointer('x-responses-before-routing', 'unrouted', status)));
    }
    if (opts.malformedHttp && before.protocol?.[status])
      candidates.push(this.resolve(before.protocol[status], pointer('x-responses-before-routing', 'protocol', status)));
    if (candidates.length === 0) {
      return [
        op
          ? `status ${status} is not declared for ${op.operationId} (${op.method} ${op.template}); declared: ${Object.keys(op.operation.responses ?? {}).join(', ')}`
          : `no operation serves ${x.method.toUpperCase()} ${x.path.split('?')[0]}, and ${status} is not an answer the document declares before routing (x-responses-before-routing: ${Object.keys(before.unrouted ?? {}).join(', ') || 'none'})`,
      ];
    }
    let first: string[] | undefined;
    for (const response of candidates) {
      const problems = [...this.headerProblems(x, response), ...this.bodyProblems(x, response)];
      if (problems.length === 0) return [];
      first ??= problems;
    }
    return first!;
  }

  /** Throws UndocumentedResponseError unless the answer is documented. */
  check(x: Exchange, opts: CheckOptions = {}): void {
    const problems = this.problems(x, opts);
    if (problems.length) throw new UndocumentedResponseError(x, problems);
  }

  private headerProblems(x: Exchange, response: { value: Json; pointer: string }): string[] {
    const out: string[] = [];
    for (const [name, raw] of Object.entries<Json>(response.value.headers ?? {})) {
      if (name.toLowerCase() === 'content-type') continue; // ignored by OpenAPI: the content map says it
      const header = this.resolve(raw, `${response.pointer}${pointer('headers', name)}`);
      const value = x.headers.get(name);
      if (value === null) {
        if (header.value.required) out.push(`header ${name} is required and missing`);
        continue;
      }
      if (!header.value.schema) continue;
      const validate = this.validator(`${header.pointer}${pointer('schema')}`);
      const schema = this.resolve(header.value.schema, `${header.pointer}${pointer('schema')}`).value;
      const typed =
        schema.type === 'integer' || schema.type === 'number'
          ? /^-?\d+(\.\d+)?$/.test(value.trim())
            ? Number(value)
            : value
          : schema.type === 'boolean'
            ? value === 'true'
              ? true
              : value === 'false'
                ? false
                : value
            : value;
      if (!validate(typed)) out.push(`header ${name}: ${JSON.stringify(value)} ${formatErrors(validate.errors)}`);
    }
    return out;
  }

  private bodyProblems(x: Exchange, response: { value: Json; pointer: string }): string[] {
    const content: Json | undefined = response.value.content;
    const bodyless = x.method.toUpperCase() === 'HEAD' || x.status === 204 || x.status === 304;
    if (!content || Object.keys(content).length === 0) {
      if (!bodyless && x.text !== undefined && x.text.length > 0) return [`the document declares no body for ${x.status}, the answer has one`];
      if (!bodyless && x.text === undefined && Number(x.headers.get('content-length') ?? 0) > 0)
        return [`the document declares no body for ${x.status}, the answer has one`];
      return [];
    }
    if (bodyless) return [];
    const media = mediaOf(x.headers.get('content-type'));
    if (!media) return [`no Content-Type; declared: ${Object.keys(content).join(', ')}`];
    const declared = Object.keys(content);
    const key =
      declared.find((k) => mediaOf(k) === media) ??
      declared.find((k) => k.endsWith('/*') && media.startsWith(k.slice(0, -1).toLowerCase())) ??
      declared.find((k) => k === '*/*');
    if (!key) return [`content type ${media} is not declared for ${x.status}; declared: ${declared.join(', ')}`];
    if (!isJsonMedia(media)) return [];
    if (x.text === undefined) return ['a JSON answer must be checked with its body text'];
    let body: unknown;
    try {
      body = JSON.parse(x.text);
    } catch {
      return [`the body is not JSON although the content type is ${media}`];
    }
    if (!content[key]?.schema) return [];
    const validate = this.validator(`${response.pointer}${pointer('content', key, 'schema')}`);
    return validate(body) ? [] : [`body does not match ${describeSchema(content[key].schema)}: ${formatErrors(validate.errors)}`];
  }

  /** Follows `$ref`s of response and header objects; returns the object and its JSON pointer. */
  private resolve(value: Json, at: string): { value: Json; pointer: string } {
    let current = value;
    let where = at;
    for (let i = 0; i < 20 && typeof current?.$ref === 'string'; i++) {
      const ref = current.$ref as string;
      if (!ref.startsWith('#/')) throw new Error(`only local references are supported: ${ref}`);
      where = ref
        .slice(2)
        .split('/')
        .map((k) => '/' + encodeURIComponent(decodeURIComponent(k)))
        .join('');
      current = ref
        .slice(2)
        .split('/')
        .reduce((o: any, k) => o?.[decodeURIComponent(k).replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
      if (current === undefined) throw new Error(`unresolvable reference ${ref}`);
    }
    return { value: current, pointer: where };
  }

  private validator(at: string): ValidateFunction {
    let v = this.validators.get(at);
    if (!v) {
      v = this.ajv.compile({ $ref: `${DOC_ID}#${at}` });
      this.validators.set(at, v);
    }
    return v;
  }
}

function describeSchema(schema: Json): string {
  return typeof schema.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : 'the inline schema';
}

function formatErrors(errors: ErrorObject[] | null | undefined): string {
  return (
    (errors ?? [])
      .slice(0, 8)
      .map((e) => {
        const extra =
          e.keyword === 'additionalProperties'
            ? ` (${(e.params as { additionalProperty: string }).additionalProperty})`
            : e.keyword === 'enum'
              ? ` (${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)})`
              : e.keyword === 'const'
                ? ` (${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)})`
                : '';
        return `${e.instancePath || '(root)'} ${e.message}${extra}`;
      })
      .join('; ') + ((errors?.length ?? 0) > 8 ? `; … ${errors!.length - 8} more` : '')
  );
}

// ---- One document per gateway ----------------------------------------------------------------

const byGateway = new Map<string, Promise<OpenApiResponses>>();
/** Compiled once per document text: gateways started side by side serve the same document. */
const byText = new Map<string, OpenApiResponses>();

/** The document served by the gateway at `baseUrl`, fetched and compiled once (its own answer is checked too). */
export function servedDocument(baseUrl: string): Promise<OpenApiResponses> {
  let p = byGateway.get(baseUrl);
  if (!p) {
    p = (async () => {
      const res = await fetch(`${baseUrl}/openapi.json`);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET ${baseUrl}/openapi.json → ${res.status}: ${text.slice(0, 300)}`);
      let doc = byText.get(text);
      if (!doc) {
        doc = new OpenApiResponses(JSON.parse(text));
        byText.set(text, doc);
      }
      const self: Exchange = { method: 'GET', path: '/openapi.json', status: res.status, headers: res.headers, text };
      doc.check(self);
      coverage.record(doc, self);
      return doc;
    })();
    byGateway.set(baseUrl, p);
    p.catch(() => byGateway.delete(baseUrl));
  }
  return p;
}

/** Checks one answer of the gateway at `baseUrl` against the document it serves; throws when undocumented. */
export async function checkDocumented(baseUrl: string, x: Exchange, opts: CheckOptions = {}): Promise<void> {
  const doc = await servedDocument(opts.documentFrom ?? baseUrl);
  doc.check(x, opts);
  coverage.record(doc, x);
  if (!opts.malformedHttp) examples.record(doc, x);
}

/**
 * fetch, for tests that need the Response itself (binary bodies, streams): the answer is checked
 * (a JSON body through a clone, so the caller can still read it) before it is returned.
 */
export async function fetchDocumented(url: string, init: RequestInit = {}, opts: CheckOptions = {}): Promise<Response> {
  const u = new URL(url);
  const res = await fetch(url, init);
  const media = mediaOf(res.headers.get('content-type'));
  const text = media && (isJsonMedia(media) || media.startsWith('text/')) ? await res.clone().text() : undefined;
  const request = typeof init.body === 'string' ? { contentType: new Headers(init.headers).get('content-type') ?? undefined, text: init.body } : undefined;
  await checkDocumented(
    u.origin,
    { method: init.method ?? 'GET', path: `${u.pathname}${u.search}`, status: res.status, headers: res.headers, text, ...(request ? { request } : {}) },
    opts,
  );
  return res;
}

/**
 * Checks the answer to a raw HTTP/1.1 request (support/raw-http.ts): deliberately broken HTTP, so the
 * HTTP server's own refusals count as documented answers too. A connection closed without an
 * answer has nothing to check (the test asserts on that itself).
 */
export async function checkRawDocumented(baseUrl: string, head: string, r: { status: number | undefined; headers: Headers; body: string }): Promise<void> {
  if (r.status === undefined) return;
  const { method, path } = requestLineOf(head);
  await checkDocumented(baseUrl, { method, path, status: r.status, headers: r.headers, text: r.body }, { malformedHttp: true });
}

/** Method and path of a raw HTTP/1.1 request head (`GET /x HTTP/1.1\r\n…`). */
export function requestLineOf(head: string): { method: string; path: string } {
  const m = /^([A-Z]+) (\S+) HTTP\/1\.[01]\r\n/.exec(head);
  if (!m) throw new Error(`not an HTTP/1.1 request head: ${JSON.stringify(head.slice(0, 80))}`);
  return { method: m[1]!, path: m[2]! };
}

// ---- Coverage tally ----------------------------------------------------------------------------

/**
 * Operations answered per status, for this process; when OPENAPI_COVERAGE_DIR is set (by the Jest
 * global setup) each new (operation, status) is appended to a file there, so the global teardown
 * can list the operations that no test saw answer 2xx in the whole run.
 */
class CoverageTally {
  readonly seen = new Map<string, Set<number>>();
  private listed = false;

  record(doc: OpenApiResponses, x: Exchange): void {
    const dir = process.env.OPENAPI_COVERAGE_DIR;
    if (dir && !this.listed) {
      this.listed = true;
      try {
        writeFileSync(join(dir, 'operations.json'), JSON.stringify(doc.operations()));
      } catch {
        /* coverage is best effort */
      }
    }
    const operationId = doc.match(x.method, x.path)?.operationId;
    const status = x.status;
    if (!operationId) return;
    const statuses = this.seen.get(operationId) ?? new Set<number>();
    if (statuses.has(status)) return;
    statuses.add(status);
    this.seen.set(operationId, statuses);
    if (dir) {
      try {
        appendFileSync(join(dir, `seen-${process.pid}.jsonl`), `${JSON.stringify({ operationId, status })}\n`);
      } catch {
        /* best effort */
      }
    }
  }
}

export const coverage = new CoverageTally();

// ---- Recorded examples -------------------------------------------------------------------------

/** Candidates kept per operation, status and test file in one process (the first ones seen). */
const CANDIDATES_PER_FILE = 3;
/** Answers longer than this (as text) are not kept. */
const MAX_EXAMPLE_TEXT = 64 * 1024;
/** Arrays in a recorded body are cut to this many items (list answers stay small). */
const ARRAY_ITEMS = 2;

/** Cuts every array to its first items, at any depth. */
export function trimArrays(value: unknown, max = ARRAY_ITEMS): unknown {
  if (Array.isArray(value)) return value.slice(0, max).map((v) => trimArrays(v, max));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, trimArrays(v, max)]));
  return value;
}

/**
 * With OPENAPI_RECORD_EXAMPLES=<dir> (test/scripts/record-examples.mjs), each checked answer with a
 * JSON body is a candidate example for its operation and status, written to
 * `<dir>/examples-<pid>.jsonl` with the test file that saw it; a 2xx answer also carries the JSON
 * request body the test sent. The script picks one per operation and status, redacts the secrets
 * and writes gateway/src/openapi/examples.json, so the document's examples are real answers.
 */
class ExampleRecorder {
  private readonly kept = new Map<string, number>();

  record(doc: OpenApiResponses, x: Exchange): void {
    const dir = process.env.OPENAPI_RECORD_EXAMPLES;
    if (!dir) return;
    const op = doc.match(x.method, x.path);
    if (!op) return;
    const media = mediaOf(x.headers.get('content-type'));
    let response: unknown;
    // A body this large is a whole document (GET /openapi.json), not an example.
    if (media && isJsonMedia(media) && x.text && x.text.length <= MAX_EXAMPLE_TEXT) {
      try {
        response = trimArrays(JSON.parse(x.text));
      } catch {
        response = undefined;
      }
    }
    let request: unknown;
    const requestMedia = mediaOf(x.request?.contentType ?? null);
    if (x.status >= 200 && x.status < 300 && x.request && requestMedia && isJsonMedia(requestMedia)) {
      try {
        request = JSON.parse(x.request.text);
      } catch {
        request = undefined;
      }
    }
    if (response === undefined && request === undefined) return;
    const testPath = (globalThis as { expect?: { getState?: () => { testPath?: string } } }).expect?.getState?.().testPath;
    const file = testPath ? basename(testPath) : '';
    const key = `${op.operationId} ${x.status} ${file}`;
    const n = this.kept.get(key) ?? 0;
    if (n >= CANDIDATES_PER_FILE) return;
    this.kept.set(key, n + 1);
    const line = {
      operationId: op.operationId,
      status: x.status,
      media,
      file,
      n,
      ...(response !== undefined ? { response } : {}),
      ...(request !== undefined ? { request } : {}),
    };
    try {
      appendFileSync(join(dir, `examples-${process.pid}.jsonl`), `${JSON.stringify(line)}\n`);
    } catch {
      /* recording is best effort: the script reports what it has */
    }
  }
}

export const examples = new ExampleRecorder();
