import { z } from 'zod';
import type { ledgerV1 } from '@wallet/proto';
import type { AdminChanges } from '../../../app/admin-changes.js';
import type { CreditRequestAdmin } from '../../../app/credit-request-admin.js';
import type { LedgerAdmin } from '../../../app/ledger-admin.js';
import { feeConfigToApi, movementToApi } from '../../wallets/presenters.js';
import { FeeConfigSchema, JournalVerificationSchema } from './schemas.js';
import { MovementSchema } from '../../wallets/schemas.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { centsSchema, textSchema, uuidSchema } from '../../../http/validation.js';
import { MAX_TRANSFER_CENTS } from '../../../http/schemas.js';
import { creditRequestToApi } from '../credit-requests/presenters.js';
import { CreditRequestSchema } from '../credit-requests/schemas.js';
import { approvalRequestToApi } from '../approval-requests/presenters.js';
import { PENDING_APPROVAL_RESPONSE } from '../approval-requests/schemas.js';

export const CreditBody = z
  .strictObject({
    amountCents: centsSchema(1).meta({ description: 'Centavos to add (JSON integer).' }),
    reference: textSchema(1, 100).meta({ description: 'Operator reference; the credit is idempotent on it.' }),
  })
  .meta({ id: 'AdminCreditRequest' });

export const FeeBody = z
  .strictObject({
    // At most the largest transfer: a fee above it has no use, and fee + IVA on any amount then stays a JSON-safe integer.
    fixedFeeCents: centsSchema(0, MAX_TRANSFER_CENTS).meta({ description: 'Centavos charged per operation (JSON integer), 0 to 200,000,000,000.' }),
    variableBps: z.int().min(0).max(10_000).meta({ description: 'Basis points of the gross amount (0-10000).' }),
    companyId: uuidSchema().optional().meta({ description: "Omitted: the default for every company; set: that company's override." }),
  })
  .meta({ id: 'SetFeeConfigRequest' });

const VerificationQuery = z
  .strictObject({
    fromSeq: z
      .string()
      .regex(/^\d{1,18}$/)
      .optional()
      .meta({ description: "A trusted head's position (with fromHash): verify from there instead of genesis.", example: '120394' }),
    fromHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional()
      .meta({ description: "The trusted head's hash (64 lowercase hex digits).", example: '9f2c1e0d5b7a48c3e61d2f09a8b7c6d5e4f30112233445566778899aabbccdd' }),
  })
  .refine((q) => (q.fromSeq === undefined) === (q.fromHash === undefined), { message: 'fromSeq y fromHash van juntos', path: ['fromHash'] });

const CreditParams = z.object({ id: uuidSchema(), rail: z.enum(['BREB', 'ACH']) });
const FeeParams = z.object({ operation: z.enum(['BREB_OUTFLOW', 'ACH_OUTFLOW', 'PSE_INFLOW', 'BREB_INFLOW']) });

