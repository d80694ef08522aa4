import type { Router } from '@koa/router';
import { z } from 'zod';
import { KEY_TYPES } from '../../domain/keys.js';
import type { SandboxHttpDeps } from '../context.js';
import { parse } from '../http-input.js';

const query = z.object({
  type: z
    .string()
    .transform((s) => s.toUpperCase())
    .pipe(z.enum(['AUTO', ...KEY_TYPES]))
    .default('AUTO'),
});

/** GET /breb/directory/keys/{keyValue}?type=AUTO|PHONE|EMAIL|ALPHANUM|NRIC */
export function directoryRoutes(router: Router, d: SandboxHttpDeps): void {
  router.get('/breb/directory/keys/:keyValue', async (ctx) => {
    const { type } = parse(query, { type: typeof ctx.query.type === 'string' ? ctx.query.type : undefined }, 'query');
    ctx.body = await d.lookupKey.execute(String(ctx.params.keyValue ?? ''), type);
  });
}
