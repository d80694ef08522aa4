import type { Router } from '@koa/router';
import { z } from 'zod';
import { KEY_TYPES, parseKey } from '../../domain/keys.js';
import type { SandboxHttpDeps } from '../context.js';
import { amountCentsSchema, callbackUrlSchema, invalidRequest, parse, readJson, text, transactionIdSchema } from '../http-input.js';
import { submitBulk, submitTransfer, transferStatus } from './transfer-routes.js';

const transferBody = z.object({
  transactionId: transactionIdSchema,
  amountCents: amountCentsSchema,
  anchorHandle: z.string().min(1).max(64),
  keyType: z
    .string()
    .transform((s) => s.toUpperCase())
    .pipe(z.enum(['AUTO', ...KEY_TYPES])),
  keyValue: z.string().min(1).max(254),
  targetName: text(200), // as long as a send's targetName may be
  targetDocument: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9-]{3,20}$/, 'Entre 3 y 20 letras o dígitos.'),
  callbackUrl: callbackUrlSchema,
});

/** The body of a Bre-B submission, as the rail keeps it (the key in its canonical form); 400 at `path` when malformed. */
function submission(body: unknown, path = '') {
  const b = parse(transferBody, body, path);
  const key = parseKey(b.keyValue, b.keyType);
  if (!key) throw invalidRequest([{ path: [path, 'keyValue'].filter(Boolean).join('.'), message: `No es una llave ${b.keyType} válida.` }]);
  return {
    transactionId: b.transactionId,
    amountCents: b.amountCents,
    callbackUrl: b.callbackUrl,
    request: { ...b, amountCents: Number(b.amountCents), keyType: key.keyType, keyValue: key.keyValue },
  };
}

/** The Bre-B rail: POST /breb/rail/transfers (one, or …/bulk many), GET /breb/rail/transfers/{transactionId}. */
export function brebRoutes(router: Router, d: SandboxHttpDeps): void {
  router.post('/breb/rail/transfers', async (ctx) => {
    await submitTransfer(ctx, d, 'BREB', submission(await readJson(ctx.req)));
  });
  router.post('/breb/rail/transfers/bulk', (ctx) => submitBulk(ctx, d, 'BREB', submission));
  router.get('/breb/rail/transfers/:transactionId', (ctx) => transferStatus(ctx, d, 'BREB'));
}
