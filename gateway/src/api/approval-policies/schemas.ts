import { z } from 'zod';
import { PolicyDocumentSchema } from '@wallet/platform';
import { isoDate } from '../../http/schemas.js';
import { queryInt, textSchema } from '../../http/validation.js';
import { TotpCode } from '../dashboard/signing.js';

/** The OpenAPI tag of the policy's operations (API key and dashboard). */
export const POLICY_TAGS = ['Approval policies'];

/** `apol_` + 24 lower-case letters or digits; a malformed id reads as not found (paramErrors). */
export const POLICY_VERSION_ID = z.string().regex(/^apol_[a-z0-9]{24}$/);

export const PolicySignatureSchema = z
  .object({
    email: z.string(),
    role: z.enum(['ADMIN', 'OPERATOR']),
    signedAt: isoDate(),
  })
  .meta({ id: 'ApprovalPolicySignature' });

export const ApprovalPolicyVersionSchema = z
  .object({
    id: z.string().meta({ description: '`apol_` + 24 lower-case letters or digits.' }),
    version: z.int().min(1),
    status: z.enum(['PROPOSED', 'APPROVED', 'CANCELLED']).meta({
      description: 'PROPOSED until the change quorum has signed, then APPROVED (in force from `effectiveAt`); CANCELLED when withdrawn.',
    }),
    policy: PolicyDocumentSchema,
    requiredSignatures: z.int().min(2).max(10).meta({ description: "Signatures the change needs, the proposer's included." }),
    proposedBy: z.string().meta({ description: 'E-mail of the ADMIN who proposed it.' }),
    signatures: z.array(PolicySignatureSchema).meta({ description: "In signing order; the proposer's first." }),
    note: z.string().nullable(),
    createdAt: isoDate(),
    decidedAt: isoDate().nullable().meta({ description: 'When the quorum was reached or the proposal cancelled.' }),
    decidedBy: z.string().nullable().meta({ description: 'E-mail of the last signer, or of who cancelled.' }),
    effectiveAt: isoDate().nullable().meta({ description: 'APPROVED: from when it decides the sends (the quorum plus the change delay).' }),
  })
  .meta({ id: 'ApprovalPolicyVersion' });

export const ApprovalPolicyStateSchema = z
  .object({
    inForce: ApprovalPolicyVersionSchema.nullable().meta({
      description: "The version deciding the sends now; null: none, the company's multi-signature threshold decides.",
    }),
    scheduled: z.array(ApprovalPolicyVersionSchema).meta({ description: 'Approved versions not in force yet, soonest first.' }),
    proposed: ApprovalPolicyVersionSchema.nullable().meta({ description: 'The proposal waiting for signatures (one at a time).' }),
    changeQuorum: z
      .int()
      .min(2)
      .max(10)
      .meta({ description: "Signatures a change needs, the proposer's included: the multi-signature threshold, at least 2." }),
    changeDelaySeconds: z.int().min(0).meta({ description: 'From the quorum to `effectiveAt`.' }),
  })
  .meta({ id: 'ApprovalPolicyState' });

export const ApprovalPolicyVersionPageSchema = z
  .object({
    items: z.array(ApprovalPolicyVersionSchema),
    nextBeforeVersion: z.int().min(1).nullable().meta({ description: 'Pass as `beforeVersion` for the next (older) page; null: no more.' }),
  })
  .meta({ id: 'ApprovalPolicyVersionPage' });

export const PolicyVersionsQuery = z.strictObject({
  limit: queryInt(1, 100, 20),
  beforeVersion: queryInt(1, 2_147_483_647).optional().meta({ description: 'Only versions older than this one.' }),
});

export const ProposePolicyBody = z
  .strictObject({
    policy: PolicyDocumentSchema,
    note: textSchema(1, 500).optional().meta({ description: 'Why the change (shown to the other signers).' }),
    totpCode: TotpCode,
  })
  .meta({ id: 'ProposeApprovalPolicyRequest' });

export const PolicyTotpBody = z.strictObject({ totpCode: TotpCode }).meta({ id: 'ApprovalPolicyTotpRequest' });
export const PolicyVersionParams = z.object({ id: POLICY_VERSION_ID });
