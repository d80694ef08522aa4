import type { Router } from '@koa/router';
import { z } from 'zod';
import { KEY_TYPES, isWellFormed, normalizeKeyValue } from '../../domain/keys.js';
import type { SandboxHttpDeps } from '../context.js';
import { amountCentsSchema, callbackUrlSchema, parse, readJson, text } from '../http-input.js';

const documentSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9-]{3,20}$/, 'Entre 3 y 20 letras, dígitos o -.');
/** A key value as typed (normalized: trimmed, lower-cased unless all digits); well-formed for at least one key type. */
const anyKey = z
  .string()
  .max(254)
  .transform(normalizeKeyValue)
  .refine((v) => KEY_TYPES.some((t) => isWellFormed(t, v)), { message: 'Llave mal formada.' });

const registrationBody = z
  .object({
    keyValue: z.string().max(254).transform(normalizeKeyValue),
    keyType: z.enum(KEY_TYPES),
    holderName: text(150).transform((s) => s.replace(/\s+/g, ' ')),
    holderDocument: documentSchema.optional(),
    participantCallbackUrl: callbackUrlSchema,
  })
  .superRefine((b, ctx) => {
    if (!isWellFormed(b.keyType, b.keyValue)) ctx.addIssue({ code: 'custom', path: ['keyValue'], message: `No es una llave ${b.keyType} válida.` });
  });

/**
 * A payment to a key (`keyValue` + `amountCents`) or of a QR (`qrPayload`; `amountCents` overrides the
 * QR's amount, `ignoreExpiry` pays a QR past its expiry): exactly one of `keyValue` and `qrPayload`.
 */
const incomingBody = z
  .object({
    keyValue: anyKey.optional(),
    qrPayload: z.string().trim().min(1).max(512).optional(),
    amountCents: amountCentsSchema.optional(),
    ignoreExpiry: z.boolean().optional(),
    payerName: text(150),
    payerDocument: text(40), // as the payer's bank reports it, e.g. "CC 79123456"
    payerBank: text(100),
  })
  .superRefine((b, ctx) => {
    if ((b.keyValue === undefined) === (b.qrPayload === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['keyValue'], message: 'Indique keyValue o qrPayload (uno de los dos).' });
    }
    if (b.keyValue !== undefined && b.amountCents === undefined) ctx.addIssue({ code: 'custom', path: ['amountCents'], message: 'Requerido.' });
    if (b.keyValue !== undefined && b.ignoreExpiry !== undefined) ctx.addIssue({ code: 'custom', path: ['ignoreExpiry'], message: 'Solo con qrPayload.' });
  });

const returnBody = z.object({
  returnId: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._:-]{1,100}$/, 'De 1 a 100 caracteres [A-Za-z0-9._:-].'),
  providerTransferId: z.string().trim().min(1).max(100),
  amountCents: amountCentsSchema,
});

/**
 * Participants' Bre-B key registrations (POST / DELETE) and the scripted inbound payment
 * (the network routes a payer's transfer to the key's participant), to a key or of a QR's payload.
 */
export function collectRoutes(router: Router, d: SandboxHttpDeps): void {
  router.post('/breb/directory/registrations', async (ctx) => {
    const b = parse(registrationBody, await readJson(ctx.req));
    const { registration, created } = await d.collect.register({
      keyValue: b.keyValue,
      keyType: b.keyType,
      holderName: b.holderName,
      holderDocument: b.holderDocument ?? null,
      participantCallbackUrl: b.participantCallbackUrl,
    });
    if (!created) ctx.set('Idempotent-Replayed', 'true');
    ctx.status = 201;
    ctx.body = { anchorHandle: registration.anchorHandle, keyValue: registration.keyValue };
  });

  router.delete('/breb/directory/registrations/:keyValue', async (ctx) => {
    const keyValue = normalizeKeyValue(String(ctx.params.keyValue ?? ''));
    const deleted = await d.collect.unregister(keyValue);
    ctx.body = { keyValue, deleted };
  });

  // A participant returns all or part of an inbound payment to the payer (docs/sandbox.md "Bre-B collect keys and inbound payments"), as many
  // times as the payment's amount allows: the network debits the participant and credits the payer's bank; the breb-inbound report
  // shows each return as a RETURNED (OUT) line whose our_id is the returnId.
  router.post('/breb/network/returns', async (ctx) => {
    const b = parse(returnBody, await readJson(ctx.req));
    const r = await d.collect.returnPayment(b);
    if (r.replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.status = r.replayed ? 200 : 201;
    ctx.body = { returnId: b.returnId, providerTransferId: b.providerTransferId, status: 'RETURNED', returnedAt: r.returnedAt };
  });

  router.post('/sandbox/breb/incoming', async (ctx) => {
    const b = parse(incomingBody, await readJson(ctx.req));
    const payer = { payerName: b.payerName, payerDocument: b.payerDocument, payerBank: b.payerBank };
    const { payment, eventId } =
      b.qrPayload !== undefined
        ? await d.collect.payQr({ qrPayload: b.qrPayload, amountCents: b.amountCents, ignoreExpiry: b.ignoreExpiry, ...payer })
        : await d.collect.incoming({ keyValue: b.keyValue!, amountCents: b.amountCents!, ...payer });
    ctx.status = 202;
    ctx.body = { providerTransferId: payment.providerTransferId, eventId };
  });
}
