import type { Router } from '@koa/router';
import { z } from 'zod';
import type { SandboxHttpDeps } from '../context.js';
import { achAccountShape, amountCentsSchema, callbackUrlSchema, parse, readJson, transactionIdSchema } from '../http-input.js';
import { submitBulk, submitTransfer, transferStatus } from './transfer-routes.js';

const validateBody = z.object(achAccountShape);
const transferBody = z.object({ transactionId: transactionIdSchema, amountCents: amountCentsSchema, ...achAccountShape, callbackUrl: callbackUrlSchema });

/** The body of an ACH submission; 400 at `path` when malformed. */
function submission(body: unknown, path = '') {
  const b = parse(transferBody, body, path);
  return { transactionId: b.transactionId, amountCents: b.amountCents, callbackUrl: b.callbackUrl, request: { ...b, amountCents: Number(b.amountCents) } };
}

/** The ACH rail: account validation, transfers (one, or …/bulk many), status. */
export function achRoutes(router: Router, d: SandboxHttpDeps): void {
  router.post('/ach/accounts/validate', async (ctx) => {
    const b = parse(validateBody, await readJson(ctx.req));
    ctx.body = await d.validateAchAccount.execute(b.accountNumber);
  });
  router.post('/ach/transfers', async (ctx) => {
    await submitTransfer(ctx, d, 'ACH', submission(await readJson(ctx.req)));
  });
  router.post('/ach/transfers/bulk', (ctx) => submitBulk(ctx, d, 'ACH', submission));
  router.get('/ach/transfers/:transactionId', (ctx) => transferStatus(ctx, d, 'ACH'));
}
