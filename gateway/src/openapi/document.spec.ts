import { createApp } from '../app.js';
import { loadConfig } from '../config.js';
import { createLogger, type Database } from '@wallet/platform';
import type { Redis } from 'ioredis';
import type { LedgerClient } from '../ledger/ledger-client.js';
import type { TransferClient } from '../transfer/transfer-client.js';
import type { DepositClient } from '../deposit/deposit-client.js';
import type { CollectKeyClient } from '../collectkey/collect-key-client.js';
import type { ReceiptClient } from '../receipt/receipt-client.js';
import { toOpenApiPath } from '../http/route.js';
import { Validator } from '@seriousme/openapi-schema-validator';

// The app is composed with inert dependencies: these tests only look at what is registered and
// documented, and never send a request that would reach Postgres, Redis or the ledger.
function composeApp() {
  const config = loadConfig({ NODE_ENV: 'test' });
  return createApp({
    config, log: createLogger('test', 'silent'),
    db: {} as Database, ledger: {} as LedgerClient, transfer: {} as TransferClient, deposit: {} as DepositClient, collectKey: {} as CollectKeyClient, receipt: {} as ReceiptClient, redis: {} as Redis,
  });
}

describe('OpenAPI document', () => {
  const gw = composeApp();
  afterAll(() => gw.close());
  const doc = gw.openApiDocument() as { openapi: string; paths: Record<string, Record<string, any>>; components: any };

  it('types each response without a schema by what it is: JSON documents as objects, images and PDFs as binary, HTML as text', () => {
    const schemaOf = (path: string, media: string) => doc.paths[path]!.get.responses['200'].content[media].schema;
    expect(schemaOf('/openapi.json', 'application/json')).toEqual({ type: 'object' });
    expect(schemaOf('/asyncapi.json', 'application/json')).toEqual({ type: 'object' });
    expect(schemaOf('/breb/collect-keys/qr/{qrId}.png', 'image/png')).toEqual({ type: 'string', format: 'binary' });
    expect(schemaOf('/wallets/transactions/{id}/receipt.pdf', 'application/pdf')).toEqual({ type: 'string', format: 'binary' });
    expect(schemaOf('/docs', 'text/html')).toEqual({ type: 'string' });
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

  it('is OpenAPI 3.1 with the four security schemes (API key, admin token, operator session, dashboard session)', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['adminToken', 'apiKey', 'operatorSession', 'sessionToken']);
  });

  it('documents the operator routes, the audit log and the maker-checker credit', () => {
    for (const [method, path] of [
      ['post', '/admin/auth/login'], ['post', '/admin/auth/enroll'], ['post', '/admin/auth/logout'], ['get', '/admin/auth/me'],
      ['post', '/admin/operators'], ['get', '/admin/operators'], ['delete', '/admin/operators/{id}'], ['get', '/admin/audit'],
      ['get', '/admin/credit-requests'], ['get', '/admin/credit-requests/{id}'], ['post', '/admin/credit-requests/{id}/approve'], ['post', '/admin/credit-requests/{id}/reject'],
    ] as const) expect(doc.paths[path]?.[method]).toBeDefined();
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
    expect(paths['/admin/audit'].get.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['operatorId', 'action', 'targetId', 'from', 'to', 'cursor', 'limit']));
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

  it('documents Idempotency-Key, Idempotent-Replayed and the two 409s on exactly the idempotent routes', () => {
    const idempotent = gw.routes.filter((r) => r.idempotent).map((r) => `${r.method} ${r.path}`);
    expect(idempotent).toEqual(expect.arrayContaining(['POST /transfers/send', 'POST /deposits/pse', 'POST /breb/collect-keys', 'POST /breb/collect-keys/{id}/qr']));
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
});
