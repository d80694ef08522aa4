import { z } from 'zod';

/**
 * An approval policy as the API writes it (docs/policies.md): the one definition the gateway serves
 * in its OpenAPI document and validates bodies with, and the transfer service validates again before
 * it stores a version (it never trusts the edge alone). Amounts are integer cents.
 */

const CENTS = z.number().int().min(1).max(1_000_000_000_000_000).meta({ description: 'Integer cents (COP × 100).', example: 5_000_000_000 });
const HHMM = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM, 00:00 to 23:59')
  .meta({ example: '20:00' });

export const POLICY_RULE_ID = /^[a-z0-9][a-z0-9_-]{0,39}$/;
export const POLICY_REFUSAL_CODE = /^[A-Z][A-Z0-9_]{2,39}$/;

export const PolicyOutcomeSchema = z
  .discriminatedUnion('action', [
    z.strictObject({ action: z.literal('ALLOW') }).meta({ id: 'PolicyAllow', description: 'The payment goes ahead with no approval.' }),
    z
      .strictObject({
        action: z.literal('REQUIRE_APPROVALS'),
        approvals: z.number().int().min(1).max(10).meta({ description: 'How many different dashboard users must sign (TOTP).' }),
        roles: z
          .array(z.enum(['ADMIN', 'OPERATOR']))
          .min(1)
          .max(2)
          .optional()
          .meta({ description: 'The roles whose signatures count (default both ADMIN and OPERATOR).' }),
      })
      .meta({ id: 'PolicyRequireApprovals', description: 'The payment is accepted (funds held) and waits for the signatures.' }),
    z
      .strictObject({
        action: z.literal('REFUSE'),
        code: z.string().regex(POLICY_REFUSAL_CODE).meta({ description: "The company's own code, answered in `details.code`.", example: 'OUTSIDE_HOURS' }),
        message: z.string().min(1).max(200).optional().meta({ description: "The company's own explanation (Spanish), answered in `details.message`." }),
      })
      .meta({ id: 'PolicyRefuse', description: 'The payment is refused: 422 `POLICY_REFUSED`, nothing reserved.' }),
  ])
  .meta({ id: 'PolicyOutcome' });

export const PolicyConditionsSchema = z
  .strictObject({
    amountAtLeastCents: CENTS.optional(),
    amountBelowCents: CENTS.optional(),
    rails: z
      .array(z.enum(['BREB', 'ACH']))
      .min(1)
      .max(2)
      .optional(),
    counterpartyVerified: z
      .boolean()
      .optional()
      .meta({ description: 'true: paid to a counterparty (`counterpartyId`) whose verification is VERIFIED; false: to anything else.' }),
    counterpartyTags: z
      .array(z.string().regex(/^[a-z0-9_-]{1,32}$/))
      .min(1)
      .max(10)
      .optional()
      .meta({ description: 'Paid to a counterparty carrying at least one of these tags.' }),
    firstPayment: z.boolean().optional().meta({ description: 'true: no payment of the company to this destination (key or account) has completed yet.' }),
    timeOfDay: z
      .strictObject({ from: HHMM, to: HHMM })
      .refine((t) => t.from !== t.to, { message: 'from and to must differ' })
      .optional()
      .meta({ description: 'Bogotá wall time in [from, to); from after to wraps past midnight (20:00 to 06:00).' }),
    daysOfWeek: z
      .array(z.enum(['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN']))
      .min(1)
      .max(7)
      .optional()
      .meta({ description: 'Bogotá day of the week.' }),
    holiday: z.boolean().optional().meta({ description: 'true: on a Colombian public holiday (as observed); false: on any other day.' }),
    cumulativeTodayAtLeastCents: CENTS.optional().meta({
      description: "The company's amount sent today (Bogotá), this payment included, is at least this. Sends refused before they were accepted do not count.",
    }),
  })
  .refine((w) => w.amountAtLeastCents === undefined || w.amountBelowCents === undefined || w.amountAtLeastCents < w.amountBelowCents, {
    message: 'amountAtLeastCents must be below amountBelowCents',
    path: ['amountBelowCents'],
  })
  .meta({ id: 'PolicyConditions', description: 'Every condition present must hold; with none, the rule matches every payment.' });

export const PolicyRuleSchema = z
  .strictObject({
    id: z.string().regex(POLICY_RULE_ID).meta({ description: 'Unique in the policy; recorded with every payment the rule decides.', example: 'big-payments' }),
    description: z.string().min(1).max(200).optional(),
    when: PolicyConditionsSchema,
    then: PolicyOutcomeSchema,
  })
  .meta({ id: 'PolicyRule' });

export const PolicyDocumentSchema = z
  .strictObject({
    rules: z.array(PolicyRuleSchema).max(100).meta({ description: 'In order: the first rule whose conditions all hold decides.' }),
    otherwise: PolicyOutcomeSchema.meta({ description: 'What decides when no rule matches.' }),
  })
  .superRefine((d, ctx) => {
    const seen = new Set<string>();
    d.rules.forEach((r, i) => {
      if (seen.has(r.id)) ctx.addIssue({ code: 'custom', message: 'rule ids must be unique', path: ['rules', i, 'id'] });
      seen.add(r.id);
    });
  })
  .meta({ id: 'ApprovalPolicyDocument' });

export type PolicyDocumentInput = z.infer<typeof PolicyDocumentSchema>;
