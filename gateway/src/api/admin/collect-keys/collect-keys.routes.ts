import { z } from 'zod';
import { adminActor } from '../../../auth/admin-principal.js';
import type { CollectKeyClient } from '../../../clients/collect-key-client.js';
import { collectKeyToApi } from '../../collect-keys/presenters.js';
import { ASSIGN_DESCRIPTION, AssignBody, DEPOSIT_ID, RETURN_DESCRIPTION, CollectKeySchema } from '../../collect-keys/schemas.js';
import { depositToApi } from '../../deposits/presenters.js';
import { DepositSchema } from '../../deposits/schemas.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { textSchema } from '../../../http/validation.js';

/** Operators' side of the Bre-B collect keys: an UNASSIGNED payment assigned or returned with a note, a key suspended or reactivated. */
export function adminCollectKeyRoutes(keys: CollectKeyClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/admin/deposits/{id}/assign',
      operationId: 'adminAssignBrebDeposit',
      tags: ['Admin'],
      summary: 'Assign an UNASSIGNED Bre-B payment to its company',
      description: `${ASSIGN_DESCRIPTION} Any company's deposit; the note is kept in the payment's history and the admin audit log.`,
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      params: z.object({ id: DEPOSIT_ID }),
      paramErrors: { id: 'DEPOSIT_NOT_FOUND' },
      body: AssignBody.extend({ note: textSchema(1, 500) }).meta({ id: 'AdminAssignDepositRequest' }),
      responses: { 200: { description: 'The deposit, ASSIGNED.', schema: DepositSchema } },
      errors: ['DEPOSIT_NOT_FOUND', 'KEY_NOT_FOUND', 'KEY_NOT_ACTIVE', 'INVALID_STATE_TRANSITION', 'FAST_WALLET_MISSING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call, admin }) => ({
        status: 200,
        body: depositToApi(
          await keys.assignPayment(
            { depositId: params.id, ...(body.keyId ? { keyId: body.keyId } : {}), note: body.note, assignedBy: adminActor(admin!) },
            call,
          ),
        ),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/deposits/{id}/return',
      operationId: 'adminReturnBrebDeposit',
      tags: ['Admin'],
      summary: 'Return an UNASSIGNED Bre-B payment to the payer',
      description: `${RETURN_DESCRIPTION} Any company's deposit; the note is kept in the payment's history and the admin audit log.`,
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      params: z.object({ id: DEPOSIT_ID }),
      paramErrors: { id: 'DEPOSIT_NOT_FOUND' },
      body: z.strictObject({ note: textSchema(1, 500) }).meta({ id: 'AdminReturnDepositRequest' }),
      responses: { 200: { description: 'The deposit, REVERSED (returned to the payer).', schema: DepositSchema } },
      errors: ['DEPOSIT_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call, admin }) => ({
        status: 200,
        body: depositToApi(await keys.returnPayment({ depositId: params.id, note: body.note, returnedBy: adminActor(admin!) }, call)),
      }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/admin/collect-keys/{id}',
      operationId: 'adminSetCollectKeyState',
      tags: ['Admin'],
      summary: 'Suspend or reactivate a collect key',
      auth: { kind: 'admin' },
      params: z.object({ id: z.string().regex(/^bkey_[A-Za-z0-9]{4,64}$/) }),
      paramErrors: { id: 'KEY_NOT_FOUND' },
      body: z.strictObject({ state: z.enum(['ACTIVE', 'SUSPENDED']) }).meta({ id: 'SetCollectKeyStateRequest' }),
      responses: { 200: { description: 'The key.', schema: CollectKeySchema } },
      errors: ['KEY_NOT_FOUND', 'KEY_NOT_ACTIVE', 'INVALID_STATE_TRANSITION', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => ({ status: 200, body: collectKeyToApi(await keys.setKeyState({ id: params.id, state: body.state }, call)) }),
    }),
  ];
}
