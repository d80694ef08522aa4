import { z } from 'zod';
import { centsNumber, documentAsOneOf, isoDate, MAX_TRANSFER_CENTS } from '../../http/schemas.js';
import { centsSchema, instantParam, queryInt, textSchema } from '../../http/validation.js';

export const COBRO_ID = z.string().regex(/^cob_[a-z0-9]{24}$/);
export const COBRO_STATUSES = ['OPEN', 'PARTIALLY_PAID', 'PAID', 'EXPIRED', 'CANCELLED'] as const;

const amount = () => centsSchema(100, MAX_TRANSFER_CENTS);
const REFERENCE = /^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,63}$/;

const ExpectedPayer = z
  .strictObject({
    document: z
      .string()
      .regex(/^[A-Za-z0-9.-]{3,20}$/, { message: 'Debe tener de 3 a 20 letras, dígitos, puntos o guiones.' })
      .optional()
      .meta({ description: "The payer's document (separators and a type prefix such as `CC` are ignored when matching)." }),
    name: textSchema(1, 150).optional(),
  })
  .refine((p) => p.document !== undefined || p.name !== undefined, { message: 'Indique document o name.' })
  .meta({
    id: 'CobroExpectedPayer',
    description:
      'Who is expected to pay. A payment that names no cobro (no transaction id, no dynamic key, no reference) is matched to the open cobro expecting its payer.',
    minProperties: 1,
  });

const PsePayer = z
  .strictObject({
    documentTypeId: z.union([z.literal(1), z.literal(4), z.literal(5), z.literal(8)]).meta({ description: '1 CC, 4 CE, 5 Pasaporte, 8 NIT.' }),
    documentNumber: z.string().regex(/^\d{5,15}$/, { message: 'Debe tener entre 5 y 15 dígitos.' }),
    firstName: textSchema(1, 100),
    lastName: textSchema(1, 100),
    email: z.email({ message: 'Debe ser un correo electrónico válido.' }).max(254),
    phone: z
      .string()
      .regex(/^3\d{9}$/, { message: 'Debe ser un celular colombiano de 10 dígitos que empiece por 3.' })
      .optional(),
  })
  .meta({ id: 'CobroPsePayer', description: "Whom the cobro's PSE link is for (PSE asks the payer's document, names and e-mail), as POST /deposits/pse." });

const methodsOf = (values: readonly [string, ...string[]]) =>
  z.array(z.enum(values)).min(1).max(values.length).meta({
    uniqueItems: true,
    description:
      '`BREB_QR`: a dynamic EMVCo QR (amount, transaction id, expiry); `BREB_KEY`: the dynamic Bre-B key it holds, to pay by typing (both are one key); `PSE`: a PSE payment link for the fixed amount (needs `psePayer`).',
  });

const base = {
  reference: z.string().regex(REFERENCE, { message: 'Debe tener de 1 a 64 caracteres [A-Za-z0-9._:/#-] y empezar por letra o dígito.' }).meta({
    description:
      'Your reference (invoice number), unique per company: the same request again answers the same cobro (200); another request with it, 409 `REFERENCE_CONFLICT`.',
  }),
  expiresAt: z.iso
    .datetime({ offset: true, message: 'Debe ser un instante ISO 8601 con zona horaria.' })
    .meta({
      description:
        'When the cobro stops taking payments: at least one minute and at most one year ahead. Payments received by then count. Omitted: 24 hours after creation.',
      example: '2026-12-15T23:59:59-05:00',
    })
    .optional(),
  description: textSchema(1, 140).optional(),
  expectedPayer: ExpectedPayer.optional(),
  metadata: z
    .record(z.string().regex(/^[A-Za-z0-9_.-]{1,40}$/), z.string().max(500))
    .optional()
    .meta({ description: 'Your key-value pairs (at most 20 keys, 4096 characters in all), returned as given.', maxProperties: 20 }),
  methods: methodsOf(['BREB_QR', 'BREB_KEY']),
  overpaymentPolicy: z
    .enum(['accept', 'hold_for_review', 'return'])
    .optional()
    .meta({
      description:
        'A payment beyond the amount (or to a PAID cobro): `accept` (default) keeps it matched; `hold_for_review` leaves it out of the total, for you to decide; ' +
        '`return` counts what completes the cobro and returns the rest to the payer automatically (a payment to a PAID cobro: all of it) through the rail it came by (docs/returns.md).',
    }),
};

