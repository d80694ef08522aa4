import { z } from 'zod';
import { transferV1 } from '@wallet/proto';
import type { TransferClient } from '../../transfer/transfer-client.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { isoDate } from '../api-schemas.js';
import { textSchema } from '../validation.js';

const KINDS = ['RAIL_COMPLETED_AFTER_RELEASE', 'RAIL_FAILED_AFTER_COMPLETION', 'DISPATCH_OUTCOME_UNKNOWN', 'COMMIT_REFUSED', 'RELEASE_REFUSED'] as const;

export const MoneyExceptionSchema = z.object({
  id: z.string().meta({ description: '`exc_…`' }),
  kind: z.enum(KINDS),
  status: z.enum(['OPEN', 'RESOLVING', 'RESOLVED']),
  rail: z.enum(['BREB', 'ACH']),
  resourceId: z.string().meta({ description: 'The transfer the exception is about.' }),
  companyId: z.string(),
  ours: z.record(z.string(), z.unknown()).meta({ description: 'Our record when the contradiction arrived.' }),
  theirs: z.record(z.string(), z.unknown()).meta({ description: 'What the provider (or the ledger) said.' }),
  openedAt: isoDate(),
  resolvedAt: isoDate().nullable(),
  resolvedBy: z.string().nullable(),
  action: z.string().nullable(),
  note: z.string().nullable(),
  actions: z.array(z.enum(['write_off', 'dismiss'])).meta({ description: 'The resolutions this kind admits.' }),
}).meta({ id: 'MoneyException' });

const ExceptionQuery = z.strictObject({
  status: z.enum(['OPEN', 'RESOLVING', 'RESOLVED']).optional(),
  kind: z.enum(KINDS).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(300).optional(),
});

const ResolveBody = z.strictObject({
  action: z.enum(['write_off', 'dismiss']).meta({
    description: '`write_off`: the payout the rail made after we released its funds is booked against operational losses (the company keeps its refund). `dismiss`: no entry; the note says why.',
  }),
  note: textSchema(1, 500),
}).meta({ id: 'ResolveExceptionRequest' });

const parse = (json: string): Record<string, unknown> => {
  try { return JSON.parse(json) as Record<string, unknown>; } catch { return {}; }
};

export function exceptionToApi(e: transferV1.MoneyException) {
  return {
    id: e.id, kind: e.kind, status: e.status, rail: e.rail, resourceId: e.resourceId, companyId: e.companyId,
    ours: parse(e.oursJson), theirs: parse(e.theirsJson), openedAt: (e.openedAt ?? new Date(0)).toISOString(),
    resolvedAt: e.resolvedAt ? e.resolvedAt.toISOString() : null, resolvedBy: e.resolvedBy ?? null,
    action: e.action ?? null, note: e.note ?? null, actions: e.actions,
  };
}

/** Money exceptions (CONTRACT §10): provider outcomes that contradict our state, for an operator to resolve. */
export function adminExceptionsRoutes(transfers: TransferClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/admin/exceptions', operationId: 'adminListExceptions', tags: ['Admin'],
      summary: 'Money exceptions, newest first',
      description: 'A provider outcome that contradicts our state (the rail paid a transfer whose funds we released, failed one it had completed, an outcome that cannot be known), kept until an operator resolves it. Nothing is deleted.',
      auth: { kind: 'admin' },
      query: ExceptionQuery,
      responses: { 200: { description: 'Exceptions; `nextCursor` pages on.', schema: z.object({ items: z.array(MoneyExceptionSchema), nextCursor: z.string().nullable() }) } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await transfers.listExceptions({
          limit: query.limit, ...(query.status ? { status: query.status } : {}), ...(query.kind ? { kind: query.kind } : {}),
          ...(query.cursor ? { cursor: query.cursor } : {}),
        }, call);
        return { status: 200, body: { items: r.items.map(exceptionToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/admin/exceptions/{id}/resolve', operationId: 'adminResolveException', tags: ['Admin'],
      summary: 'Resolve a money exception, posting its correcting entry',
      description: 'The exception is won for the action first (two operators cannot resolve it two ways), then the correcting entry is posted once, then it is RESOLVED. Calling again with the same action after an interruption finishes it.',
      auth: { kind: 'admin' },
      params: z.object({ id: z.string().regex(/^exc_[0-9a-f]{32}$/) }), paramErrors: { id: 'EXCEPTION_NOT_FOUND' },
      body: ResolveBody,
      responses: { 200: { description: 'The resolved exception.', schema: MoneyExceptionSchema } },
      errors: ['EXCEPTION_NOT_FOUND', 'EXCEPTION_NOT_OPEN', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => {
        // One shared admin token today: the resolver is recorded as `admin` (named operators: CONTRACT §10, later).
        const e = await transfers.resolveException({ id: params.id, action: body.action, note: body.note, resolvedBy: 'admin' }, call);
        return { status: 200, body: exceptionToApi(e) };
      },
    }),
  ];
}
