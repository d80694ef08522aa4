import { z } from 'zod';
import type { AdminAudit } from '../../../audit/admin-audit.js';
import { isoDate } from '../../../http/schemas.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { instantParam, uuidSchema, queryInt } from '../../../http/validation.js';

const Outcome = z.enum(['REQUESTED', 'SUCCEEDED', 'FAILED']);
const Json = z.unknown();

export const AuditEntrySchema = z
  .object({
    id: z.string(),
    at: isoDate(),
    principal: z.object({
      kind: z.enum(['operator', 'bootstrap-token', 'anonymous']).meta({ description: '`anonymous`: a login or enrollment before anyone is identified.' }),
      operatorId: z.string().nullable(),
      email: z.string().nullable(),
    }),
    action: z.string().meta({ description: 'The operationId of the route (e.g. `adminCreditWallet`, `adminLogin`).' }),
    method: z.string(),
    route: z.string().meta({ description: 'Route template, e.g. `/admin/companies/{id}`.' }),
    targets: z.record(z.string(), z.string()).meta({ description: 'Ids the action touched, by name (companyId, keyId, operatorId, creditRequestId…).' }),
    requestId: z.string(),
    clientIp: z.string().nullable(),
    outcome: Outcome.meta({
      description:
        'REQUESTED: written before a change another service makes (or before the ledger credit of an approval), so an interruption shows; SUCCEEDED / FAILED: the outcome (`errorCode` on failure).',
    }),
    errorCode: z.string().nullable(),
    request: Json.meta({ description: 'Path parameters, query and body, secrets replaced by "[redacted]".' }),
    before: Json.meta({ description: 'The resource before the change, where the gateway holds it; null otherwise.' }),
    after: Json.meta({ description: 'The resource after the change, or the answer; secrets redacted.' }),
  })
  .meta({ id: 'AuditEntry' });

const AuditQuery = z.strictObject({
  operatorId: uuidSchema().optional(),
  principalKind: z.enum(['operator', 'bootstrap-token', 'anonymous']).optional(),
  action: z
    .string()
    .regex(/^[A-Za-z]{1,80}$/)
    .optional()
    .meta({ description: 'An operationId, e.g. adminCreditWallet.' }),
  targetId: z
    .string()
    .regex(/^[A-Za-z0-9._:@+-]{1,200}$/)
    .optional()
    .meta({ description: "Any id among the entry's targets (a company, key, operator, credit request id…)." }),
  outcome: Outcome.optional(),
  from: instantParam().optional().meta({ description: 'At or after (RFC 3339 with offset; microseconds kept).', example: '2026-11-28T16:39:52.123456Z' }),
  to: instantParam().optional().meta({ description: 'Before (RFC 3339 with offset; microseconds kept).', example: '2026-11-28T16:39:52.123456Z' }),
  limit: queryInt(1, 100, 50),
  cursor: z.string().max(100).optional(),
});

/** The admin audit log: who did what, when, to what, with what outcome. Append-only. */
export function adminAuditRoutes(audit: AdminAudit): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/admin/audit',
      operationId: 'adminListAudit',
      tags: ['Admin'],
      summary: 'The audit log of admin actions, newest first',
      description:
        'One entry per admin action (every mutating /admin route, operator logins and failed logins) and outcome. The table refuses UPDATE, DELETE and TRUNCATE: entries are never changed or removed. Requests refused before reaching the action (no or wrong credential, invalid input) are not entries.',
      auth: { kind: 'admin' },
      query: AuditQuery,
      responses: {
        200: { description: 'Entries; `nextCursor` pages on.', schema: z.object({ items: z.array(AuditEntrySchema), nextCursor: z.string().nullable() }) },
      },
      handler: async ({ query }) => ({ status: 200, body: await audit.list(query) }),
    }),
  ];
}
