/**
 * The contract fuzzer: requests drawn from the served OpenAPI document (requests.ts), checked with
 * Ajv so only document-valid ones count, sent to a running gateway; every answer must be one the
 * document declares (support/openapi-check.ts), never a 5xx, and a document-valid request must not
 * be refused with 400 (such a refusal means the document allows what the server does not).
 *
 * Path parameters hit real resources some of the time: the ids of every 2xx answer are gathered as
 * the run goes (a created webhook endpoint's id is then offered to GET /webhooks/endpoints/{id}),
 * beside ids the caller seeds. Requests are drawn in rounds, so later rounds see earlier ids.
 */
import fc from 'fast-check';
import { coverage, type OpenApiResponses } from '../support/openapi-check.js';
import { operationsOf, RequestFactory, type FuzzRequest, type Operation } from './requests.js';

type Json = Record<string, any>;

export interface FuzzTarget {
  baseUrl: string;
  /** The served document, compiled for answer checks. */
  responses: OpenApiResponses;
  /** Bearer credential per security scheme (e.g. apiKey → a WRITE key, adminToken → the shared token). */
  credentials: Record<string, string>;
  /** Base of generated URLs (a loopback sink). */
  urlBase: string;
  /** Ids known up front, by pool (see `poolOf`), e.g. '/admin/companies' → [a company id]. */
  seeds?: Record<string, string[]>;
  /** Pools a (path-template, parameter or property name) must never draw from (e.g. the fuzzer's own credentials). */
  exclude?: (op: Operation, name: string) => boolean;
}

