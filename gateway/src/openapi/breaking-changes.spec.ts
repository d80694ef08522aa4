import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_VERSIONS, LATEST_API_VERSION } from '../api-versions.js';
import { breakingChanges, contractOf } from './breaking-changes.js';
import { checkAgainstRelease, readRelease, releasedVersions, RELEASES_DIR } from './releases.js';
import { servedDocument } from './served-document.js';

type Json = Record<string, any>;
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;
const ids = (before: Json, after: Json) => breakingChanges(contractOf(before), contractOf(after)).map((c) => c.id);

let served: Json;
beforeAll(async () => {
  served = await servedDocument();
});

describe('the served document against the last released version', () => {
  it('breaks nothing that no newer version announces (docs/api-versioning.md)', () => {
    const released = releasedVersions();
    expect(released.length).toBeGreaterThan(0);
    const last = released[released.length - 1]!;
    const check = checkAgainstRelease(served, { version: last, doc: readRelease(last) }, API_VERSIONS);
    const help = [
      `Breaking changes against the ${last} release that no newer version in gateway/src/api-versions.ts announces:`,
      ...check.unannounced.map((c) => `  ${c.id}${c.detail ? `  (${c.detail})` : ''}`),
      'Make the change additive, or add a version that lists these ids under `breaking` (and keeps the old behaviour for older versions).',
    ].join('\n');
    expect(check.unannounced.length === 0 ? '' : help).toBe('');
    expect(check.stale).toEqual([]);
  });

  it('has a snapshot for every released version, each one a listed version, and a changelog section for every version', () => {
    const versions = API_VERSIONS.map((v) => v.version);
    expect([...versions].sort()).toEqual(versions);
    expect(new Set(versions).size).toBe(versions.length);
    for (const v of versions) expect(Number.isNaN(Date.parse(`${v}T00:00:00Z`))).toBe(false);
    for (const r of releasedVersions()) expect(versions).toContain(r);
    // Every version but the newest is released (the newest may still be on its way).
    for (const v of versions.slice(0, -1)) expect(releasedVersions()).toContain(v);
    const changelog = readFileSync(join(RELEASES_DIR, '..', '..', '..', 'docs', 'api-changelog.md'), 'utf8');
    for (const v of versions) expect(changelog).toMatch(new RegExp(`^## ${v}\\b`, 'm'));
    expect(served.info.version).toBe(LATEST_API_VERSION);
  });

  it('finds nothing between a document and itself, nor when only descriptions, summaries and examples change', () => {
    expect(ids(served, served)).toEqual([]);
    const reworded = clone(served);
    reworded.info.description = 'otra cosa';
    reworded.paths['/wallets/balance'].get.summary = 'Saldo';
    reworded.components.schemas.Wallet.properties.rail.description = 'El riel.';
    reworded.components.schemas.Wallet.properties.rail.examples = ['ACH'];
    reworded.components.schemas.Wallet.example = { rail: 'ACH' };
    reworded.servers = [{ url: 'https://api.example.test' }];
    expect(ids(served, reworded)).toEqual([]);
  });
});

describe('planted changes in the served document', () => {
  const balance = 'GET /wallets/balance response 200 application/json body';
  const createKey = 'POST /admin/companies/{id}/api-keys request application/json body';

  it('a removed response field is breaking', () => {
    const after = clone(served);
    delete after.components.schemas.Wallet.properties.type;
    after.components.schemas.Wallet.required = after.components.schemas.Wallet.required.filter((r: string) => r !== 'type');
    expect(ids(served, after)).toContain(`response-property-removed ${balance}.wallets[].type`);
  });

  it('a new required request field is breaking (and a new optional one is not)', () => {
    const after = clone(served);
    after.components.schemas.CreateApiKeyRequest.properties.environment = { type: 'string' };
    expect(ids(served, after)).toEqual([]);
    after.components.schemas.CreateApiKeyRequest.required.push('environment');
    expect(ids(served, after)).toEqual([`request-property-added-required ${createKey}.environment`]);
  });

  it('a removed operation is breaking', () => {
    const after = clone(served);
    delete after.paths['/wallets/balance'].get;
    expect(ids(served, after)).toEqual(['operation-removed GET /wallets/balance']);
  });

  it('additive changes are not: a new operation, a new response field, a new enum value in an answer, a new optional parameter, a new error status', () => {
    const after = clone(served);
    after.paths['/wallets/nicknames'] = { get: clone(served.paths['/wallets/balance'].get) };
    after.paths['/wallets/nicknames'].get.operationId = 'listNicknames';
    after.components.schemas.Wallet.properties.nickname = { type: 'string' };
    after.components.schemas.Wallet.properties.rail.enum.push('CRYPTO');
    after.paths['/wallets/balance'].get.parameters.push({ name: 'nickname', in: 'query', required: false, schema: { type: 'string' } });
    after.paths['/wallets/balance'].get.responses['418'] = clone(served.paths['/wallets/balance'].get.responses['500']);
    expect(ids(served, after)).toEqual([]);
  });

  it('narrowing what a request accepts is breaking: a type, an enum, a bound, a format, a new required parameter', () => {
    const after = clone(served);
    const body = after.components.schemas.CreateApiKeyRequest.properties;
    body.scope.enum = ['READ'];
    body.label.maxLength = 10;
    body.label.format = 'email';
    after.paths['/wallets/balance'].get.parameters.push({ name: 'rail', in: 'query', required: true, schema: { type: 'string' } });
    expect(ids(served, after)).toEqual([
      `request-bound-narrowed ${createKey}.label`,
      `request-enum-narrowed ${createKey}.scope`,
      `request-format-changed ${createKey}.label`,
      'request-parameter-added-required GET /wallets/balance query rail',
    ]);
  });

  it('what an answer may hold is breaking when it widens or loses a value: a type, null, a removed enum value, a changed error code', () => {
    const after = clone(served);
    const wallet = after.components.schemas.Wallet.properties;
    wallet.version = { type: ['integer', 'string'] };
    wallet.rail.enum = ['BREB'];
    wallet.availableCents = { anyOf: [wallet.availableCents, { type: 'null' }] };
    // WALLET_NOT_PROVISIONED becomes WALLET_MISSING.
    const notFound = after.paths['/wallets/balance'].get.responses['404'].content['application/json'].schema.allOf[1].properties.error;
    notFound.enum = notFound.enum.map((c: string) => (c === 'WALLET_NOT_PROVISIONED' ? 'WALLET_MISSING' : c));
    expect(ids(served, after)).toEqual(
      expect.arrayContaining([
        `response-type-widened ${balance}.wallets[].version`,
        `response-enum-value-removed ${balance}.wallets[].rail`,
        `response-alternative-added ${balance}.wallets[].availableCents (alternative 2)`,
        'response-enum-value-removed GET /wallets/balance response 404 application/json body.error',
      ]),
    );
  });

  it('a breaking change passes once a newer version announces it, and an announcement of nothing fails', () => {
    const after = clone(served);
    delete after.paths['/wallets/balance'].get;
    const last = { version: '2026-11-29', doc: contractOf(served) };
    const next = { version: '2027-06-01', summary: 'x', breaking: ['operation-removed GET /wallets/balance'] };
    // The real versions' own announcements are checked against the real release above; against this
    // planted release (the served document itself) they would be announcements of nothing.
    const versions = API_VERSIONS.map((v) => ({ ...v, breaking: [] }));
    expect(checkAgainstRelease(after, last, versions).unannounced.map((c) => c.id)).toEqual(['operation-removed GET /wallets/balance']);
    expect(checkAgainstRelease(after, last, [...versions, next]).unannounced).toEqual([]);
    // Listed by a version not newer than the release: not an announcement.
    expect(checkAgainstRelease(after, last, [{ ...next, version: '2026-11-29' }]).unannounced).toHaveLength(1);
    expect(checkAgainstRelease(served, last, [...versions, next]).stale).toEqual(['operation-removed GET /wallets/balance']);
  });
});