const fixedAmount = () => amount().meta({ description: 'A fixed amount in centavos: PAID when the payments reach it; less is PARTIALLY_PAID.' });

const VARIANTS = [
  z.strictObject({ ...base, amountCents: fixedAmount() }).meta({ id: 'CreateFixedCobroRequest', description: 'A fixed amount, paid by Bre-B (QR or key).' }),
  z
    .strictObject({
      ...base,
      amountCents: fixedAmount(),
      methods: methodsOf(['BREB_QR', 'BREB_KEY', 'PSE']).meta({ contains: { const: 'PSE' } }),
      psePayer: PsePayer,
    })
    .meta({ id: 'CreateFixedCobroWithPseRequest', description: 'A fixed amount with a PSE link among its methods (`PSE` in `methods`, and `psePayer`).' }),
  z
    .strictObject({
      ...base,
      minAmountCents: amount().meta({ description: 'PAID from this total on.' }),
      maxAmountCents: amount().meta({ description: 'The most it takes (≥ minAmountCents); beyond it, the overpayment policy.' }),
    })
    .meta({ id: 'CreateRangeCobroRequest' }),
  z.strictObject(base).meta({ id: 'CreateOpenCobroRequest', description: 'An open amount: the first payment of any amount makes it PAID.' }),
] as const;

export const CreateCobroBody = documentAsOneOf(
  z
    .strictObject({
      ...base,
      methods: methodsOf(['BREB_QR', 'BREB_KEY', 'PSE']),
      psePayer: PsePayer.optional(),
      amountCents: amount().optional(),
      minAmountCents: amount().optional(),
      maxAmountCents: amount().optional(),
    })
    .superRefine((b, ctx) => {
      const pse = b.methods.includes('PSE');
      if (pse && b.amountCents === undefined)
        ctx.addIssue({ code: 'custom', path: ['methods'], message: 'El medio PSE necesita un monto fijo (amountCents).' });
      if (pse !== (b.psePayer !== undefined)) ctx.addIssue({ code: 'custom', path: ['psePayer'], message: 'Se indica si y solo si el medio es PSE.' });
      if (b.amountCents !== undefined && (b.minAmountCents !== undefined || b.maxAmountCents !== undefined)) {
        ctx.addIssue({ code: 'custom', path: ['amountCents'], message: 'Indique un monto fijo o un rango (minAmountCents, maxAmountCents), no ambos.' });
      }
      if ((b.minAmountCents === undefined) !== (b.maxAmountCents === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: [b.minAmountCents === undefined ? 'minAmountCents' : 'maxAmountCents'],
          message: 'Un rango necesita minAmountCents y maxAmountCents.',
        });
      }
      if (new Set(b.methods).size !== b.methods.length) ctx.addIssue({ code: 'custom', path: ['methods'], message: 'Los medios de pago no se repiten.' });
    })
    .meta({
      id: 'CreateCobroRequest',
      description: 'A fixed amount (`amountCents`), a range (`minAmountCents` and `maxAmountCents`), or neither (an open amount).',
    }),
  VARIANTS,
);

export const CobrosQuery = z.strictObject({
  status: z.enum(COBRO_STATUSES).optional(),
  reference: z.string().regex(REFERENCE).optional(),
  from: instantParam({ bogotaDates: true }).optional().meta({ description: 'Created at or after (a date is 00:00 in Bogotá).' }),
  to: instantParam({ bogotaDates: true }).optional().meta({ description: 'Created at or before.' }),
  limit: queryInt(1, 200, 50),
  cursor: z.string().min(1).max(512).optional(),
});

/** The listing's query as pse-deposit's ListCobros takes it (the API's and the dashboard's listings). */
export function listCobrosRequest(query: z.output<typeof CobrosQuery>) {
  return {
    status: query.status,
    reference: query.reference,
    createdFrom: query.from ? new Date(query.from) : undefined,
    createdTo: query.to ? new Date(query.to) : undefined,
    limit: query.limit,
    cursor: query.cursor,
  };
}

