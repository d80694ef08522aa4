import { z } from 'zod';
import { AppError, formatInstant } from '@wallet/platform';
import { adminActor } from '../../../auth/admin-principal.js';
import { collectKeyV1, depositV1, reconciliationV1, transferV1, type exceptionsV1 } from '@wallet/proto';
import type { CollectKeyClient } from '../../../clients/collect-key-client.js';
import type { DepositClient } from '../../../clients/deposit-client.js';
import type { TransferClient } from '../../../clients/transfer-client.js';
import type { ReconciliationClient } from '../../../clients/reconciliation-client.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { isoDate } from '../../../http/schemas.js';
import { textSchema } from '../../../http/validation.js';

/**
 * The kinds each owning service keeps, as its proto declares them (`…ExceptionKind`: the wire text
 * is the value's name without the prefix, which is the generated enum's member name).
 */
type KindOf<E> = Exclude<keyof E, 'UNSPECIFIED' | 'UNRECOGNIZED'> & string;
const kindsOf = <E extends Record<string, string>>(e: E): readonly KindOf<E>[] =>
  Object.keys(e).filter((k) => k !== 'UNSPECIFIED' && k !== 'UNRECOGNIZED') as KindOf<E>[];
const TRANSFER_KINDS = kindsOf(transferV1.TransferExceptionKind);
const DEPOSIT_KINDS = kindsOf(depositV1.DepositExceptionKind);
/** Inbound Bre-B payments: CREDIT_REFUSED is the same kind as PSE's (the ledger refused a credit both ask for). */
const COLLECT_KEY_KINDS = kindsOf(collectKeyV1.CollectKeyExceptionKind);
const RECONCILIATION_KINDS = kindsOf(reconciliationV1.ReconciliationExceptionKind);
const KINDS = [...new Set([...TRANSFER_KINDS, ...DEPOSIT_KINDS, ...COLLECT_KEY_KINDS, ...RECONCILIATION_KINDS])];
/** Resolutions of the reconciliation's exceptions: no other service's kind admits them. */
const RECONCILIATION_ACTIONS = ['accept_provider', 'explain', 'rerun'] as const;
const ACTIONS = ['write_off', 'credit', 'retry', 'return', 'dismiss', ...RECONCILIATION_ACTIONS] as const;

export const MoneyExceptionSchema = z.object({
  id: z.string().meta({ description: '`exc_…`' }),
  kind: z.enum(KINDS),
  status: z.enum(['OPEN', 'RESOLVING', 'RESOLVED']),
  rail: z.enum(['BREB', 'ACH', 'PSE']),
  resourceId: z.string().meta({ description: 'The transfer (UUID), PSE deposit or inbound Bre-B payment (`dep_…`) the exception is about; for a reconciliation break, the break\'s key (`<rail>:<date>:<kind>:<ref>`).' }),
  companyId: z.string().meta({ description: 'The company concerned; empty when the break has no record of ours (e.g. `MISSING_IN_OUR_BOOKS`).' }),
  ours: z.record(z.string(), z.unknown()).meta({ description: 'Our record when the contradiction arrived.' }),
  theirs: z.record(z.string(), z.unknown()).meta({ description: 'What the provider (or the ledger) said.' }),
  openedAt: isoDate(),
  resolvedAt: isoDate().nullable(),
  resolvedBy: z.string().nullable(),
  action: z.string().nullable(),
  note: z.string().nullable(),
  actions: z.array(z.enum(ACTIONS)).meta({ description: 'The resolutions this kind admits.' }),
  movement: z.string().nullable().meta({
    description: 'The external movement it is about: `<rail>:our:<our id>` (payouts on `breb`/`ach`, `pse` with `:payment` or `:reversal`), `breb-inbound:<provider id>`. An owner\'s exception and a reconciliation break with the same movement are one case: `GET /admin/exceptions?movement=…` lists them together, and only one correcting entry is ever posted for it.',
    example: 'breb:our:2104c478-7604-4ac2-a58d-dd9136a5adcf',
  }),
}).meta({ id: 'MoneyException' });