export function adminLedgerRoutes(ledger: LedgerAdmin, requests: CreditRequestAdmin, changes: AdminChanges, dualControlCents: number): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/admin/ledger/verification',
      operationId: 'adminVerifyLedgerJournal',
      tags: ['Admin'],
      summary: 'Verify the tamper-evident journal from genesis or from a trusted head',
      description: [
        "Every posting is sealed into one SHA-256 chain (docs/journal.md): each sealed posting's content is recomputed from its rows as they are now (RFC 8785 canonical JSON), each link from the previous hash, every recorded daily head must lie on the chain, and no posting may exist outside it. The first broken posting is named.",
        'Runs while the request waits, up to 25 s (10,000 to 17,000 postings a second were measured: docs/benchmarks.md). Past the HTTP time limit, verify from a recent trusted head (`fromSeq`, `fromHash`: a daily head kept outside our systems) or run `npm run ledger:verify`, which has no limit. Read-only: any operator.',
      ].join('\n\n'),
      auth: { kind: 'admin' },
      query: VerificationQuery,
      responses: { 200: { description: 'The verification: `ok` and, when broken, the first broken posting.', schema: JournalVerificationSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await ledger.verifyJournal(
          query.fromSeq !== undefined && query.fromHash !== undefined ? { seq: query.fromSeq, hash: query.fromHash } : null,
          call,
        );
        return { status: 200, body: journalVerificationToApi(r) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/companies/{id}/wallets/{rail}/credit',
      operationId: 'adminCreditWallet',
      tags: ['Admin'],
      summary: 'Credit a wallet (BALANCE_ADD, idempotent on reference); large credits wait for a second operator',
      description: [
        'The same reference with the same body returns the same movement (201); with a different body, 409 REFERENCE_CONFLICT.',
        `**Maker-checker.** A credit by a named operator above ADMIN_CREDIT_DUAL_CONTROL_CENTS (${dualControlCents} centavos here), or one that would take the operator's or the company's direct credits of the last ADMIN_CREDIT_WINDOW_SECONDS past ADMIN_CREDIT_OPERATOR_WINDOW_CENTS / ADMIN_CREDIT_COMPANY_WINDOW_CENTS (splitting a large credit does not avoid a second operator), moves no money: it answers 202 with a credit request (PENDING_APPROVAL) that a second, independent operator approves (POST /admin/credit-requests/{id}/approve). The same reference and body again return the same request. The shared admin token (development only) credits directly.`,
      ].join('\n\n'),
      auth: { kind: 'admin' },
      // The audit rows are written here: REQUESTED before the ledger call, or the request in its transaction.
      audit: { change: 'gateway' },
      params: CreditParams,
      paramErrors: { id: 'COMPANY_NOT_FOUND' },
      body: CreditBody,
      responses: {
        201: { description: 'The BALANCE_ADD movement (COMPLETED).', schema: MovementSchema },
        202: { description: 'Above the threshold: the credit request, PENDING_APPROVAL; nothing credited yet.', schema: CreditRequestSchema },
      },
      errors: ['COMPANY_NOT_FOUND', 'WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'REFERENCE_CONFLICT', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call, admin, audit }) => {
        if (admin?.kind === 'operator') {
          const out = await requests.creditByOperator(
            { companyId: params.id, rail: params.rail, amountCents: body.amountCents, reference: body.reference },
            admin,
            call,
            audit!,
          );
          if ('request' in out) return { status: 202, body: creditRequestToApi(out.request) };
          return { status: 201, body: movementToApi(out.movement) };
        }
        // The shared development token (production refuses it here).
        await requests.assertReferenceFree(params.id, body.reference, params.rail, body.amountCents);
        await audit?.requested();
        const movement = await ledger.credit(params.id, params.rail, body.amountCents, body.reference, call);
        return { status: 201, body: movementToApi(movement) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/admin/fees/{operation}',
      operationId: 'adminSetFeeConfig',
      tags: ['Admin'],
      summary: 'Set the fee configuration of an operation (default or per company); by an operator, once a second operator approves',
      description:
        "Fees move money on every operation: a named operator's change answers 202 with an approval request that a second, independent operator approves (POST /admin/approval-requests/{id}/approve); a company's own schedule is told to the company. The shared development token sets it directly.",
      auth: { kind: 'admin' },
      audit: { change: 'gateway' },
      params: FeeParams,
      body: FeeBody,
      responses: { 200: { description: 'The fee configuration now in force.', schema: FeeConfigSchema }, 202: PENDING_APPROVAL_RESPONSE },
      errors: ['COMPANY_NOT_FOUND', 'APPROVAL_REQUEST_NOT_PENDING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, admin, call, audit }) => {
        const out = await changes.setFee({ operation: params.operation, ...body }, admin!, call, audit!);
        if ('approval' in out) return { status: 202, body: approvalRequestToApi(out.approval) };
        return { status: 200, body: feeConfigToApi(out.done) };
      },
    }),
  ];
}

function journalVerificationToApi(r: ledgerV1.VerifyJournalResponse) {
  const head = (h: ledgerV1.JournalHead | undefined) => ({ seq: (h?.seq ?? 0n).toString(), hash: h?.hash ?? '' });
  return {
    ok: r.ok,
    start: head(r.from),
    head: head(r.head),
    verified: Number(r.verified),
    pending: Number(r.pending),
    headsChecked: Number(r.headsChecked),
    firstBroken: r.firstBroken ? { seq: r.firstBroken.seq.toString(), postingId: r.firstBroken.postingId || null, reason: r.firstBroken.reason } : null,
    broken: Number(r.broken),
    outsideJournal: r.outsideJournal,
    durationMs: Number(r.durationMs),
  };
}