export const CobroPaymentSchema = z
  .object({
    depositId: z.string().meta({ description: '`dep_…`: the deposit (GET /deposits/{id}).' }),
    source: z.enum(['BREB', 'PSE']),
    amountCents: centsNumber().meta({ description: 'What the payer paid.' }),
    netAmountCents: centsNumber().meta({ description: 'What was credited to your wallet (after fees).' }),
    matchedBy: z.enum(['TRANSACTION_ID', 'DYNAMIC_KEY', 'PSE_LINK', 'REFERENCE', 'PAYER_RULE', 'MANUAL']).meta({
      description:
        "How it was matched: the QR's transaction id, the dynamic key it was paid to, the cobro's PSE link, the cobro's reference on a PSE link of yours (`internalRef`), the expected payer, or by hand.",
    }),
    disposition: z.enum(['COUNTED', 'EXCESS', 'HELD_FOR_REVIEW', 'RETURNED']).meta({
      description:
        '`COUNTED` in `paidAmountCents` (less its `autoReturn`); `EXCESS`: accepted after the cobro was PAID; `HELD_FOR_REVIEW`: beyond the amount under `hold_for_review`, not counted; ' +
        '`RETURNED`: to a PAID cobro under `return`, not counted and returned whole.',
    }),
    payerName: z.string().nullable(),
    payerDocument: z.string().nullable(),
    receivedAt: isoDate(),
    matchedAt: isoDate(),
    autoReturn: z
      .object({
        returnId: z.string().meta({ description: 'The return (`ret_…`, in GET /deposits/{depositId}/returns).' }),
        amountCents: centsNumber().meta({ description: 'What of the payment goes back to the payer.' }),
        status: z.enum(['OWED', 'REQUESTED', 'FAILED']).meta({
          description:
            '`OWED`: about to be asked of the rail; `REQUESTED`: the return exists (its own status: RETURNED when the payer has it, webhook `deposit.returned`); ' +
            '`FAILED`: refused for good (`error`, e.g. `INSUFFICIENT_BALANCE`): return it yourself with POST /deposits/{depositId}/returns.',
        }),
        error: z.string().nullable(),
      })
      .nullable()
      .meta({ description: 'Overpayment policy `return`: the automatic return of this payment (or of its part beyond the amount); null otherwise.' }),
    returnedCents: centsNumber().meta({
      description: 'Returned to the payer since it was matched (POST /deposits/{depositId}/returns, once the payer has it), the automatic return aside.',
    }),
    reversedCents: centsNumber().meta({
      description:
        'Reversed by its provider after it was credited (a PSE payment debited back from your wallet; webhook `cobro.payment_reversed`): its gross, or 0. ' +
        'A reversed payment no longer counts: what it counted came off `paidAmountCents` (and its returns off `returnedAmountCents`).',
      example: 25000000,
    }),
  })
  .meta({ id: 'CobroPayment' });

