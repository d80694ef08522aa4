import { z } from 'zod';
import { ERRORS, type ErrorCode } from '@wallet/platform';
import { ErrorSchema, RateLimitErrorSchema, ScopeErrorSchema, documentedVariants } from '../http/schemas.js';
import { NON_API_KEY_AREAS } from '../http/auth.js';
import { rateClassOf, sharedTokenPolicyOf, type AnyRoute } from '../http/route.js';
import { RATE_CLASSES, type RateClass } from '../ratelimit/rate-classes.js';
import { API_VERSIONS, SUPPORTED_API_VERSIONS } from '../api-versions.js';
import { attachExamples } from './examples.js';

type Json = Record<string, unknown>;

/**
 * Builds the OpenAPI 3.1 document from the route declarations. Request and response schemas are
 * the zod schemas the gateway validates with (converted by zod 4's `z.toJSONSchema`, JSON Schema
 * 2020-12 = OpenAPI 3.1's dialect), so the document cannot drift from the code.
 */
export function buildOpenApiDocument(
  routes: readonly AnyRoute[],
  opts: { version: string; perMinute: Record<RateClass, number>; publicUrl?: string | undefined },
): Json {
  const components = new SchemaComponents();
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    item[route.method.toLowerCase()] = operation(route, components, opts.perMinute);
  }
  const errorRef = components.ref(ErrorSchema, 'output');
  components.ref(RateLimitErrorSchema, 'output');
  components.ref(ScopeErrorSchema, 'output');
  const doc: Json = {
    openapi: '3.1.0',
    info: {
      title: 'Payments Wallet API',
      version: opts.version,
      description: [
        'BREB and ACH wallets in COP, balances, provisioning (`/admin`).',
        '',
        "**Authentication.** Client routes take `Authorization: Bearer <API key>` (`wk_live_…` in production, `wk_test_…` elsewhere); each key has scope READ or WRITE (WRITE includes READ) and belongs to one company. `/admin/*` takes an operator session token (`POST /admin/auth/login` with password and TOTP) or, outside production, the shared operator token (`ADMIN_TOKEN`), and refuses API keys (403 API_KEY_AUTH_NOT_ALLOWED). `/dashboard/*` takes a dashboard user's session token (`POST /auth/login`); multi-signature approvals are signed there with the user's TOTP code, never with an API key. 10 wrong passwords or 5 wrong TOTP codes for one dashboard user within 15 minutes lock that user for 15 minutes whatever the client IPs (423 `ACCOUNT_LOCKED` with `Retry-After`). In production a dashboard user is created as a single-use invitation the user redeems through `/auth/invitations/*` (own password, own TOTP secret, confirmed by a first code).",
        '',
        "**Admin (operators).** In production `/admin/*` is served only on the admin listener (`GATEWAY_ADMIN_PORT`, default 8081), never on the public port, and only to named operators: the shared `ADMIN_TOKEN` is refused (403 `ADMIN_TOKEN_NOT_ALLOWED`) except to invite the first two operators (`POST /admin/operators`). Outside production the shared token keeps working everywhere except where an operator's identity is the point (approving or rejecting a credit request, logout). Every admin action, login and failed login is written to the append-only audit log (`GET /admin/audit`). An operator's credit above `ADMIN_CREDIT_DUAL_CONTROL_CENTS` waits (202, a credit request) for a second, independent operator's approval.",
        '',
        '**Errors.** Every error is `{ error, message, details? }` with a Spanish `message`; `INVALID_REQUEST` carries `details.fields: [{ path, message }]`. Every response carries `X-Request-Id` (a well-formed incoming one is echoed). Answers given before an operation is chosen are listed under `x-responses-before-routing`: a method and path no operation serves → 404 `ROUTE_NOT_FOUND`; malformed HTTP → 400 `INVALID_REQUEST`, 408 `REQUEST_TIMEOUT` or 431 `HEADERS_TOO_LARGE`, and the connection is closed.',
        '',
        `**Versions.** A version is a release date. Send \`Wallet-Version: YYYY-MM-DD\` to choose one (${SUPPORTED_API_VERSIONS.map((v) => `\`${v}\``).join(', ')}); without it the API key's pinned version applies (the newest when the key was issued; see \`apiVersion\` on the admin API key answers), and elsewhere the newest. Every answer says which version applied in \`Wallet-Version\`; an unknown one → 400 \`UNSUPPORTED_API_VERSION\` with \`details.supported\`. New operations, optional request fields, response fields and enum values arrive in every version: clients must ignore fields and tolerate enum values they do not know. Anything breaking comes only in a new version. An operation being retired is marked \`deprecated\` and answers with \`Deprecation\` (RFC 9745) and, once its date is set, \`Sunset\` (RFC 8594) headers, at least 6 months ahead. Changelog: ${API_VERSIONS.map((v) => `\`${v.version}\`: ${v.summary}`).join(' ')}`,
        '',
        '**Amounts** are integer centavos. In requests they must be JSON integers; balances and movements return them as strings.',
        '',
        "**Idempotency.** Creating POSTs (send, PSE deposit, collect key, QR, webhook endpoint) accept `Idempotency-Key`: the first answer is stored 30 days per company and key and replayed with `Idempotent-Replayed: true`; a different body with the same key → 409 `IDEMPOTENCY_KEY_REUSED`; the same key while the first request runs → 409 `IDEMPOTENCY_KEY_IN_USE`. A send's `reference` (§7.4, 60 s) works as before beside it. A send's key is also bound to the transfer it creates, in the transfer service, for good: after an unknown outcome (a 5xx, a time-out, a lost connection) retry at once with the same key and body and get that transfer in its current state (`Idempotent-Replayed: true`), never a second one (see POST /transfers/send).",
        '',
        `**Rate limits** (rolling one-minute window per client IP and class, × the company's multiplier): ${(Object.keys(RATE_CLASSES) as RateClass[]).map((c) => `${RATE_CLASSES[c].description} ${opts.perMinute[c]}/min`).join(', ')}. Limited routes send \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\`; a 429 adds \`Retry-After\`.`,
      ].join('\n'),
    },
    // An absolute base URL: generated clients (hey-api, orval, openapi-fetch) need one to build requests.
    servers: [
      opts.publicUrl
        ? { url: opts.publicUrl, description: 'This installation (GATEWAY_PUBLIC_URL).' }
        : { url: '/', description: 'This host (GATEWAY_PUBLIC_URL is not set).' },
    ],
    tags: [
      { name: 'Wallets', description: 'Balances.' },
      { name: 'Schedules', description: 'Scheduled and recurring sends and moves between your wallets (docs/schedules.md).' },
      { name: 'Dictionaries', description: 'Reference data.' },
      { name: 'Admin', description: 'Operator provisioning (operator session; the shared admin token outside production and to bootstrap).' },
      { name: 'Dashboard', description: 'Dashboard users: session login and multi-signature approvals (session token + TOTP).' },
      {
        name: 'Approval policies',
        description: "The company's approval policy (docs/policies.md): read with an API key or the dashboard, changed by dashboard ADMINs with TOTP.",
      },
      { name: 'Docs', description: 'This document and its reference page.' },
    ],
    paths,
    components: {
      schemas: components.all(),
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'wk_live_… / wk_test_…', description: "A company's API key." },
        providerSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Provider-Signature',
          description:
            'Provider callbacks only: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` with the secret shared with that provider; a bad signature or a timestamp more than 300 s off answers 401 INVALID_SIGNATURE.',
        },
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The shared operator token (ADMIN_TOKEN): outside production on every admin route but those needing an operator; in production only POST /admin/operators while fewer than two operators exist (bootstrap).',
        },
        operatorSession: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'wadm_…',
          description: "A named operator's session token from POST /admin/auth/login (password + TOTP; short-lived, revoked by POST /admin/auth/logout).",
        },
        sessionToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'wsess_…',
          description: 'A dashboard session token from POST /auth/login (8 h; revoked by POST /auth/logout).',
        },
      },
      headers: {
        'X-Request-Id': {
          description: 'Request id (echoes a valid incoming X-Request-Id: ≤ 128 of [A-Za-z0-9._-]). On every response.',
          required: true,
          schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
        },
        'RateLimit-Limit': { description: 'Requests allowed in the rolling window for this class.', schema: { type: 'integer', minimum: 0 } },
        'RateLimit-Remaining': { description: 'Requests left in the window, counting this one.', schema: { type: 'integer', minimum: 0 } },
        'RateLimit-Reset': { description: 'Seconds until a slot frees in the window.', schema: { type: 'integer', minimum: 0 } },
        'Retry-After': { description: 'Seconds to wait before retrying (on every 429).', required: true, schema: { type: 'integer', minimum: 0 } },
        'Wallet-Version': {
          description:
            "The API version that applied to this request: the `Wallet-Version` it sent, else its API key's pinned version, else the newest. On every answer but a refusal of the version asked for.",
          schema: { type: 'string', enum: [...SUPPORTED_API_VERSIONS] },
        },
        Deprecation: {
          description: 'This operation is deprecated since this instant (RFC 9745: `@` + Unix seconds).',
          required: true,
          schema: { type: 'string', pattern: '^@-?[0-9]+$' },
        },
        Sunset: {
          description: 'After this instant the operation may stop answering (RFC 8594, an HTTP-date); sent once the date is set.',
          schema: { type: 'string' },
        },
        Link: {
          description: 'Where the deprecation is explained: `</docs>; rel="deprecation"; type="text/html"`.',
          schema: { type: 'string' },
        },
        'Idempotent-Replayed': {
          description:
            '`true` when this answer is the stored answer of an earlier request with the same `Idempotency-Key` (on POST /transfers/send also: the transfer that an earlier request with the key made, in its current state).',
          schema: { type: 'string', enum: ['true'] },
        },
      },
      parameters: {
        WalletVersion: {
          name: 'Wallet-Version',
          in: 'header',
          required: false,
          description:
            "The API version to apply (`YYYY-MM-DD`). Omitted: the API key's pinned version (elsewhere the newest). Unknown → 400 `UNSUPPORTED_API_VERSION`.",
          schema: { type: 'string', enum: [...SUPPORTED_API_VERSIONS] },
        },
        RequestId: {
          name: 'X-Request-Id',
          in: 'header',
          required: false,
          description: 'Optional caller-chosen request id.',
          schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
        },
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Optional, 1-255 visible ASCII characters (e.g. a UUID), unique per company. The first final answer (2xx, or a 4xx business refusal) is stored for 30 days and replayed, same status and body, with `Idempotent-Replayed: true`; the same key with another body or route → 409 `IDEMPOTENCY_KEY_REUSED`; while the first request is still running → 409 `IDEMPOTENCY_KEY_IN_USE` (retry shortly). 5xx and 429 answers are not stored: retrying with the same key runs the request again. POST /transfers/send: the key is bound to the transfer it creates, so the retry of a send whose outcome was unknown (a 5xx, a time-out) runs at once, even while the first is still running, and answers that transfer in its current state with `Idempotent-Replayed: true`; after a 5xx the key stays bound to that body for 30 days (another body → 409 `IDEMPOTENCY_KEY_REUSED`).',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]{1,255}$' },
        },
      },
      responses: {
        Error: { description: 'Error', content: { 'application/json': { schema: errorRef } } },
        UnsupportedApiVersion: refusal(
          'UNSUPPORTED_API_VERSION',
          components,
          'The `Wallet-Version` header names no supported version (checked before routing).',
        ),
        RouteNotFound: refusal('ROUTE_NOT_FOUND', components, 'No operation serves this method and path.'),
        ApiKeyAuthNotAllowed: refusal(
          'API_KEY_AUTH_NOT_ALLOWED',
          components,
          'A client API key on `/admin/*`, `/auth/*` or `/dashboard/*`, whether an operation serves the path or not.',
        ),
        MalformedRequest: refusal(
          'INVALID_REQUEST',
          components,
          'Refused by the HTTP server before the request reached an operation (malformed HTTP: bad header bytes, bad framing); the connection is closed.',
        ),
        RequestTimeout: refusal('REQUEST_TIMEOUT', components, 'The request did not arrive complete in time; the connection is closed.'),
        HeadersTooLarge: refusal('HEADERS_TOO_LARGE', components, 'The header block is over 16 KiB; the connection is closed.'),
      },
    },
    // Answers given before an operation is chosen, so they belong to no operation: `unrouted` for a
    // method and path no operation serves, `protocol` for requests the HTTP server refuses itself.
    'x-responses-before-routing': {
      unrouted: {
        '400': { $ref: '#/components/responses/UnsupportedApiVersion' },
        '403': { $ref: '#/components/responses/ApiKeyAuthNotAllowed' },
        '404': { $ref: '#/components/responses/RouteNotFound' },
      },
      protocol: {
        '400': { $ref: '#/components/responses/MalformedRequest' },
        '408': { $ref: '#/components/responses/RequestTimeout' },
        '431': { $ref: '#/components/responses/HeadersTooLarge' },
      },
    },
  };
  // Examples recorded from real answers (examples.json), and each error code's from the catalogue.
  const byOperation = new Map(routes.map((r) => [r.operationId, errorStatuses(r)]));
  attachExamples(doc, (operationId) => byOperation.get(operationId));
  return doc;
}