export interface FuzzOptions {
  /** Requests to draw in all (spread evenly over the operations). */
  runs: number;
  seed: number;
  concurrency?: number;
  /** Requests drawn per operation per round. */
  roundSize?: number;
  /** Which operations to drive (default: every one a credential authorizes, with a JSON or no body, and the open ones with a JSON body). */
  include?: (op: Operation) => boolean;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface FieldProblem {
  path: string;
  message: string;
}

export interface Refusal {
  operationId: string;
  method: string;
  template: string;
  status: number;
  error?: string;
  fields: FieldProblem[];
  request: FuzzRequest;
}

export interface Failure {
  operationId: string;
  status: number | string;
  problems: string[];
  request: FuzzRequest;
  body: string;
}

export interface FuzzReport {
  seed: number;
  operations: number;
  skippedOperations: Array<{ operationId: string; reason: string }>;
  drawn: number;
  /** Drawn but not valid per the document (the converter's misses; not sent). */
  notDocumentValid: number;
  notDocumentValidSamples: Array<{ operationId: string; where: string; errors: string }>;
  sent: number;
  documentValid: number;
  accepted: number;
  refused: Refusal[];
  serverErrors: Failure[];
  offDocument: Failure[];
  rateLimited: number;
  /** Answers by status per operation, and the milliseconds spent waiting on them (`ms`). */
  byOperation: Record<string, Record<string, number>>;
  elapsedMs: number;
}

/** The operations the fuzzer drives, and why the others are left out. */
export function plan(doc: Json, target: Pick<FuzzTarget, 'credentials'>, include?: (op: Operation) => boolean) {
  const driven: Operation[] = [];
  const skipped: Array<{ operationId: string; reason: string }> = [];
  for (const op of operationsOf(doc)) {
    const scheme = op.security.find((s) => target.credentials[s]);
    // Open operations that take a JSON body (sign-in, invitations) are driven without credentials;
    // the open pages and documents (GET /docs, /dashboard, …) are not API calls.
    const open = op.security.length === 0 && !!op.bodySchema;
    if (open && (!include || include(op))) driven.push(op);
    else if (!scheme) skipped.push({ operationId: op.operationId, reason: `no credential for ${op.security.join(' | ') || 'public'}` });
    else if (op.nonJsonBody && !op.bodySchema) skipped.push({ operationId: op.operationId, reason: `body ${op.nonJsonBody} only` });
    else if (include && !include(op)) skipped.push({ operationId: op.operationId, reason: 'left out by the caller' });
    else driven.push(op);
  }
  return { driven, skipped };
}

/**
 * The pool of ids a path parameter draws from: the template up to the parameter, e.g.
 * '/webhooks/endpoints/{id}/test' → '/webhooks/endpoints'; '/admin/companies/{id}/api-keys/{keyId}' →
 * '/admin/companies/{id}/api-keys'. Some collections are one resource under several paths.
 */
export function poolOf(template: string, param: string): string {
  const at = template.indexOf(`{${param}}`);
  const prefix = template.slice(0, at).replace(/\/$/, '');
  return ALIASES[prefix] ?? prefix;
}

/** Paths whose ids are one collection's (a send creates a transaction, PSE creates a deposit, ...). */
const ALIASES: Record<string, string> = {
  '/transfers/send': '/wallets/transactions',
  '/wallets/deposits': '/deposits',
  '/deposits/pse': '/deposits',
  '/admin/deposits': '/deposits',
  '/admin/collect-keys': '/breb/collect-keys',
  '/breb/collect-keys/qr': 'qrId',
  '/dashboard/batches': '/transfers/batches',
};

/** Body and query properties that name a resource of a pool. */
const PROPERTY_POOLS: Record<string, string> = {
  companyId: '/admin/companies',
  endpointId: '/webhooks/endpoints',
  brebKeyId: '/breb/collect-keys',
  qrId: 'qrId',
};

export class IdPools {
  private readonly pools = new Map<string, string[]>();
  constructor(seeds: Record<string, string[]> = {}) {
    for (const [k, v] of Object.entries(seeds)) for (const id of v) this.add(k, id);
  }
  add(pool: string, id: unknown): void {
    if (typeof id !== 'string' || !id) return;
    const list = this.pools.get(pool) ?? [];
    if (list.includes(id)) return;
    list.push(id);
    if (list.length > 50) list.shift();
    this.pools.set(pool, list);
  }
  get(pool: string): string[] {
    return this.pools.get(pool) ?? [];
  }
  /**
   * Gathers ids from a 2xx answer: on `/x/{id}` the body's `id` is one of `/x`; a POST to a path
   * ending in a name creates one of that path (`/admin/companies/{id}/api-keys`); listed items are
   * of the listing's path; a `qrId` anywhere is a QR's.
   */
  harvest(op: Operation, body: unknown): void {
    if (!body || typeof body !== 'object') return;
    const b = body as Json;
    const alias = (p: string) => ALIASES[p] ?? p;
    if (typeof b.id === 'string') {
      if (op.template.endsWith('}')) this.add(alias(op.template.replace(/\/\{[^}]+\}$/, '')), b.id);
      else if (op.method === 'POST') this.add(alias(op.template), b.id);
    }
    if (typeof b.qrId === 'string') this.add('qrId', b.qrId);
    if (typeof b.nextCursor === 'string') this.add(`cursor ${op.template}`, b.nextCursor);
    for (const value of Object.values(b)) {
      if (!Array.isArray(value)) continue;
      for (const item of value) if (item && typeof item === 'object' && typeof (item as Json).id === 'string') this.add(alias(op.template), (item as Json).id);
    }
  }
}

