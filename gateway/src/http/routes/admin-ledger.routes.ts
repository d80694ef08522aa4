import { z } from 'zod';
import type { CreditRequestAdmin } from '../../app/credit-request-admin.js';
import type { LedgerAdmin } from '../../app/ledger-admin.js';
import { feeConfigToApi, movementToApi } from '../../ledger/presenters.js';
import { FeeConfigSchema, MovementSchema } from '../api-schemas.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { centsSchema, textSchema, uuidSchema } from '../validation.js';
import { CreditRequestSchema, creditRequestToApi } from './admin-credit-requests.routes.js';

export const CreditBody = z.strictObject({
  amountCents: centsSchema(1).meta({ description: 'Centavos to add (JSON integer).' }),
  reference: textSchema(1, 100).meta({ description: 'Operator reference; the credit is idempotent on it.' }),
}).meta({ id: 'AdminCreditRequest' });

export const FeeBody = z.strictObject({
  fixedFeeCents: centsSchema(0),
  variableBps: z.int().min(0).max(10_000).meta({ description: 'Basis points of the gross amount (0-10000).' }),
  companyId: uuidSchema().optional().meta({ description: "Omitted: the default for every company; set: that company's override." }),
}).meta({ id: 'SetFeeConfigRequest' });

const CreditParams = z.object({ id: uuidSchema(), rail: z.enum(['BREB', 'ACH']) });
const FeeParams = z.object({ operation: z.enum(['BREB_OUTFLOW', 'ACH_OUTFLOW', 'PSE_INFLOW', 'BREB_INFLOW']) });

export function adminLedgerRoutes(ledger: LedgerAdmin, requests: CreditRequestAdmin, dualControlCents: number): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST', path: '/admin/companies/{id}/wallets/{rail}/credit', operationId: 'adminCreditWallet', tags: ['Admin'],
      summary: 'Credit a wallet (BALANCE_ADD, idempotent on reference); large credits wait for a second operator',
      description: [
        'The same reference with the same body returns the same movement (201); with a different body, 409 REFERENCE_CONFLICT.',
        `**Maker-checker.** A credit by a named operator above ADMIN_CREDIT_DUAL_CONTROL_CENTS (${dualControlCents} centavos here) moves no money: it answers 202 with a credit request (PENDING_APPROVAL) that a second, independent operator approves (POST /admin/credit-requests/{id}/approve). The same reference and body again return the same request. The shared admin token (development only) credits directly.`,
      ].join('\n\n'),
      auth: { kind: 'admin' },
      // The audit rows are written here: REQUESTED before the ledger call, or the request in its transaction.
      audit: { change: 'gateway' },
      params: CreditParams, paramErrors: { id: 'COMPANY_NOT_FOUND' },
      body: CreditBody,
      responses: {
        201: { description: 'The BALANCE_ADD movement (COMPLETED).', schema: MovementSchema },
        202: { description: 'Above the threshold: the credit request, PENDING_APPROVAL; nothing credited yet.', schema: CreditRequestSchema },
      },
      errors: ['COMPANY_NOT_FOUND', 'WALLET_NOT_PROVISIONED', 'REFERENCE_CONFLICT', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call, admin, audit }) => {
        if (admin && requests.needsApproval(admin, body.amountCents) && admin.kind === 'operator') {
          const request = await requests.request({ companyId: params.id, rail: params.rail, amountCents: body.amountCents, reference: body.reference }, admin, audit!);
          return { status: 202, body: creditRequestToApi(request) };
        }
        await requests.assertReferenceFree(params.id, body.reference, params.rail, body.amountCents);
        // The ledger makes the change: a REQUESTED row first, so a crash before the outcome row shows.
        await audit?.requested();
        const movement = await ledger.credit(params.id, params.rail, body.amountCents, body.reference, call);
        return { status: 201, body: movementToApi(movement) };
      },
    }),
    defineRoute({
      method: 'PUT', path: '/admin/fees/{operation}', operationId: 'adminSetFeeConfig', tags: ['Admin'],
      summary: 'Set the fee configuration of an operation (default or per company)',
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      params: FeeParams,
      body: FeeBody,
      responses: { 200: { description: 'The fee configuration now in force.', schema: FeeConfigSchema } },
      errors: ['COMPANY_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => {
        const fee = await ledger.setFee(params.operation, body.fixedFeeCents, body.variableBps, body.companyId, call);
        return { status: 200, body: feeConfigToApi(fee) };
      },
    }),
  ];
}
