import { z } from 'zod';
import type { ExceptionResolutions } from '../../../app/exception-resolutions.js';
import type { MoneyExceptions } from '../../../app/money-exceptions.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { approvalRequestToApi } from '../approval-requests/presenters.js';
import { PENDING_APPROVAL_RESPONSE } from '../approval-requests/schemas.js';
import { exceptionToApi } from './presenters.js';
import { ExceptionQuery, MoneyExceptionSchema, ResolveBody } from './schemas.js';

/**
 * Money exceptions (CONTRACT §10): listed across their owners and resolved at the owner
 * (app/money-exceptions.ts); by two operators where the resolution is a person's judgement
 * (app/exception-resolutions.ts).
 */
export function adminExceptionsRoutes(exceptions: MoneyExceptions, resolutions: ExceptionResolutions): AnyRoute[] {
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
      summary: 'Resolve a money exception, posting its correcting entry; by an operator, once a second operator approves (retry and rerun aside)',
      description: [
        "The exception is won for the action first (two operators cannot resolve it two ways), then the correcting entry is posted once, then it is RESOLVED. Calling again with the same action after an interruption finishes it. A reconciliation break resolved by `rerun` reconciles its rail and day again before answering: 409 `BREAK_STILL_PRESENT` (the exception stays OPEN) when the provider's report still shows it.",
        "**Maker-checker.** Nothing that moves money or closes a case on a person's judgement is done by one person alone: a named operator's `write_off`, `credit`, `accept_provider`, `return`, `dismiss` or `explain` changes nothing at the exception's owner and answers 202 with an approval request (`EXCEPTION_RESOLVE`, PENDING_APPROVAL, payload `{ exceptionId, action, note }`) that a second, independent operator approves (POST /admin/approval-requests/{id}/approve): the exception is then resolved, `resolvedBy` naming both (`operator:<requester>+operator:<approver>`). The exception is read first, so an unknown one is 404 `EXCEPTION_NOT_FOUND`, an action its kind does not admit 400, and one not OPEN 409 `EXCEPTION_NOT_OPEN`, with no request made. One open request per exception: the same action and note again return it; another action or note is 409 `APPROVAL_REQUEST_NOT_PENDING` naming it (`details.openRequestId`; reject it first). An exception resolved otherwise while a request waits ends that request FAILED at its approval (`errorCode`, e.g. `EXCEPTION_NOT_OPEN`). `retry` and `rerun` (the system runs again what it would do anyway) are one operator's, as is everything the shared development token does.",
      ].join('\n\n'),
      auth: { kind: 'admin' },
      // The audit rows are written here: REQUESTED before the owner's call, or the request in its transaction.
      audit: { change: 'gateway' },
      params: z.object({ id: z.string().regex(/^exc_[0-9a-f]{32}$/) }),
      paramErrors: { id: 'EXCEPTION_NOT_FOUND' },
      body: ResolveBody,
      responses: {
        200: { description: 'The resolved exception.', schema: MoneyExceptionSchema },
        202: {
          ...PENDING_APPROVAL_RESPONSE,
          description:
            "A named operator's resolution by judgement (`write_off`, `credit`, `accept_provider`, `return`, `dismiss`, `explain`): nothing changed yet; the approval request (EXCEPTION_RESOLVE, PENDING_APPROVAL) that a second, independent operator approves at POST /admin/approval-requests/{id}/approve.",
        },
      },
      errors: [
        'EXCEPTION_NOT_FOUND',
        'EXCEPTION_NOT_OPEN',
        'BREAK_STILL_PRESENT',
        'REPORT_NOT_AVAILABLE',
        'CASE_NOT_FINAL',
        'MOVEMENT_ALREADY_CORRECTED',
        'APPROVAL_REQUEST_NOT_PENDING',
        'SERVICE_UNAVAILABLE',
      ],
      handler: async ({ params, body, call, admin, audit }) => {
        // The resolver, when direct: `operator:<id>`, or `admin` for the shared token (development).
        const out = await resolutions.resolve({ id: params.id, action: body.action, note: body.note }, admin!, call, audit!);
        if ('approval' in out) return { status: 202, body: approvalRequestToApi(out.approval) };
        return { status: 200, body: exceptionToApi(out.done) };
      },
    }),
  ];
}
