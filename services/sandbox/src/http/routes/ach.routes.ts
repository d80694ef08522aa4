import type { Router } from '@koa/router';
import { z } from 'zod';
import type { SandboxHttpDeps } from '../context.js';
import { achAccountShape, amountCentsSchema, callbackUrlSchema, parse, readJson, transactionIdSchema } from '../http-input.js';
import { submitTransfer, transferStatus } from './transfer-routes.js';

const validateBody = z.object(achAccountShape);
const transferBody = z.object({ transactionId: transactionIdSchema, amountCents: amountCentsSchema, ...achAccountShape, callbackUrl: callbackUrlSchema });

/** The ACH rail: account validation, transfers, status. */
export function achRoutes(router: Router, d: SandboxHttpDeps): void {
  router.post('/ach/accounts/validate', async (ctx) => {
    const b = parse(validateBody, await readJson(ctx.req));
    ctx.body = await d.validateAchAccount.execute(b.accountNumber);
  });
  router.post('/ach/transfers', async (ctx) => {
    const b = parse(transferBody, await readJson(ctx.req));
    await submitTransfer(ctx, d, 'ACH', {
      transactionId: b.transactionId,
      amountCents: b.amountCents,
      callbackUrl: b.callbackUrl,
      request: { ...b, amountCents: Number(b.amountCents) },
    });
  });
  router.get('/ach/transfers/:transactionId', (ctx) => transferStatus(ctx, d, 'ACH'));
}
