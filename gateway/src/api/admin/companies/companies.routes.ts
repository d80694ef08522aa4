import { z } from 'zod';
import { centsToNumber } from '@wallet/platform';
import type { AdminChanges } from '../../../app/admin-changes.js';
import type { CompanyAdmin, Company } from '../../../app/company-admin.js';
import { CompanySchema } from './schemas.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { centsSchema, textSchema, uuidSchema } from '../../../http/validation.js';
import { approvalRequestToApi } from '../approval-requests/presenters.js';
import { PENDING_APPROVAL_RESPONSE } from '../approval-requests/schemas.js';

export function companyToApi(c: Company) {
  return {
    id: c.id,
    name: c.name,
    nit: c.nit,
    taxRegime: c.taxRegime,
    status: c.status,
    multiSigThreshold: c.multiSigThreshold,
    counterpartyDailyLimitCents: centsToNumber(c.counterpartyDailyLimitCents),
    counterpartyMonthlyLimitCents: centsToNumber(c.counterpartyMonthlyLimitCents),
    rateLimitMultiplier: c.rateLimitMultiplier,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

const TaxRegime = z.enum(['COMMON', 'SIMPLE']);
const Rail = z.enum(['BREB', 'ACH']);
/** NIT: 5-15 digits, optionally followed by "-" and the check digit (e.g. 900123456-7). */
const Nit = z
  .string()
  .trim()
  .regex(/^\d{5,15}(-\d)?$/, 'El NIT debe tener de 5 a 15 dígitos y, opcionalmente, "-" y el dígito de verificación.');
const MultiSigThreshold = z.int().min(0).max(10);

export const CreateCompanyBody = z
  .strictObject({
    name: textSchema(1, 200),
    nit: Nit,
    taxRegime: TaxRegime,
    multiSigThreshold: MultiSigThreshold.default(0),
    wallets: z
      .array(Rail)
      .max(2)
      .refine((w) => new Set(w).size === w.length, { message: 'Las billeteras no pueden repetirse.' })
      .default(['BREB', 'ACH'])
      .meta({ description: 'Wallets to open (default both), each at most once. `[]` opens none.', uniqueItems: true }),
  })
  .meta({ id: 'CreateCompanyRequest' });

export const PatchCompanyBody = z
  .strictObject({
    status: z.enum(['ACTIVE', 'SUSPENDED']).optional(),
    taxRegime: TaxRegime.optional(),
    multiSigThreshold: MultiSigThreshold.optional(),
    counterpartyDailyLimitCents: centsSchema(0).optional(),
    counterpartyMonthlyLimitCents: centsSchema(0).optional(),
    rateLimitMultiplier: z
      .number()
      .positive()
      .max(1_000_000)
      // Two decimals as written: 1.15 × 100 is 114.99999999999999 in binary floating point, so compare the decimal text.
      .refine((n) => Number(n.toFixed(2)) === n, { message: 'Máximo dos decimales.' })
      .meta({ multipleOf: 0.01, description: 'Multiplies every rate limit of the company: above 0, at most 1,000,000, at most two decimals.' })
      .optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'Indique al menos un campo para cambiar.' })
  .meta({ id: 'PatchCompanyRequest', minProperties: 1 });

export const CompanyIdParams = z.object({ id: uuidSchema() });

export function adminCompanyRoutes(admin: CompanyAdmin, changes: AdminChanges): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/admin/companies',
      operationId: 'adminCreateCompany',
      tags: ['Admin'],
      summary: 'Create a company and open its wallets',
      description: 'Creates the company (ACTIVE) and opens its wallets at zero in the ledger. If the ledger cannot open them, nothing is created.',
      auth: { kind: 'admin' },
      body: CreateCompanyBody,
      responses: { 201: { description: 'Company created.', schema: CompanySchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ body, call, audit }) => {
        const company = await admin.create(body, call, audit);
        return { status: 201, body: companyToApi(company) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/companies/{id}',
      operationId: 'adminGetCompany',
      tags: ['Admin'],
      summary: 'Read a company',
      auth: { kind: 'admin' },
      params: CompanyIdParams,
      paramErrors: { id: 'COMPANY_NOT_FOUND' },
      responses: { 200: { description: 'The company.', schema: CompanySchema } },
      errors: ['COMPANY_NOT_FOUND'],
      handler: async ({ params }) => ({ status: 200, body: companyToApi(await admin.get(params.id)) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/admin/companies/{id}',
      operationId: 'adminUpdateCompany',
      tags: ['Admin'],
      summary: 'Change a company (status, tax regime, multi-signature threshold, counterparty limits, rate-limit multiplier)',
      description:
        'Suspending a company makes its API keys answer 403 COMPANY_INACTIVE. A change that weakens a control — a lower `multiSigThreshold`, reactivating a suspended company, or a counterparty limit that is not a strict tightening of one already set — by a named operator answers 202 with an approval request: nothing changes until a second, independent operator approves it (after the notice delay). Every change to the threshold, limits or status is told to the company (`company.security_changed` webhook and an e-mail to its administrators).',
      auth: { kind: 'admin' },
      params: CompanyIdParams,
      paramErrors: { id: 'COMPANY_NOT_FOUND' },
      body: PatchCompanyBody,
      responses: { 200: { description: 'The updated company.', schema: CompanySchema }, 202: PENDING_APPROVAL_RESPONSE },
      errors: ['COMPANY_NOT_FOUND', 'APPROVAL_REQUEST_NOT_PENDING'],
      handler: async ({ params, body, admin, audit }) => {
        const patch = {
          ...body,
          counterpartyDailyLimitCents: body.counterpartyDailyLimitCents === undefined ? undefined : BigInt(body.counterpartyDailyLimitCents),
          counterpartyMonthlyLimitCents: body.counterpartyMonthlyLimitCents === undefined ? undefined : BigInt(body.counterpartyMonthlyLimitCents),
        };
        const out = await changes.updateCompany(params.id, patch, admin!, audit!);
        if ('approval' in out) return { status: 202, body: approvalRequestToApi(out.approval) };
        return { status: 200, body: companyToApi(out.done) };
      },
    }),
  ];
}
