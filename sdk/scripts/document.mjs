// The SDK's view of the gateway's OpenAPI document, and the code generated from it. Pure functions
// (no I/O): scripts/generate.mjs writes their output into the package, and the e2e suite
// (test/e2e/sdk.test.ts) runs them on the document a running gateway serves and fails when the
// committed files differ, so the SDK cannot drift from the API.
import openapiTS, { astToString } from 'openapi-typescript';

/** Where the SDK tells integrators to point it; the snapshot does not carry one installation's URL. */
export const SNAPSHOT_SERVERS = [{ url: 'https://api.example.com', description: 'Your installation: pass its URL as `baseUrl` to WalletClient.' }];

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** True for the operations a company calls with its API key (not /admin, /dashboard, /auth, provider callbacks, docs). */
export function isClientOperation(op) {
  return Array.isArray(op?.security) && op.security.some((s) => s && Object.prototype.hasOwnProperty.call(s, 'apiKey'));
}

/**
 * The client API part of the document: the operations secured by an API key, and only the
 * components they reach (followed through every `$ref`), with fixed `servers`.
 */
export function clientDocument(doc) {
  const paths = {};
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const kept = {};
    for (const [key, value] of Object.entries(item)) {
      if (METHODS.includes(key)) {
        if (isClientOperation(value)) kept[key] = value;
      } else if (key === 'parameters') kept[key] = value;
    }
    if (Object.keys(kept).some((k) => METHODS.includes(k))) paths[path] = kept;
  }
  const out = {
    openapi: doc.openapi,
    info: doc.info,
    servers: SNAPSHOT_SERVERS,
    security: doc.security,
    tags: undefined,
    paths,
    components: {},
  };
  // Reachable components: start from the kept paths (and the apiKey scheme), follow $refs to a fixed point.
  const reached = new Set();
  const queue = [paths];
  const visit = (node) => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/')) {
          if (!reached.has(v)) {
            reached.add(v);
            const [, , kind, name] = v.split('/');
            const target = doc.components?.[kind]?.[name];
            if (target === undefined) throw new Error(`unresolved ${v}`);
            queue.push(target);
          }
        } else visit(v);
      }
    }
  };
  while (queue.length) visit(queue.shift());
  for (const ref of [...reached].sort()) {
    const [, , kind, name] = ref.split('/');
    (out.components[kind] ??= {})[name] = doc.components[kind][name];
  }
  out.components.securitySchemes = { apiKey: doc.components.securitySchemes.apiKey };
  // Tags the kept operations use, in the document's order.
  const used = new Set(Object.values(paths).flatMap((item) => METHODS.flatMap((m) => item[m]?.tags ?? [])));
  const tags = (doc.tags ?? []).filter((t) => used.has(t.name));
  if (tags.length) out.tags = tags;
  else delete out.tags;
  if (out.security === undefined) delete out.security;
  // Sorted component kinds so the snapshot is stable whatever order the gateway builds them in.
  out.components = Object.fromEntries(
    Object.keys(out.components)
      .sort()
      .map((k) => [k, out.components[k]]),
  );
  return out;
}

/** TypeScript types of the document by openapi-typescript 7, with its default options. */
export async function renderTypes(doc) {
  const ast = await openapiTS(structuredClone(doc));
  return `${HEADER('openapi-typescript 7 (default options)')}${astToString(ast)}`;
}

/** The error codes an answer of the client API can carry (from each error response's `error` const/enum). */
export function errorCodes(doc) {
  const codes = new Set();
  const collect = (schema) => {
    if (!schema || typeof schema !== 'object') return;
    if (schema.$ref) {
      const [, , kind, name] = schema.$ref.split('/');
      return collect(doc.components[kind][name]);
    }
    const e = schema.properties?.error;
    if (e?.const) codes.add(e.const);
    for (const v of e?.enum ?? []) codes.add(v);
    for (const k of ['allOf', 'anyOf', 'oneOf']) for (const s of schema[k] ?? []) collect(s);
  };
  for (const item of Object.values(doc.paths))
    for (const m of METHODS) {
      const op = item[m];
      if (!op) continue;
      for (const [status, r0] of Object.entries(op.responses ?? {})) {
        if (/^[23]/.test(status)) continue;
        const r = r0.$ref ? doc.components.responses[r0.$ref.split('/').pop()] : r0;
        for (const media of Object.values(r.content ?? {})) collect(media.schema);
      }
    }
  return [...codes].sort();
}

/**
 * What the SDK needs at run time from the document: each operation's method and path, and whether it
 * takes an Idempotency-Key (the SDK sets one on those and only those, and may then retry them).
 */
export function renderOperations(doc) {
  const ops = [];
  for (const [path, item] of Object.entries(doc.paths))
    for (const m of METHODS) {
      const op = item[m];
      if (!op) continue;
      const params = (op.parameters ?? []).map((p) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p));
      const idempotencyKey = params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
      ops.push({ operationId: op.operationId, method: m.toUpperCase(), path, idempotencyKey });
    }
  ops.sort((a, b) => a.operationId.localeCompare(b.operationId));
  const lines = ops.map((o) => `  ${o.operationId}: { method: '${o.method}', path: '${o.path}', idempotencyKey: ${o.idempotencyKey} },`);
  const codes = errorCodes(doc).map((c) => `  '${c}',`);
  return `${HEADER('sdk/scripts/document.mjs')}/** Every operation of the client API: method, path template, and whether it takes an Idempotency-Key. */
export const operations = {
${lines.join('\n')}
} as const;

export type OperationId = keyof typeof operations;

/** Every error code an answer of the client API documents. */
export const errorCodes = [
${codes.join('\n')}
] as const;

export type WalletErrorCode = (typeof errorCodes)[number];
`;
}

const HEADER = (by) =>
  `// Generated by ${by} from sdk/openapi.json: do not edit by hand.\n// Regenerate after an API change: npm run generate -w @wallet/client\n\n`;