describe('breakingChanges on small documents', () => {
  const doc = (requestSchema: Json, responseSchema: Json, schemas: Json = {}): Json => ({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/things/{id}': {
        post: {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: { required: true, content: { 'application/json': { schema: requestSchema } } },
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: responseSchema } } } },
        },
      },
    },
    components: { schemas },
  });
  const where = 'POST /things/{id}';

  it('matches oneOf alternatives one by one (a request alternative no longer accepted breaks; a reorder does not)', () => {
    const a = { type: 'object', properties: { kind: { const: 'A' }, x: { type: 'string' } }, required: ['kind'] };
    const b = { type: 'object', properties: { kind: { const: 'B' }, y: { type: 'integer' } }, required: ['kind'] };
    const before = doc({ oneOf: [a, b] }, { type: 'object' });
    expect(breakingChanges(before, doc({ oneOf: [b, a] }, { type: 'object' }))).toEqual([]);
    expect(breakingChanges(before, doc({ oneOf: [a] }, { type: 'object' })).map((c) => c.id)).toEqual([
      `request-alternative-refused ${where} request application/json body (alternative 2)`,
    ]);
    // A plain object split into alternatives that still accept what it accepted is fine.
    const plain = doc({ type: 'object', properties: { kind: { enum: ['A', 'B'] } } }, { type: 'object' });
    expect(breakingChanges(plain, doc({ oneOf: [{ type: 'object', properties: { kind: { enum: ['A', 'B'] } } }, b] }, { type: 'object' }))).toEqual([]);
  });

  it('follows $refs, merges allOf and survives recursive schemas; renamed path parameters are the same operation', () => {
    const node = {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } },
      required: ['name'],
    };
    const before = doc({ type: 'object' }, { $ref: '#/components/schemas/Node' }, { Node: node });
    const same = clone(before);
    same.paths = { '/things/{thingId}': same.paths['/things/{id}'] };
    same.paths['/things/{thingId}'].post.parameters[0].name = 'thingId';
    expect(breakingChanges(before, same)).toEqual([]);
    const after = doc(
      { type: 'object' },
      { allOf: [{ $ref: '#/components/schemas/Node' }, { properties: { extra: { type: 'string' } } }] },
      clone({ Node: node }),
    );
    delete after.components.schemas.Node.required;
    expect(breakingChanges(before, after).map((c) => c.id)).toEqual([
      `response-property-became-optional ${where} response 200 application/json body.children[].name`,
      `response-property-became-optional ${where} response 200 application/json body.name`,
    ]);
  });

  it('keeps a property named like a prose keyword (a field called `description` is contract, not prose)', () => {
    const before = doc({ type: 'object' }, { type: 'object', properties: { description: { type: 'string' } }, required: ['description'] });
    const after = doc({ type: 'object' }, { type: 'object', properties: {} });
    expect(breakingChanges(contractOf(before), contractOf(after)).map((c) => c.id)).toEqual([
      `response-property-removed ${where} response 200 application/json body.description`,
    ]);
  });

  it('refuses a field a closed request object used to accept, and a request that becomes closed', () => {
    const open = doc({ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object' });
    const closed = doc({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }, { type: 'object' });
    const closedWithout = doc({ type: 'object', properties: {}, additionalProperties: false }, { type: 'object' });
    expect(breakingChanges(open, closed).map((c) => c.kind)).toEqual(['request-additional-properties-refused']);
    expect(breakingChanges(closed, closedWithout).map((c) => c.kind)).toEqual(['request-property-removed']);
  });
});