/** A refusal answered outside any operation: the error shape with exactly this code. */
function refusal(code: ErrorCode, components: SchemaComponents, when: string): Json {
  return {
    description: `\`${code}\`: ${ERRORS[code].message} ${when}`,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
    content: { 'application/json': { schema: { allOf: [components.ref(ErrorSchema, 'output'), { properties: { error: { const: code } } }] } } },
  };
}

function operation(route: AnyRoute, components: SchemaComponents, perMinute: Record<RateClass, number>): Json {
  const parameters: Json[] = [{ $ref: '#/components/parameters/RequestId' }, { $ref: '#/components/parameters/WalletVersion' }];
  if (route.idempotent) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const json = components.inline(schema, 'input');
    const props = (json.properties ?? {}) as Record<string, Json>;
    const required = new Set((json.required ?? []) as string[]);
    for (const [name, s] of Object.entries(props)) {
      parameters.push({ name, in: where, required: where === 'path' || required.has(name), schema: s });
    }
  }
  const rateClass = rateClassOf(route);
  const rateHeaders = rateClass
    ? {
        'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
        'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
        'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
      }
    : {};
  const deprecationHeaders = route.deprecated
    ? {
        Deprecation: { $ref: '#/components/headers/Deprecation' },
        ...(route.deprecated.sunset ? { Sunset: { $ref: '#/components/headers/Sunset' } } : {}),
        Link: { $ref: '#/components/headers/Link' },
      }
    : {};
  const baseHeaders = {
    'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
    'Wallet-Version': { $ref: '#/components/headers/Wallet-Version' },
    ...rateHeaders,
    ...deprecationHeaders,
  };
  const replayHeader = route.idempotent ? { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } } : {};

  const responses: Record<string, Json> = {};
  for (const [status, doc] of Object.entries(route.responses)) {
    const headers: Json = { ...baseHeaders, ...replayHeader, ...(doc.headers ?? {}) };
    const r: Json = { description: doc.description, headers };
    if (doc.schema) r.content = { 'application/json': { schema: components.ref(doc.schema, 'output') } };
    if (doc.contentType) {
      // Alone, or next to the JSON schema when the answer's type is chosen by the request (format=csv).
      const types = typeof doc.contentType === 'string' ? [doc.contentType] : doc.contentType;
      r.content = { ...(r.content as Json | undefined), ...Object.fromEntries(types.map((t) => [t, { schema: bodySchemaOf(t) }])) };
    }
    responses[status] = r;
  }
  for (const [status, codes] of errorStatuses(route)) {
    if (responses[String(status)])
      throw new Error(`${route.operationId}: status ${status} is declared both as a response and by the error codes ${codes.join(', ')}`);
    // The error shape, with `error` narrowed to the codes this operation answers with this status.
    const errorWith = (some: ErrorCode[]): Json => ({ allOf: [components.ref(ErrorSchema, 'output'), { properties: { error: { enum: some } } }] });
    let schema: Json = errorWith(codes);
    const headers: Json = { ...baseHeaders, ...(status < 500 && status !== 429 ? replayHeader : {}) };
    if (status === 429) {
      schema = components.ref(RateLimitErrorSchema, 'output');
      headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    } else if (codes.includes('ACCOUNT_LOCKED')) {
      headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    } else if (status === 403 && codes.includes('INSUFFICIENT_SCOPE')) {
      const others = codes.filter((c) => c !== 'INSUFFICIENT_SCOPE');
      schema = others.length ? { oneOf: [errorWith(others), components.ref(ScopeErrorSchema, 'output')] } : components.ref(ScopeErrorSchema, 'output');
    }
    responses[String(status)] = {
      description: codes.map((c) => `\`${c}\`: ${ERRORS[c].message}`).join('<br>'),
      headers,
      content: { 'application/json': { schema } },
    };
  }

  const op: Json = {
    operationId: route.operationId,
    summary: route.summary,
    tags: route.tags,
    parameters,
    responses,
  };
  const notes: string[] = [];
  if (route.deprecated) {
    op.deprecated = true;
    const d = route.deprecated;
    notes.push(
      `**Deprecated** since ${d.since}${d.sunset ? `; may stop answering after ${d.sunset} (\`Sunset\`)` : ''}.${d.replacement ? ` Use ${d.replacement} instead.` : ''}`,
    );
  }
  if (route.description) notes.push(route.description);
  if (route.auth.kind === 'apiKey') notes.push(`Scope: **${route.auth.scope}**.`);
  if (route.idempotent) notes.push('Accepts an `Idempotency-Key` header (30 days per company and key; see the parameter).');
  if (route.idempotent === 'bound')
    notes.push('The `Idempotency-Key` is passed on and bound to what the request creates: a retry after an unknown outcome answers that, never a second one.');
  if (route.auth.kind === 'admin') {
    const policy = sharedTokenPolicyOf(route);
    notes.push(
      policy === 'never'
        ? 'Needs a named operator (operator session); the shared admin token is refused (403 ADMIN_TOKEN_NOT_ALLOWED).'
        : policy === 'bootstrap'
          ? 'Operator session, or the shared admin token (in production only while fewer than two operators are active or invited).'
          : 'Operator session, or the shared admin token outside production (403 ADMIN_TOKEN_NOT_ALLOWED in production).',
    );
  }
  if (route.bodyLimitBytes !== undefined) notes.push(`Request body up to ${bytesText(route.bodyLimitBytes)} (more → 413 PAYLOAD_TOO_LARGE).`);
  if (rateClass) notes.push(`Rate class: **${RATE_CLASSES[rateClass].description}** (${perMinute[rateClass]}/min by default).`);
  if (notes.length) op.description = notes.join('\n\n');
  if (route.auth.kind === 'apiKey') op.security = [{ apiKey: [] }];
  else if (route.auth.kind === 'admin')
    op.security = sharedTokenPolicyOf(route) === 'never' ? [{ operatorSession: [] }] : [{ adminToken: [] }, { operatorSession: [] }];
  else if (route.auth.kind === 'session') op.security = [{ sessionToken: [] }];
  else op.security = route.signedBy === 'provider' ? [{ providerSignature: [] }] : [];
  if (rateClass) op['x-rate-limit-class'] = rateClass;
  if (route.body || route.csv?.only) {
    const content: Json = route.body ? { 'application/json': { schema: components.ref(route.body, 'input') } } : {};
    // A CSV file is parsed by the handler, not by a schema: a string, with its columns described.
    if (route.csv)
      content['text/csv'] = {
        schema: { type: 'string', description: route.csv.description },
        ...(route.csv.example !== undefined ? { example: route.csv.example } : {}),
      };
    op.requestBody = { required: true, content };
  }
  return op;
}

function bytesText(n: number): string {
  const mib = n / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${n} bytes`;
}

/** Error answers a route can give, by status: its own plus those its pipeline adds. */
export function errorStatuses(route: AnyRoute): Map<number, ErrorCode[]> {
  const codes = new Set<ErrorCode>();
  // Every operation reads `Wallet-Version` (http/api-versions.ts).
  codes.add('UNSUPPORTED_API_VERSION');
  if (route.params || route.query || route.body) codes.add('INVALID_REQUEST');
  if (route.body || route.csv?.only) {
    codes.add('PAYLOAD_TOO_LARGE');
    codes.add('UNSUPPORTED_MEDIA_TYPE');
  }
  if (route.auth.kind === 'apiKey') {
    codes.add('AUTH_REQUIRED');
    codes.add('INVALID_API_KEY');
    codes.add('COMPANY_INACTIVE');
    if (route.auth.scope === 'WRITE') codes.add('INSUFFICIENT_SCOPE');
  } else if (route.auth.kind === 'admin') {
    codes.add('AUTH_REQUIRED');
    codes.add('INVALID_ADMIN_TOKEN');
    codes.add('API_KEY_AUTH_NOT_ALLOWED');
    codes.add('SESSION_EXPIRED');
    codes.add('ADMIN_TOKEN_NOT_ALLOWED');
  } else if (route.auth.kind === 'session') {
    codes.add('AUTH_REQUIRED');
    codes.add('SESSION_EXPIRED');
    codes.add('COMPANY_INACTIVE');
    codes.add('API_KEY_AUTH_NOT_ALLOWED');
  }
  // In production /admin lives on the admin listener only: the public listener answers 404 ROUTE_NOT_FOUND there.
  if (route.path === '/admin' || route.path.startsWith('/admin/')) codes.add('ROUTE_NOT_FOUND');
  // The guard before routing refuses API keys anywhere in these areas, public pages included.
  if (NON_API_KEY_AREAS.test(route.path)) codes.add('API_KEY_AUTH_NOT_ALLOWED');
  if (rateClassOf(route)) codes.add('RATE_LIMIT_EXCEEDED');
  if (route.idempotent) {
    codes.add('INVALID_REQUEST');
    codes.add('IDEMPOTENCY_KEY_REUSED');
    codes.add('IDEMPOTENCY_KEY_IN_USE');
  }
  for (const c of route.errors ?? []) codes.add(c);
  // A malformed path parameter is answered with its own code (e.g. a bad company id reads as not found).
  for (const c of Object.values(route.paramErrors ?? {})) codes.add(c);
  codes.add('INTERNAL_ERROR');
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) {
    const s = ERRORS[c].http;
    byStatus.set(s, [...(byStatus.get(s) ?? []), c]);
  }
  return new Map([...byStatus.entries()].sort((a, b) => a[0] - b[0]));
}

