import type { Router } from '@koa/router';
import { z } from 'zod';
import type { SandboxHttpDeps } from '../context.js';
import { parse } from '../http-input.js';

const query = z.object({ to: z.string().trim().min(1).max(254).optional() });

/** What the SMTP sink received: GET /sandbox/emails?to=<address>, newest first, at most 100. */
export function emailRoutes(router: Router, d: SandboxHttpDeps): void {
  router.get('/sandbox/emails', async (ctx) => {
    const q = parse(query, { to: typeof ctx.query.to === 'string' ? ctx.query.to : undefined }, 'query');
    ctx.body = { items: await d.emails.list(q.to, 100) };
  });
}