/** Sends drawn requests to the gateway and sorts every answer. */
export async function runContractFuzz(target: FuzzTarget, opts: FuzzOptions): Promise<FuzzReport> {
  const doc = target.responses.doc;
  const { driven, skipped } = plan(doc, target, opts.include);
  const pools = new IdPools(target.seeds);
  const report: FuzzReport = {
    seed: opts.seed,
    operations: driven.length,
    skippedOperations: skipped,
    drawn: 0,
    notDocumentValid: 0,
    notDocumentValidSamples: [],
    sent: 0,
    documentValid: 0,
    accepted: 0,
    refused: [],
    serverErrors: [],
    offDocument: [],
    rateLimited: 0,
    byOperation: {},
    elapsedMs: 0,
  };
  const started = Date.now();
  const seedsFor = (op: Operation) => (name: string) => {
    if (target.exclude?.(op, name)) return undefined;
    if (name.startsWith('cursor ')) return pools.get(name);
    const param = op.parameters.find((p) => p.in === 'path' && p.name === name);
    const pool = param ? poolOf(op.template, name) : PROPERTY_POOLS[name];
    if (!pool) return undefined;
    // Read when each round's arbitraries are built: a round sees the ids gathered so far.
    return pools.get(pool);
  };
  const factory = new RequestFactory(doc, target.urlBase);
  const perOp = Math.max(1, Math.ceil(opts.runs / Math.max(1, driven.length)));
  const roundSize = opts.roundSize ?? 5;
  const rounds = Math.ceil(perOp / roundSize);
  const concurrency = opts.concurrency ?? 4;
  let round = 0;
  for (; round < rounds; round++) {
    const batch: Array<{ op: Operation; req: FuzzRequest }> = [];
    for (const [i, op] of driven.entries()) {
      const count = Math.min(roundSize, perOp - round * roundSize);
      if (count <= 0) continue;
      const arb = factory.arbitrary(op, seedsFor(op));
      for (const req of fc.sample(arb, { numRuns: count, seed: opts.seed + round * 7919 + i * 104729 })) {
        report.drawn++;
        const invalid = factory.invalid(op, req);
        if (invalid.length) {
          report.notDocumentValid++;
          if (report.notDocumentValidSamples.length < 50) report.notDocumentValidSamples.push({ operationId: op.operationId, ...invalid[0]! });
          continue;
        }
        batch.push({ op, req });
      }
    }
    // Interleaved, so operations act on each other's state; the order is fixed by the seed.
    const order = fc.sample(fc.shuffledSubarray(batch, { minLength: batch.length, maxLength: batch.length }), { numRuns: 1, seed: opts.seed + round })[0]!;
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < order.length) {
          const { op, req } = order[next++]!;
          await sendOne(target, op, req, report, pools);
        }
      }),
    );
    opts.log?.(
      `[contract-fuzz] round ${round + 1}/${rounds}: sent ${report.sent}, refused ${report.refused.length}, 5xx ${report.serverErrors.length}, off-document ${report.offDocument.length}`,
    );
  }
  report.elapsedMs = Date.now() - started;
  return report;
}

async function sendOne(target: FuzzTarget, op: Operation, req: FuzzRequest, report: FuzzReport, pools: IdPools): Promise<void> {
  const scheme = op.security.find((s) => target.credentials[s]);
  const headers: Record<string, string> = { ...req.headers, ...(scheme ? { authorization: `Bearer ${target.credentials[scheme]}` } : {}) };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  report.sent++;
  report.documentValid++;
  const tally = (report.byOperation[op.operationId] ??= {});
  let res: Response;
  let text: string | undefined;
  const t0 = Date.now();
  try {
    res = await fetch(`${target.baseUrl}${req.path}`, { method: req.method, headers, body: req.body === undefined ? undefined : JSON.stringify(req.body) });
    const media = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (media === 'application/json' || media.endsWith('+json') || media.startsWith('text/')) text = await res.text();
    else await res.arrayBuffer();
  } catch (e) {
    tally.transport = (tally.transport ?? 0) + 1;
    report.serverErrors.push({ operationId: op.operationId, status: 'no answer', problems: [String((e as Error).message)], request: req, body: '' });
    return;
  }
  tally[res.status] = (tally[res.status] ?? 0) + 1;
  tally.ms = (tally.ms ?? 0) + (Date.now() - t0);
  let body: Json | undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const exchange = { method: req.method, path: req.path, status: res.status, headers: res.headers, text };
  const problems = target.responses.problems(exchange);
  // Counted in the run's coverage of the document (support/openapi-coverage.*) like any e2e answer.
  coverage.record(target.responses, exchange);
  if (problems.length) report.offDocument.push({ operationId: op.operationId, status: res.status, problems, request: req, body: (text ?? '').slice(0, 600) });
  if (res.status >= 500) {
    report.serverErrors.push({ operationId: op.operationId, status: res.status, problems: [], request: req, body: (text ?? '').slice(0, 600) });
    return;
  }
  if (res.status === 429) report.rateLimited++;
  if (res.status === 400) {
    report.refused.push({
      operationId: op.operationId,
      method: op.method,
      template: op.template,
      status: res.status,
      error: body?.error,
      fields: Array.isArray(body?.details?.fields) ? body.details.fields : [],
      request: req,
    });
    return;
  }
  report.accepted++;
  if (res.status >= 200 && res.status < 300 && body) pools.harvest(op, body);
}

