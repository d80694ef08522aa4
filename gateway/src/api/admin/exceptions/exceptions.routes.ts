import { z } from 'zod';
import { adminActor } from '../../../auth/admin-principal.js';
import type { MoneyExceptions } from '../../../app/money-exceptions.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { exceptionToApi } from './presenters.js';
import { ExceptionQuery, MoneyExceptionSchema, ResolveBody } from './schemas.js';

/** Money exceptions (CONTRACT §10): listed across their owners and resolved at the owner (app/money-exceptions.ts). */
export function adminExceptionsRoutes(exceptions: MoneyExceptions): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/admin/exceptions',
      operationId: 'adminListExceptions',
      tags: ['Admin'],
      summary: 'Money exceptions, newest first',
      description:
        "A provider outcome that contradicts our state (the rail paid a transfer whose funds we released, failed one it had completed, an outcome that cannot be known; a PSE payment confirmed too late or after a failure, a reversal of what was never paid; a credit the ledger refused for good, of a PSE deposit or of an inbound Bre-B payment to a collect key; a return (devolución) of a credited payment whose hold the ledger refused to close, parked: `RETURN_CLOSE_REFUSED`, its `resourceId` the return's id), or a reconciliation break (a provider's settlement report and our books disagree), kept until an operator resolves it. Nothing is deleted.",
      auth: { kind: 'admin' },
      query: ExceptionQuery,
      responses: {
        200: {
          description: 'Exceptions; `nextCursor` pages on.',
          schema: z.object({ items: z.array(MoneyExceptionSchema), nextCursor: z.string().nullable() }),
        },
      },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const page = await exceptions.list(query, call);
        return { status: 200, body: { items: page.items.map(exceptionToApi), nextCursor: page.nextCursor } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/exceptions/{id}/resolve',
      operationId: 'adminResolveException',
      tags: ['Admin'],
      summary: 'Resolve a money exception, posting its correcting entry',
      description:
        "The exception is won for the action first (two operators cannot resolve it two ways), then the correcting entry is posted once, then it is RESOLVED. Calling again with the same action after an interruption finishes it. A reconciliation break resolved by `rerun` reconciles its rail and day again before answering: 409 `BREAK_STILL_PRESENT` (the exception stays OPEN) when the provider's report still shows it.",
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      params: z.object({ id: z.string().regex(/^exc_[0-9a-f]{32}$/) }),
      paramErrors: { id: 'EXCEPTION_NOT_FOUND' },
      body: ResolveBody,
      responses: { 200: { description: 'The resolved exception.', schema: MoneyExceptionSchema } },
      errors: [
        'EXCEPTION_NOT_FOUND',
        'EXCEPTION_NOT_OPEN',
        'BREAK_STILL_PRESENT',
        'REPORT_NOT_AVAILABLE',
        'CASE_NOT_FINAL',
        'MOVEMENT_ALREADY_CORRECTED',
        'SERVICE_UNAVAILABLE',
      ],
      handler: async ({ params, body, call, admin }) => {
        // The resolver: `operator:<id>`, or `admin` for the shared token (development).
        const resolved = await exceptions.resolve({ id: params.id, action: body.action, note: body.note, resolvedBy: adminActor(admin!) }, call);
        return { status: 200, body: exceptionToApi(resolved) };
      },
    }),
  ];
}
