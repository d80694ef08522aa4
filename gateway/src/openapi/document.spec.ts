import { composeInertApp } from './served-document.js';
import { toOpenApiPath } from '../http/route.js';
import { Validator } from '@seriousme/openapi-schema-validator';

describe('OpenAPI document', () => {
  const gw = composeInertApp();
  afterAll(() => gw.close());
  const doc = gw.openApiDocument() as { openapi: string; paths: Record<string, Record<string, any>>; components: any };

  it('types each response without a schema by what it is: JSON documents as objects, images and PDFs as binary, HTML as text', () => {
    const schemaOf = (path: string, media: string) => doc.paths[path]!.get.responses['200'].content[media].schema;
    expect(schemaOf('/openapi.json', 'application/json')).toEqual({ type: 'object' });
    expect(schemaOf('/asyncapi.json', 'application/json')).toEqual({ type: 'object' });
    expect(schemaOf('/breb/collect-keys/qr/{qrId}.png', 'image/png')).toEqual({ type: 'string', format: 'binary' });
    expect(schemaOf('/wallets/transactions/{id}/receipt.pdf', 'application/pdf')).toEqual({ type: 'string', format: 'binary' });
    expect(schemaOf('/docs', 'text/html')).toEqual({ type: 'string' });
    // Static files: each media type the route serves (the answer's Content-Type must be one of them).
    expect(Object.keys(doc.paths['/docs/assets/{file}']!.get.responses['200'].content).sort()).toEqual(['image/png', 'text/css', 'text/javascript']);
    expect(Object.keys(doc.paths['/dashboard/assets/{file}']!.get.responses['200'].content).sort()).toEqual(['text/css', 'text/javascript']);
  });

  it('is a valid OpenAPI 3.1 document (checked against the official schema)', async () => {
    const validator = new Validator();
    const res = await validator.validate(JSON.parse(JSON.stringify(doc)));
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
    // The validator is not vacuous: a broken operation is caught.
    const broken = JSON.parse(JSON.stringify(doc));
    broken.paths['/wallets/balance'].get.responses = 'nope';
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('is OpenAPI 3.1 with the five security schemes (API key, admin token, operator session, dashboard session, provider signature)', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['adminToken', 'apiKey', 'operatorSession', 'providerSignature', 'sessionToken']);
  });

  it('documents the operator routes, the audit log and the maker-checker credit', () => {
    for (const [method, path] of [
      ['post', '/admin/auth/login'],
      ['post', '/admin/auth/enroll'],
      ['post', '/admin/auth/logout'],
      ['get', '/admin/auth/me'],
      ['post', '/admin/operators'],
      ['get', '/admin/operators'],
      ['delete', '/admin/operators/{id}'],
      ['get', '/admin/audit'],
      ['get', '/admin/credit-requests'],
      ['get', '/admin/credit-requests/{id}'],
      ['post', '/admin/credit-requests/{id}/approve'],
      ['post', '/admin/credit-requests/{id}/reject'],
    ] as const)
      expect(doc.paths[path]?.[method]).toBeDefined();
    // Every admin route: an operator session, or the shared token where its policy allows; rate limited; the admin refusals documented.
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/admin/')) continue;
      for (const op of Object.values<any>(item)) {
        if (op.security.length === 0) continue; // login, enroll
        expect(op.security).toContainEqual({ operatorSession: [] });
        expect(op['x-rate-limit-class']).toBe('ADMIN');
        expect(op.responses['401'].description).toContain('SESSION_EXPIRED');
        expect(op.responses['403'].description).toContain('ADMIN_TOKEN_NOT_ALLOWED');
      }
    }
    const paths = doc.paths as Record<string, any>;
    expect(paths['/admin/credit-requests/{id}/approve'].post.security).toEqual([{ operatorSession: [] }]);
    expect(paths['/admin/credit-requests/{id}/approve'].post.responses['403'].description).toContain('SAME_OPERATOR');
    expect(paths['/admin/auth/login'].post.security).toEqual([]);
    expect(paths['/admin/auth/login'].post['x-rate-limit-class']).toBe('ADMIN_LOGIN');
    expect(paths['/admin/auth/login'].post.responses['401'].description).toContain('OPERATOR_AUTH_FAILED');
    const credit = paths['/admin/companies/{id}/wallets/{rail}/credit'].post;
    expect(credit.responses['202'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreditRequest' });
    expect(doc.components.schemas.AuditEntry.properties.outcome.enum).toEqual(['REQUESTED', 'SUCCEEDED', 'FAILED']);
    expect(paths['/admin/audit'].get.parameters.map((p: any) => p.name)).toEqual(
      expect.arrayContaining(['operatorId', 'action', 'targetId', 'from', 'to', 'cursor', 'limit']),
    );
  });

  it('documents exactly the routes the router registers (and vice versa)', () => {
    const registered = new Set<string>();
    for (const layer of gw.router.stack) {
      for (const m of layer.methods) {
        if (m === 'HEAD') continue; // koa-router answers HEAD for every GET
        registered.add(`${m} ${toOpenApiPath(String(layer.path))}`);
      }
    }
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    expect([...registered].sort()).toEqual([...documented].sort());
    expect(registered.size).toBeGreaterThanOrEqual(12);
  });

  it('documents every reference to a component schema', () => {
    const text = JSON.stringify(doc);
    const refs = [...text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    for (const r of refs) expect(doc.components.schemas[r]).toBeDefined();
    expect(text).not.toContain('#/$defs/');
  });

  it('declares errors, rate-limit headers and security per operation', () => {
    const balance = doc.paths['/wallets/balance']!.get;
    expect(balance.security).toEqual([{ apiKey: [] }]);
    expect(Object.keys(balance.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '404', '429', '500']));
    expect(balance.responses['200'].headers['RateLimit-Remaining']).toBeDefined();
    expect(balance.responses['429'].headers['Retry-After']).toBeDefined();
    const create = doc.paths['/admin/companies']!.post;
    expect(create.security).toEqual([{ adminToken: [] }, { operatorSession: [] }]);
    expect(create.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateCompanyRequest' });
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '413', '415', '500']));
    const credit = doc.paths['/admin/companies/{id}/wallets/{rail}/credit']!.post;
    expect(credit.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['id', 'rail']));
    expect(doc.components.schemas.AdminCreditRequest.properties.amountCents.type).toBe('integer');
  });

  it('narrows each error answer to the codes the operation gives with that status, path-parameter codes and the API-key guard included', () => {
    const codesOf = (path: string, method: string, status: string) =>
      doc.paths[path]![method].responses[status].content['application/json'].schema.allOf[1].properties.error.enum;
    expect(codesOf('/wallets/balance', 'get', '404')).toEqual(['WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING']);
    // A malformed company id is answered as not found (paramErrors), like an unknown one.
    // … and in production the public listener answers ROUTE_NOT_FOUND on /admin (it lives on the admin listener).
    expect(codesOf('/admin/companies/{id}/users', 'get', '404')).toEqual(['ROUTE_NOT_FOUND', 'COMPANY_NOT_FOUND']);
    // The guard refuses API keys anywhere under /dashboard, the public page included (CONTRACT §5).
    expect(codesOf('/dashboard', 'get', '403')).toEqual(['API_KEY_AUTH_NOT_ALLOWED']);
    const scope = doc.paths['/transfers/send']!.post.responses['403'].content['application/json'].schema;
    expect(scope.oneOf[1]).toEqual({ $ref: '#/components/schemas/InsufficientScopeError' });
    expect(scope.oneOf[0].allOf[1].properties.error.enum).not.toContain('INSUFFICIENT_SCOPE');
  });

  it('declares the answers given before routing, the headers every answer carries, and money past 2^53 as int64', () => {
    const before = (doc as any)['x-responses-before-routing'];
    expect(Object.keys(before.unrouted).sort()).toEqual(['400', '403', '404']);
    expect(Object.keys(before.protocol).sort()).toEqual(['400', '408', '431']);
    for (const group of Object.values<Record<string, { $ref: string }>>(before)) {
      for (const r of Object.values(group)) expect(doc.components.responses[r.$ref.replace('#/components/responses/', '')]).toBeDefined();
    }
    expect(doc.components.responses.RouteNotFound.content['application/json'].schema.allOf[1]).toEqual({ properties: { error: { const: 'ROUTE_NOT_FOUND' } } });
    expect(doc.components.headers['X-Request-Id'].required).toBe(true);
    expect(doc.components.headers['Retry-After'].required).toBe(true);
    expect(doc.components.schemas.Quote.properties.currentBalance).toMatchObject({ type: 'integer', format: 'int64' });
    expect(doc.components.schemas.Quote.properties.currentBalance.maximum).toBeUndefined();
  });

  it('documents dashboard lockouts (423 + Retry-After) and both shapes of user creation (invitation or credentials)', () => {
    for (const [path, method] of [
      ['/auth/login', 'post'],
      ['/dashboard/approvals/{approvalId}/sign', 'post'],
      ['/dashboard/approvals/{approvalId}/reject', 'post'],
      ['/dashboard/batches/{batchId}/sign', 'post'],
      ['/dashboard/batches/{batchId}/reject', 'post'],
      ['/auth/invitations/confirm', 'post'],
    ] as const) {
      const locked = doc.paths[path]![method].responses['423'];
      expect(locked.description).toContain('ACCOUNT_LOCKED');
      expect(locked.headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
    }
    // A batch's approval: the batch back, and the refusals of a single approval, BATCH_NOT_FOUND for the batch.
    for (const path of ['/dashboard/batches/{batchId}/sign', '/dashboard/batches/{batchId}/reject']) {
      const op = doc.paths[path]!.post;
      expect(op.security).toEqual(doc.paths['/dashboard/approvals/{approvalId}/sign']!.post.security);
      expect(op.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Batch' });
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '401', '403', '404', '409', '422', '423']));
    }
    expect(doc.components.schemas.Batch.properties.approval).toBeDefined();
    const created = doc.paths['/admin/companies/{id}/users']!.post.responses['201'].content['application/json'].schema;
    expect(created).toEqual({ oneOf: [{ $ref: '#/components/schemas/InvitedDashboardUser' }, { $ref: '#/components/schemas/CreatedDashboardUser' }] });
    expect(doc.components.schemas.InvitedDashboardUser.required).toEqual(expect.arrayContaining(['invitationExpiresAt']));
    // The link only outside production (in production it goes to the user by e-mail: credentials reach only their owner).
    expect(doc.components.schemas.InvitedDashboardUser.required).not.toContain('invitationUrl');
    expect(doc.paths['/admin/companies/{id}/users']!.post.responses['202'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ApprovalRequest',
    });
    expect(Object.keys(doc.components.schemas.InvitedDashboardUser.properties)).not.toContain('totpSecret');
    for (const step of ['lookup', 'accept', 'confirm']) {
      const op = doc.paths[`/auth/invitations/${step}`]!.post;
      expect(op.security).toEqual([]);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '404', '410', '429']));
    }
  });

  it('documents a CSV-only route (text/csv as a string with its columns, its query fields) beside its JSON twin, and a body limit above 1 MiB', () => {
    const create = doc.paths['/transfers/batches']!.post;
    expect(Object.keys(create.requestBody.content)).toEqual(['application/json']);
    expect(create.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateBatchRequest' });
    const upload = doc.paths['/transfers/batches/csv']!.post;
    expect(upload.requestBody.required).toBe(true);
    expect(Object.keys(upload.requestBody.content)).toEqual(['text/csv']);
    const csv = upload.requestBody.content['text/csv'].schema;
    expect(csv.type).toBe('string');
    for (const column of ['amountCents', 'keyType', 'bankId', 'accountTypeId', 'documentTypeId', 'holderLastName']) expect(csv.description).toContain(column);
    for (const op of [create, upload]) {
      expect(op.description).toContain('Request body up to 10 MiB');
      expect(op.responses['413'].description).toContain('PAYLOAD_TOO_LARGE');
      expect(op.responses['415'].description).toContain('UNSUPPORTED_MEDIA_TYPE');
    }
    // Items are documented as sends, yet any value is taken (an item that is not a send is an invalid item, not a 400).
    expect(doc.components.schemas.CreateBatchRequest.properties.items.items.anyOf).toEqual([{ $ref: '#/components/schemas/SendTransferRequest' }, {}]);
    // A JSON-only route keeps one request type.
    expect(Object.keys(doc.paths['/transfers/send']!.post.requestBody.content)).toEqual(['application/json']);
    expect(doc.paths['/transfers/batches/{id}/results.csv']!.get.responses['200'].content['text/csv']).toEqual({ schema: { type: 'string' } });
  });

  it('documents Idempotency-Key, Idempotent-Replayed and the two 409s on exactly the idempotent routes', () => {
    const idempotent = gw.routes.filter((r) => r.idempotent).map((r) => `${r.method} ${r.path}`);
    expect(idempotent).toEqual(
      expect.arrayContaining(['POST /transfers/send', 'POST /deposits/pse', 'POST /breb/collect-keys', 'POST /breb/collect-keys/{id}/qr']),
    );
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    expect(doc.components.headers['Idempotent-Replayed']).toBeDefined();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const isIdempotent = idempotent.includes(`${method.toUpperCase()} ${path}`);
        const hasParam = op.parameters.some((p: any) => p.$ref === '#/components/parameters/IdempotencyKey');
        expect(`${method} ${path}: ${hasParam}`).toBe(`${method} ${path}: ${isIdempotent}`);
        if (!isIdempotent) continue;
        expect(op.responses['409'].description).toContain('IDEMPOTENCY_KEY_REUSED');
        expect(op.responses['409'].description).toContain('IDEMPOTENCY_KEY_IN_USE');
        expect(op.responses['400'].description).toContain('INVALID_REQUEST');
        const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
        for (const s of success) expect(op.responses[s].headers['Idempotent-Replayed']).toEqual({ $ref: '#/components/headers/Idempotent-Replayed' });
        expect(op.responses['429'].headers['Idempotent-Replayed']).toBeUndefined();
      }
    }
  });

  it('leaves every optional request field optional in generated clients: a default is stated (description, x-default), never a `default` keyword', () => {
    const inputs: unknown[] = [];
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) {
        for (const c of Object.values(op.requestBody?.content ?? {}) as { schema: unknown }[]) inputs.push(c.schema);
        for (const p of op.parameters ?? []) inputs.push(p.schema);
      }
    }
    const seen = new Set<string>();
    const defaults: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (!node || typeof node !== 'object') return;
      const ref = (node as { $ref?: string }).$ref;
      if (ref && !seen.has(ref)) {
        seen.add(ref);
        walk(doc.components.schemas[ref.split('/').pop()!], ref);
      }
      if ('default' in (node as object)) defaults.push(at);
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`);
    };
    inputs.forEach((s, i) => walk(s, `input ${i}`));
    expect(defaults).toEqual([]);
    const resolveKey = doc.components.schemas.ResolveKeyRequest.properties.keyType;
    expect(resolveKey['x-default']).toBe('AUTO');
    expect(resolveKey.description).toContain('Default: `"AUTO"`.');
    expect(doc.components.schemas.ResolveKeyRequest.required ?? []).not.toContain('keyType');
  });

  it('declares the provider callbacks signed (providerSignature: the X-Provider-Signature header), every other public route open', () => {
    expect(doc.components.securitySchemes.providerSignature).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Provider-Signature' });
    for (const path of ['/webhooks/rails/{rail}', '/webhooks/pse', '/webhooks/breb/incoming']) {
      expect(doc.paths[path]!.post.security).toEqual([{ providerSignature: [] }]);
    }
    expect(doc.paths['/openapi.json']!.get.security).toEqual([]);
  });

  it('names an absolute base URL in servers (generated clients need one)', () => {
    expect((doc as unknown as { servers: unknown }).servers).toEqual([
      { url: 'http://localhost:8080', description: 'This installation (GATEWAY_PUBLIC_URL).' },
    ]);
  });
});
