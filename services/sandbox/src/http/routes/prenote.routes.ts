import type { Router } from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { z } from 'zod';
import { ProviderError } from '../../app/errors.js';
import { prenoteView } from '../../app/ach-prenotes.js';
import { DEFAULT_PRENOTE_REASON, MAX_PRENOTE_DELAY_MS, PRENOTE_REASON_CODES, prenoteCallbackKey } from '../../domain/prenotes.js';
import type { SandboxHttpDeps } from '../context.js';
import { achAccountShape, callbackUrlSchema, parse, readJson, transactionIdSchema } from '../http-input.js';

/** The ACH account fields as for transfers, `holderName` optional (a prenote tests the account and the holder's document). */
const prenoteBody = z.object({
  prenoteId: transactionIdSchema,
  ...achAccountShape,
  holderName: achAccountShape.holderName.optional(),
  callbackUrl: callbackUrlSchema,
});
const reasonCode = z.enum(PRENOTE_REASON_CODES);
const behaviourBody = z.strictObject({
  delayMs: z.int().min(0).max(MAX_PRENOTE_DELAY_MS),
  rejectionRate: z.number().min(0).max(1),
  reasonCode: reasonCode.default(DEFAULT_PRENOTE_REASON),
});
const rejectBody = z.strictObject({ reasonCode: reasonCode.optional() }).default({});

const prenoteIdOf = (ctx: ParameterizedContext) => String(ctx.params.prenoteId ?? '');
const accountOf = (ctx: ParameterizedContext) => parse(achAccountShape.accountNumber, ctx.params.accountNumber, 'path.accountNumber');

/** ACH prenotes (docs/sandbox.md "ACH prenotes"): the rail's API for the product, and the test and demo switches. */
export function prenoteRoutes(router: Router, d: SandboxHttpDeps): void {
  router.post('/ach/prenotes', async (ctx) => {
    const b = parse(prenoteBody, await readJson(ctx.req));
    const { prenote, created } = await d.prenotes.submit({ ...b, holderName: b.holderName ?? null });
    if (!created) ctx.set('Idempotent-Replayed', 'true');
    ctx.status = 202;
    ctx.body = { prenoteId: prenote.prenoteId, status: prenote.status };
  });
  router.get('/ach/prenotes/:prenoteId', async (ctx) => {
    ctx.body = prenoteView(await d.prenotes.get(prenoteIdOf(ctx)));
  });

  // Forced outcomes, as the rails' /complete and /fail: now, with the callback at once.
  router.post('/sandbox/ach/prenotes/:prenoteId/accept', async (ctx) => {
    await readJson(ctx.req); // a body, if any, must be JSON; nothing in it is used
    ctx.body = prenoteView(await d.prenotes.force(prenoteIdOf(ctx), 'ACCEPTED'));
  });
  router.post('/sandbox/ach/prenotes/:prenoteId/reject', async (ctx) => {
    const b = parse(rejectBody, (await readJson(ctx.req)) ?? {});
    ctx.body = prenoteView(await d.prenotes.force(prenoteIdOf(ctx), 'REJECTED', b.reasonCode));
  });
  // The prenote's callback again, same eventId (as /sandbox/callbacks/{transactionId}/redeliver for transfers).
  router.post('/sandbox/ach/prenotes/:prenoteId/redeliver', async (ctx) => {
    const prenoteId = prenoteIdOf(ctx);
    const r = await d.dispatcher.redeliver(prenoteCallbackKey(prenoteId));
    if (r.outcome === 'not_found') {
      await d.prenotes.get(prenoteId); // 404 when unknown
      throw new ProviderError(409, 'NO_CALLBACK_YET', 'La prenotificación aún no tiene resultado: no hay notificación que reenviar.');
    }
    const base = { eventId: r.callback.eventId, prenoteId };
    if (r.outcome === 'queued') {
      ctx.status = 202;
      ctx.body = { ...base, delivered: false, queued: true, reason: r.reason === 'callbacks_down' ? 'CALLBACKS_DOWN' : 'IN_FLIGHT' };
      return;
    }
    ctx.body = { ...base, delivered: r.result.delivered, queued: !r.result.delivered, responseStatus: r.result.status, attempts: r.callback.attempts };
  });

  // The per-account behaviour: delay, rejection rate and code of the account's next prenotes.
  const behaviourPath = '/sandbox/ach/accounts/:accountNumber/prenote-behaviour';
  router.put(behaviourPath, async (ctx) => {
    const accountNumber = accountOf(ctx);
    const b = parse(behaviourBody, await readJson(ctx.req));
    ctx.body = await d.prenotes.setBehaviour(accountNumber, b);
  });
  router.get(behaviourPath, async (ctx) => {
    ctx.body = await d.prenotes.behaviour(accountOf(ctx));
  });
  router.delete(behaviourPath, async (ctx) => {
    const accountNumber = accountOf(ctx);
    ctx.body = { accountNumber, deleted: await d.prenotes.clearBehaviour(accountNumber) };
  });
}