const ExceptionQuery = z.strictObject({
  status: z.enum(['OPEN', 'RESOLVING', 'RESOLVED']).optional(),
  kind: z.enum(KINDS).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(300).optional(),
  movement: z.string().max(220).regex(/^(breb|ach|pse|breb-inbound):[\x21-\x7e]+$/).optional()
    .meta({ description: 'Only the exceptions about this external movement (the `movement` of an item): the owner\'s and the reconciliation\'s together.', example: 'breb:our:2104c478-7604-4ac2-a58d-dd9136a5adcf' }),
});

const ResolveBody = z.strictObject({
  action: z.enum(ACTIONS).meta({
    description: '`write_off` (transfers): the payout the rail made after we released its funds is booked against operational losses (the company keeps its refund). `credit` (PSE): the payment is credited to the company once, as a late confirmation would have been. `retry`: run again a ledger step that was refused (e.g. once the wallet exists). `return` (an inbound Bre-B payment whose credit was refused): it is held, then returned to the payer through the Bre-B network. `dismiss`: no entry; the note says why. Reconciliation breaks: `accept_provider` (the provider\'s side is right: a correcting entry moves the difference between the rail\'s clearing account and reconciliation differences), `explain` (no entry; the note explains the difference), `rerun` (the break\'s rail and day are reconciled again now: RESOLVED if the break is gone, else 409 `BREAK_STILL_PRESENT`). Each exception lists the actions its kind admits. One case per external movement: a correcting entry is posted at most once per movement, whichever case asks (409 `MOVEMENT_ALREADY_CORRECTED` names the case that did, in `details.caseId`); `accept_provider` waits for the owner (409 `CASE_NOT_FINAL`, `details.reason` `pending` | `open_exception` | `step_owed`, with `ownerExceptionId`), and on a movement the owner\'s case already corrected it resolves the break as `linked` without a second entry.',
  }),
  note: textSchema(1, 500),
}).meta({ id: 'ResolveExceptionRequest' });

const parse = (json: string): Record<string, unknown> => {
  try { return JSON.parse(json) as Record<string, unknown>; } catch { return {}; }
};

type WireException = exceptionsV1.MoneyException;

export function exceptionToApi(e: WireException) {
  return {
    id: e.id, kind: e.kind, status: e.status, rail: e.rail, resourceId: e.resourceId, companyId: e.companyId,
    ours: parse(e.oursJson), theirs: parse(e.theirsJson), openedAt: formatInstant(e.openedAt ?? new Date(0)),
    resolvedAt: e.resolvedAt ? formatInstant(e.resolvedAt) : null, resolvedBy: e.resolvedBy ?? null,
    action: e.action ?? null, note: e.note ?? null, actions: e.actions, movement: e.movement ?? null,
  };
}

