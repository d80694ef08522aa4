import type { Router } from '@koa/router';
import { withTimeout } from '@wallet/platform';
import type { SandboxHttpDeps } from '../context.js';

/** GET /healthz (alive), GET /readyz (Postgres answers and not shutting down). */
export function healthRoutes(router: Router, d: SandboxHttpDeps): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    let postgres = 'ok';
    try {
      await withTimeout(d.store.ping(), 2000);
    } catch (err) {
      postgres = `fail: ${(err as Error).message}`;
    }
    const ready = d.isReady() && postgres === 'ok';
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not_ready', checks: { postgres, ...(d.isReady() ? {} : { shutdown: 'draining' }) } };
  });
}