/**
 * A `bigint` in a response is written as a JSON integer digit for digit (http/json-text.ts): money
 * that can pass 2^53 centavos (a balance). JSON Schema has no bigint; it is an int64 integer.
 */
function bigintAsInt64(ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: z.core.JSONSchema.BaseSchema }): void {
  if (ctx.zodSchema._zod.def.type !== 'bigint') return;
  ctx.jsonSchema.type = 'integer';
  ctx.jsonSchema.format = 'int64';
}

/**
 * Converts zod schemas to JSON Schema and hoists every schema that has a registry `id` into
 * `components.schemas`, rewriting zod's local `#/$defs/…` references to component references.
 */
class SchemaComponents {
  private readonly schemas: Record<string, Json> = {};

  ref(schema: z.ZodType, io: 'input' | 'output'): Json {
    const id = z.globalRegistry.get(schema)?.id;
    const json = this.inline(schema, io);
    if (!id) return json;
    this.schemas[id] ??= json;
    return { $ref: `#/components/schemas/${id}` };
  }

  inline(schema: z.ZodType, io: 'input' | 'output'): Json {
    const override = (ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: z.core.JSONSchema.BaseSchema }): void => {
      bigintAsInt64(ctx);
      this.variantsOf(ctx, io);
    };
    const raw = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12', override }) as Json;
    if (io === 'input') defaultsIntoDescriptions(raw);
    const rewritten = JSON.parse(JSON.stringify(raw).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
    const defs = (rewritten.$defs ?? {}) as Record<string, Json>;
    for (const [name, def] of Object.entries(defs)) this.schemas[name] ??= def;
    delete rewritten.$defs;
    delete rewritten.$schema;
    delete rewritten.id;
    return rewritten;
  }

