import { z } from 'zod';
import type { LedgerAdmin } from '../../app/ledger-admin.js';
import { feeConfigToApi, movementToApi } from '../../ledger/presenters.js';
import { FeeConfigSchema, MovementSchema } from '../api-schemas.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { centsSchema, textSchema, uuidSchema } from '../validation.js';

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

export function adminLedgerRoutes(ledger: LedgerAdmin): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST', path: '/admin/companies/{id}/wallets/{rail}/credit', operationId: 'adminCreditWallet', tags: ['Admin'],
      summary: 'Credit a wallet (BALANCE_ADD, idempotent on reference)',
      description: 'The same reference with the same body returns the same movement (201); with a different body, 409 REFERENCE_CONFLICT.',
      auth: { kind: 'admin' },
      params: CreditParams, paramErrors: { id: 'COMPANY_NOT_FOUND' },
      body: CreditBody,
      responses: { 201: { description: 'The BALANCE_ADD movement (COMPLETED).', schema: MovementSchema } },
      errors: ['COMPANY_NOT_FOUND', 'WALLET_NOT_PROVISIONED', 'REFERENCE_CONFLICT', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => {
        const movement = await ledger.credit(params.id, params.rail, body.amountCents, body.reference, call);
        return { status: 201, body: movementToApi(movement) };
      },
    }),
    defineRoute({
      method: 'PUT', path: '/admin/fees/{operation}', operationId: 'adminSetFeeConfig', tags: ['Admin'],
      summary: 'Set the fee configuration of an operation (default or per company)',
      auth: { kind: 'admin' },
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
