import { z } from 'zod';
import { counterpartyView } from '@wallet/platform';
import type { TransferClient } from '../../clients/transfer-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { requestHash } from '../transfers/presenters.js';
import { createCounterpartyRequest, inApiTerms, updateCounterpartyRequest } from './requests.js';
import { COUNTERPARTY_ID, CounterpartiesQuery, CounterpartyPageSchema, CounterpartySchema, CreateCounterpartyBody, UpdateCounterpartyBody } from './schemas.js';

const TAGS = ['Counterparties'];
const params = z.object({ id: COUNTERPARTY_ID });
const paramErrors = { id: 'COUNTERPARTY_NOT_FOUND' } as const;
const NOT_YOURS = "Another company's counterparty, a deleted one and a malformed id answer 404 `COUNTERPARTY_NOT_FOUND`.";

/** The service's field paths in the API's names (the key's `keyType`, `keyValue`). */
async function api<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw inApiTerms(err);
  }
}

/** Counterparties (payees, docs/counterparties.md): the transfer service's, scoped to the caller's company. */
export function counterpartyRoutes(transfers: TransferClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/counterparties',
      operationId: 'createCounterparty',
      tags: TAGS,
      summary: 'Save a payee (a Bre-B key or a bank account) and start its verification',
      description:
        '201 with the counterparty. Its verification starts at once: a Bre-B key is looked up in the directory and its holder compared with the name and document given (the answer is usually already `VERIFIED` or `FAILED`; `PENDING` if the directory did not answer, retried later); a bank account gets an ACH prenote (`PENDING` until the bank answers, typically minutes). ' +
        'Poll GET /counterparties/{id} or subscribe to the webhooks `counterparty.verified` and `counterparty.verification_failed`.\n\n' +
        '**Idempotency-Key** is bound to the counterparty it creates, for good: the same key and body answer that counterparty again (201, `Idempotent-Replayed: true` within 30 days), another body 409 `IDEMPOTENCY_KEY_REUSED`. After an unknown outcome (5xx, a time-out) retry with the same key and body at once.',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      // Each create may look a Bre-B key up in the directory: counted with resolve-key, so it is no way around that limit.
      rateClass: 'RESOLVE_KEY',
      idempotent: 'bound',
      body: CreateCounterpartyBody,
      responses: { 201: { description: 'The counterparty, its verification under way or decided.', schema: CounterpartySchema } },
      // A value that is no key of its keyType (a PHONE that is no mobile number): 422, as for a send.
      errors: ['INVALID_KEY', 'SERVICE_UNAVAILABLE'],
      handler: async ({ body, call, idempotencyKey }) => {
        const c = await api(transfers.createCounterparty(createCounterpartyRequest(body, { key: idempotencyKey, requestHash: requestHash(body) }), call));
        return { status: 201, body: counterpartyView(c) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/counterparties',
      operationId: 'listCounterparties',
      tags: TAGS,
      summary: 'Your counterparties, newest first (cursor pagination), by tag, verification status or rail',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: CounterpartiesQuery,
      responses: { 200: { description: 'A page of counterparties.', schema: CounterpartyPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await api(
          transfers.listCounterparties({ tag: query.tag, status: query.status, rail: query.rail, limit: query.limit, cursor: query.cursor }, call),
        );
        return { status: 200, body: { items: r.items.map(counterpartyView), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/counterparties/{id}',
      operationId: 'getCounterparty',
      tags: TAGS,
      summary: 'One counterparty with its verification',
      description: NOT_YOURS,
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params,
      paramErrors,
      responses: { 200: { description: 'The counterparty.', schema: CounterpartySchema } },
      errors: ['COUNTERPARTY_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params: p, call }) => ({ status: 200, body: counterpartyView(await transfers.getCounterparty({ id: p.id }, call)) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/counterparties/{id}',
      operationId: 'updateCounterparty',
      tags: TAGS,
      summary: 'Change a counterparty: name, tags, key, account or holder',
      description:
        'Only the fields given change. A new key, account or holder document or name starts a new verification at once, as a create does (`PENDING`, or already decided for a key): the old result is forgotten, and a late answer to an old prenote is ignored. A new name or tags keep the verification. ' +
        NOT_YOURS,
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'RESOLVE_KEY',
      params,
      paramErrors,
      body: UpdateCounterpartyBody,
      responses: { 200: { description: 'The counterparty as it is now.', schema: CounterpartySchema } },
      errors: ['COUNTERPARTY_NOT_FOUND', 'INVALID_KEY', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params: p, body, call }) => ({
        status: 200,
        body: counterpartyView(await api(transfers.updateCounterparty(updateCounterpartyRequest(p.id, body), call))),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/counterparties/{id}',
      operationId: 'deleteCounterparty',
      tags: TAGS,
      summary: 'Delete a counterparty (answers it as it was)',
      description: `It is no longer listed or found, and a verification in flight is no longer looked at. ${NOT_YOURS}`,
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'READS',
      params,
      paramErrors,
      responses: { 200: { description: 'The deleted counterparty.', schema: CounterpartySchema } },
      errors: ['COUNTERPARTY_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params: p, call }) => ({ status: 200, body: counterpartyView(await transfers.deleteCounterparty({ id: p.id }, call)) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/counterparties/{id}/verify',
      operationId: 'verifyCounterparty',
      tags: TAGS,
      summary: 'Verify a counterparty again',
      description:
        'A new verification of a VERIFIED, FAILED or UNVERIFIED counterparty, run as at creation: 200 when it is already decided (a Bre-B key: the directory answered), 202 while it is `PENDING` (an ACH prenote). ' +
        `While one is under way: 409 \`COUNTERPARTY_VERIFICATION_IN_PROGRESS\`. ${NOT_YOURS}`,
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'RESOLVE_KEY',
      params,
      paramErrors,
      body: z.strictObject({}).meta({ id: 'VerifyCounterpartyRequest' }),
      responses: {
        200: { description: 'The counterparty, its new verification decided.', schema: CounterpartySchema },
        202: { description: 'The counterparty, its new verification PENDING.', schema: CounterpartySchema },
      },
      errors: ['COUNTERPARTY_NOT_FOUND', 'COUNTERPARTY_VERIFICATION_IN_PROGRESS', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params: p, call }) => {
        const c = counterpartyView(await transfers.verifyCounterparty({ id: p.id }, call));
        return { status: c.verification.status === 'PENDING' ? 202 : 200, body: c };
      },
    }),
  ];
}