export const CobroSchema = z
  .object({
    id: z.string().meta({ description: '`cob_…`' }),
    reference: z.string(),
    status: z.enum(COBRO_STATUSES),
    amountType: z.enum(['FIXED', 'RANGE', 'OPEN']),
    amountCents: centsNumber().nullable(),
    minAmountCents: centsNumber().nullable(),
    maxAmountCents: centsNumber().nullable(),
    paidAmountCents: centsNumber().meta({
      description: 'The sum of the COUNTED payments that were not reversed (`reversedCents`), less what of them is returned automatically.',
    }),
    returnedAmountCents: centsNumber().meta({
      description:
        'What of the COUNTED payments was returned to their payers since (POST /deposits/{id}/returns), the automatic returns aside: the cobro keeps `paidAmountCents` less this. ' +
        'Its status does not go back (a PAID cobro stays PAID).',
    }),
    toleranceBelowCents: centsNumber().meta({
      description: 'The amount tolerance it was made with (GET /cobros/settings then): short of the amount (or minimum) by at most this, it is PAID.',
    }),
    toleranceAboveCents: centsNumber().meta({ description: 'Above the amount (or maximum) by at most this, a payment is no overpayment.' }),
    currency: z.literal('COP'),
    description: z.string().nullable(),
    expectedPayer: z.object({ document: z.string().nullable(), name: z.string().nullable() }).nullable(),
    metadata: z.record(z.string(), z.unknown()),
    overpaymentPolicy: z.enum(['accept', 'hold_for_review', 'return']),
    methods: z.array(z.enum(['BREB_QR', 'BREB_KEY', 'PSE'])),
    pse: z
      .object({
        depositId: z.string().meta({ description: "The link's deposit (`dep_…`, in GET /deposits)." }),
        paygatewayUrl: z.string().meta({ description: 'Where the payer pays (PSE), until the cobro expires.' }),
      })
      .nullable(),
    transactionId: z.string().meta({ description: 'The id the dynamic QR carries (EMVCo tag 62, sub-tag 05); a payment of the QR brings it back.' }),
    breb: z
      .object({
        keyValue: z.string().meta({ description: 'The dynamic Bre-B key (an alias): payable by typing it until the cobro closes.' }),
        qrPayload: z
          .string()
          .meta({ description: 'The EMVCo merchant-presented payload (point of initiation 12, amount, transaction id, expiry; CRC16 in tag 63).' }),
        qrPngUrl: z.string().meta({ description: 'The QR image (PNG), with the same API key.' }),
      })
      .nullable(),
    payments: z.array(CobroPaymentSchema),
    expiresAt: isoDate(),
    createdAt: isoDate(),
    updatedAt: isoDate(),
    paidAt: isoDate().nullable(),
    closedAt: isoDate().nullable().meta({ description: 'When it EXPIRED or was CANCELLED.' }),
  })
  .meta({ id: 'Cobro' });

export const CobroPageSchema = z.object({ items: z.array(CobroSchema), nextCursor: z.string().nullable() }).meta({ id: 'CobroPage' });

export const AttachPaymentBody = z
  .strictObject({
    depositId: z
      .string()
      .regex(/^dep_[a-z0-9]{24}$/)
      .meta({ description: 'A credited (ASSIGNED) payment of yours: `dep_…`, from GET /cobros/unmatched-payments or GET /deposits.' }),
  })
  .meta({ id: 'AttachCobroPaymentRequest' });

export const UnmatchedQuery = z.strictObject({ limit: queryInt(1, 200, 50), cursor: z.string().min(1).max(512).optional() });

export const UnmatchedPaymentSchema = z
  .object({
    depositId: z.string(),
    cobroId: z.string().nullable().meta({ description: 'The cobro it aimed at (its QR transaction id or its dynamic key), when it named one.' }),
    reason: z.enum(['COBRO_EXPIRED', 'COBRO_CANCELLED', 'NO_MATCH']),
    source: z.enum(['BREB', 'PSE']),
    amountCents: centsNumber(),
    payerName: z.string().nullable(),
    payerDocument: z.string().nullable(),
    receivedAt: isoDate(),
    listedAt: isoDate(),
  })
  .meta({ id: 'UnmatchedPayment' });

export const UnmatchedPageSchema = z.object({ items: z.array(UnmatchedPaymentSchema), nextCursor: z.string().nullable() }).meta({ id: 'UnmatchedPaymentPage' });

export const SetCobroSettingsBody = z
  .strictObject({
    amountToleranceCents: centsNumber(100_000_000).meta({ description: 'A fixed tolerance in centavos (JSON integer), 0 to 100,000,000 (1,000,000 COP).' }),
    amountToleranceBps: z.int().min(0).max(1000).meta({ description: "A tolerance in ten-thousandths of the cobro's amount, 0 to 1000 (10 %)." }),
  })
  .meta({ id: 'SetCobroSettingsRequest' });

export const CobroSettingsSchema = z
  .object({
    amountToleranceCents: centsNumber(100_000_000),
    amountToleranceBps: z.int().min(0).max(1000),
    updatedAt: isoDate().nullable().meta({ description: 'null: never set.' }),
  })
  .meta({ id: 'CobroSettings' });