/** Newest first, then by id descending: the order each service lists in (opened_at is kept to the millisecond). */
const newestFirst = (a: WireException, b: WireException) =>
  (b.openedAt?.getTime() ?? 0) - (a.openedAt?.getTime() ?? 0) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * Money exceptions (CONTRACT §10): provider outcomes that contradict our state, for an operator to
 * resolve. Each owning service keeps its own (transfer: payouts; pse-deposit: PSE collections;
 * collect-key: inbound Bre-B payments; reconciliation: the breaks between a provider's settlement
 * report and our books); the listing merges them with one cursor that all of them understand (the
 * last item's opened_at and id).
 */
export function adminExceptionsRoutes(
  transfers: TransferClient, deposits: DepositClient, recon: ReconciliationClient, opts: { rerunDeadlineMs: number }, collectKeys?: CollectKeyClient,
): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/admin/exceptions', operationId: 'adminListExceptions', tags: ['Admin'],
      summary: 'Money exceptions, newest first',
      description: 'A provider outcome that contradicts our state (the rail paid a transfer whose funds we released, failed one it had completed, an outcome that cannot be known; a PSE payment confirmed too late or after a failure, a reversal of what was never paid; a credit the ledger refused for good, of a PSE deposit or of an inbound Bre-B payment to a collect key), or a reconciliation break (a provider\'s settlement report and our books disagree), kept until an operator resolves it. Nothing is deleted.',
      auth: { kind: 'admin' },
      query: ExceptionQuery,
      responses: { 200: { description: 'Exceptions; `nextCursor` pages on.', schema: z.object({ items: z.array(MoneyExceptionSchema), nextCursor: z.string().nullable() }) } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const q = {
          limit: query.limit, ...(query.status ? { status: query.status } : {}), ...(query.kind ? { kind: query.kind } : {}),
          ...(query.cursor ? { cursor: query.cursor } : {}), ...(query.movement ? { movement: query.movement } : {}),
        };
        // A kind filter asks only the service that keeps that kind.
        const none = { items: [] as WireException[], nextCursor: undefined };
        const asks = (kinds: readonly string[]) => !query.kind || kinds.includes(query.kind);
        const [t, d, r, c] = await Promise.all([
          asks(TRANSFER_KINDS) ? transfers.listExceptions(q, call) : none,
          asks(DEPOSIT_KINDS) ? deposits.listExceptions(q, call) : none,
          asks(RECONCILIATION_KINDS) ? recon.listExceptions(q, call) : none,
          collectKeys && asks(COLLECT_KEY_KINDS) ? collectKeys.listExceptions(q, call) : none,
        ]);
        const merged = [...t.items, ...d.items, ...r.items, ...c.items].sort(newestFirst);
        const items = merged.slice(0, query.limit);
        const last = items[items.length - 1];
        // More after this page: items of one list were cut here, or a service said it has more.
        const nextCursor = (merged.length > query.limit || t.nextCursor || d.nextCursor || r.nextCursor || c.nextCursor) && last
          ? Buffer.from(`${last.openedAt!.toISOString()}|${last.id}`).toString('base64url')
          : null;
        return { status: 200, body: { items: items.map(exceptionToApi), nextCursor } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/admin/exceptions/{id}/resolve', operationId: 'adminResolveException', tags: ['Admin'],
      summary: 'Resolve a money exception, posting its correcting entry',
      description: 'The exception is won for the action first (two operators cannot resolve it two ways), then the correcting entry is posted once, then it is RESOLVED. Calling again with the same action after an interruption finishes it. A reconciliation break resolved by `rerun` reconciles its rail and day again before answering: 409 `BREAK_STILL_PRESENT` (the exception stays OPEN) when the provider\'s report still shows it.',
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      params: z.object({ id: z.string().regex(/^exc_[0-9a-f]{32}$/) }), paramErrors: { id: 'EXCEPTION_NOT_FOUND' },
      body: ResolveBody,
      responses: { 200: { description: 'The resolved exception.', schema: MoneyExceptionSchema } },
      errors: ['EXCEPTION_NOT_FOUND', 'EXCEPTION_NOT_OPEN', 'BREAK_STILL_PRESENT', 'REPORT_NOT_AVAILABLE', 'CASE_NOT_FINAL', 'MOVEMENT_ALREADY_CORRECTED', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call, admin }) => {
        // The resolver: `operator:<id>`, or `admin` for the shared token (development).
        const req = { id: params.id, action: body.action, note: body.note, resolvedBy: adminActor(admin!) };
        // Which service keeps the id is known from the action: the reconciliation's actions are
        // admitted by its kinds only, the others by transfer's and pse-deposit's. So the owner is
        // asked first (one round trip in the common case); the others are asked, in turn, only when
        // it has no such exception (a wrong action for the exception's kind, then answered by its
        // owner as a 400 naming the actions it admits; or an unknown id, 404). An owner answers
        // EXCEPTION_NOT_FOUND before anything else, so asking the wrong one changes nothing.
        const resolveAt = {
          transfer: () => transfers.resolveException(req, call),
          deposit: () => deposits.resolveException(req, call),
          reconciliation: () => recon.resolveException(req, call, body.action === 'rerun' ? { deadlineMs: opts.rerunDeadlineMs } : undefined),
          collectKey: () => (collectKeys ? collectKeys.resolveException(req, call) : Promise.reject(new AppError('EXCEPTION_NOT_FOUND'))),
        };
        const order = (RECONCILIATION_ACTIONS as readonly string[]).includes(body.action)
          ? [resolveAt.reconciliation, resolveAt.transfer, resolveAt.deposit, resolveAt.collectKey]
          : [resolveAt.transfer, resolveAt.deposit, resolveAt.collectKey, resolveAt.reconciliation];
        for (const [i, resolve] of order.entries()) {
          try {
            return { status: 200, body: exceptionToApi(await resolve()) };
          } catch (err) {
            if (!(err instanceof AppError && err.code === 'EXCEPTION_NOT_FOUND') || i === order.length - 1) throw err;
          }
        }
        throw new AppError('EXCEPTION_NOT_FOUND');
      },
    }),
  ];
}