/** A refusal's keys, one per field, array indices folded: `createTransfer body.destination.brebKey.value`. */
export function refusalKeys(r: Refusal): string[] {
  if (r.fields.length === 0) return [`${r.operationId} (${r.error ?? 'no error code'}, no fields)`];
  return [...new Set(r.fields.map((f) => `${r.operationId} ${String(f.path || '(root)').replace(/\.\d+(?=\.|$)/g, '.*')}`))];
}

/** The refusals grouped by operation and field path, with a count, one message and one request each. */
export function refusalBreakdown(refused: Refusal[]) {
  const out = new Map<string, { count: number; message: string; example: FuzzRequest }>();
  for (const r of refused) {
    for (const key of refusalKeys(r)) {
      const e = out.get(key);
      if (e) e.count++;
      else {
        const field = r.fields.find((f) => key.endsWith(String(f.path || '(root)').replace(/\.\d+(?=\.|$)/g, '.*')));
        out.set(key, { count: 1, message: field?.message ?? r.error ?? '', example: r.request });
      }
    }
  }
  return [...out.entries()].sort((a, b) => b[1].count - a[1].count || a[0].localeCompare(b[0]));
}

/** A plain-text summary: the figures, the refusals by operation and field, the failures. */
export function formatReport(report: FuzzReport, opts: { examples?: boolean } = {}): string {
  const rate = report.documentValid ? ((report.accepted / report.documentValid) * 100).toFixed(2) : 'n/a';
  const lines = [
    `contract fuzz (seed ${report.seed}): ${report.operations} operations driven, ${report.skippedOperations.length} left out`,
    `  drawn ${report.drawn}, not document-valid (not sent) ${report.notDocumentValid}`,
    `  sent ${report.sent}, document-valid ${report.documentValid}, accepted (not 400) ${report.accepted}, rate ${rate}%`,
    `  refused (400) ${report.refused.length}, 5xx ${report.serverErrors.length}, off-document ${report.offDocument.length}, 429 ${report.rateLimited}`,
    `  ${(report.elapsedMs / 1000).toFixed(1)} s; slowest operations (total ms): ${Object.entries(report.byOperation)
      .sort((a, b) => (b[1].ms ?? 0) - (a[1].ms ?? 0))
      .slice(0, 5)
      .map(([op, t]) => `${op} ${t.ms ?? 0}`)
      .join(', ')}`,
  ];
  const breakdown = refusalBreakdown(report.refused);
  if (breakdown.length) {
    lines.push('  refusals by operation and field path:');
    for (const [key, e] of breakdown) {
      lines.push(`    ${String(e.count).padStart(5)}  ${key}  — ${e.message}`);
      if (opts.examples) lines.push(`           e.g. ${describeRequest(e.example)}`);
    }
  }
  for (const [title, list] of [
    ['5xx / no answer', report.serverErrors],
    ['off-document answers', report.offDocument],
  ] as const) {
    if (!list.length) continue;
    lines.push(`  ${title}:`);
    for (const f of list.slice(0, 20))
      lines.push(`    ${f.operationId} → ${f.status}: ${f.problems.join('; ')} ${f.body}\n      ${describeRequest(f.request)}`);
  }
  return lines.join('\n');
}

export function describeRequest(r: FuzzRequest): string {
  const headers = Object.keys(r.headers).length ? ` headers ${JSON.stringify(r.headers)}` : '';
  const body = r.body === undefined ? '' : ` body ${JSON.stringify(r.body).slice(0, 400)}`;
  return `${r.method} ${r.path}${headers}${body}`;
}
