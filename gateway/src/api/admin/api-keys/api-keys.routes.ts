import { z } from 'zod';
import type { AdminChanges } from '../../../app/admin-changes.js';
import type { ApiKeyAdmin, ApiKeyRecord } from '../../../app/api-key-admin.js';
import { adminSecurityActor } from '../../../app/security-notices.js';
import { ApiKeySchema, CreatedApiKeySchema } from './schemas.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { textSchema, uuidSchema } from '../../../http/validation.js';
import { approvalRequestToApi } from '../approval-requests/presenters.js';
import { PENDING_APPROVAL_RESPONSE } from '../approval-requests/schemas.js';

export function apiKeyToApi(k: ApiKeyRecord) {
  return {
    id: k.id,
    prefix: k.prefix,
    scope: k.scope,
    label: k.label,
    apiVersion: k.apiVersion,
    createdAt: k.createdAt,
    lastUsedAt: k.lastUsedAt,
    revokedAt: k.revokedAt,
  };
}

export const CreateApiKeyBody = z
  .strictObject({
    scope: z.enum(['READ', 'WRITE']).meta({ description: 'WRITE includes everything READ allows.' }),
    label: textSchema(1, 100).meta({ description: 'Free text, e.g. the environment ("produccion", "staging").' }),
  })
  .meta({ id: 'CreateApiKeyRequest' });

const CompanyParams = z.object({ id: uuidSchema() });
const KeyParams = z.object({ id: uuidSchema(), keyId: uuidSchema() });

export function adminApiKeyRoutes(keys: ApiKeyAdmin, changes: AdminChanges): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/admin/companies/{id}/api-keys',
      operationId: 'adminCreateApiKey',
      tags: ['Admin'],
      summary: 'Issue an API key (delivered to the company; a WRITE key by an operator waits for a second operator)',
      description:
        "The key goes by e-mail to every active ADMIN of the company's dashboard (409 COMPANY_ADMIN_REQUIRED in production when there is none) and the company is told (`company.security_changed`). Outside production the answer also shows it once (`key`); in production never. A WRITE key (it moves money) asked for by a named operator answers 202 with an approval request: issued only once a second, independent operator approves it, after the notice delay.",
      auth: { kind: 'admin' },
      params: CompanyParams,
      paramErrors: { id: 'COMPANY_NOT_FOUND' },
      body: CreateApiKeyBody,
      responses: {
        201: { description: 'The new key (`key` outside production only; never retrievable later).', schema: CreatedApiKeySchema },
        202: PENDING_APPROVAL_RESPONSE,
      },
      errors: ['COMPANY_NOT_FOUND', 'COMPANY_ADMIN_REQUIRED', 'APPROVAL_REQUEST_NOT_PENDING'],
      handler: async ({ params, body, admin, audit }) => {
        const out = await changes.issueApiKey(params.id, body, admin!, audit!);
        if ('approval' in out) return { status: 202, body: approvalRequestToApi(out.approval) };
        const k = out.done;
        return {
          status: 201,
          body: {
            id: k.id,
            ...(out.credentials?.key ? { key: out.credentials.key } : {}),
            prefix: k.prefix,
            scope: k.scope,
            label: k.label,
            apiVersion: k.apiVersion,
            createdAt: k.createdAt,
          },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/companies/{id}/api-keys',
      operationId: 'adminListApiKeys',
      tags: ['Admin'],
      summary: "List a company's API keys (never the secrets)",
      auth: { kind: 'admin' },
      params: CompanyParams,
      paramErrors: { id: 'COMPANY_NOT_FOUND' },
      responses: { 200: { description: 'Keys, oldest first.', schema: z.object({ items: z.array(ApiKeySchema) }) } },
      errors: ['COMPANY_NOT_FOUND'],
      handler: async ({ params }) => ({ status: 200, body: { items: (await keys.list(params.id)).map(apiKeyToApi) } }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/admin/companies/{id}/api-keys/{keyId}',
      operationId: 'adminRevokeApiKey',
      tags: ['Admin'],
      summary: 'Revoke an API key (idempotent; stops working at once)',
      auth: { kind: 'admin' },
      params: KeyParams,
      paramErrors: { id: 'COMPANY_NOT_FOUND', keyId: 'API_KEY_NOT_FOUND' },
      responses: { 200: { description: 'The key with `revokedAt`.', schema: ApiKeySchema } },
      errors: ['COMPANY_NOT_FOUND', 'API_KEY_NOT_FOUND'],
      handler: async ({ params, audit, admin }) => ({
        status: 200,
        body: apiKeyToApi(await keys.revoke(params.id, params.keyId, audit, adminSecurityActor(admin))),
      }),
    }),
  ];
}