  /**
   * A schema whose rule is a refinement (http/schemas.ts documentAsOneOf) is shown as `oneOf` its
   * variants, each a closed object: its own keywords but the description give way to the variants.
   */
  private variantsOf(ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: z.core.JSONSchema.BaseSchema }, io: 'input' | 'output'): void {
    const variants = documentedVariants.get(ctx.zodSchema);
    if (!variants) return;
    const json = ctx.jsonSchema as Json;
    for (const k of Object.keys(json)) if (!['description', 'id', 'title', 'examples', 'example'].includes(k)) delete json[k];
    json.oneOf = variants.map((v) => this.ref(v, io));
  }

  all(): Record<string, Json> {
    return Object.fromEntries(Object.entries(this.schemas).sort(([a], [b]) => a.localeCompare(b)));
  }
}

/**
 * What a request may leave out is optional, and stays so in generated clients: a `default` on an
 * input field makes openapi-typescript (its default `defaultNonNullable`) type the field as required,
 * so the first calls do not compile. The server still applies the default; the document states it
 * in words ("Default: `AUTO`.") and as `x-default`, which generators leave alone.
 */
function defaultsIntoDescriptions(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) defaultsIntoDescriptions(n);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  if ('default' in o && o.default !== undefined) {
    const said = `Default: \`${JSON.stringify(o.default)}\`.`;
    o.description = typeof o.description === 'string' && o.description ? `${o.description} ${said}` : said;
    o['x-default'] = o.default;
    delete o.default;
  }
  for (const v of Object.values(o)) defaultsIntoDescriptions(v);
}

/**
 * The schema of a response that has no zod schema, by what it is: a JSON document is an object (a
 * client generated from this document must not type /openapi.json as a string), a PDF or an image
 * is binary, HTML and plain text are text.
 */
function bodySchemaOf(contentType: string): Json {
  const media = contentType.split(';')[0]!.trim().toLowerCase();
  if (media === 'application/json' || media.endsWith('+json')) return { type: 'object' };
  if (media.startsWith('text/')) return { type: 'string' };
  return { type: 'string', format: 'binary' };
}
