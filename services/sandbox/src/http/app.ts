import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import { Router } from '@koa/router';
import { ProviderError } from '../app/errors.js';
import type { SandboxHttpDeps } from './context.js';
import { achRoutes } from './routes/ach.routes.js';
import { brebRoutes } from './routes/breb.routes.js';
import { collectRoutes } from './routes/collect.routes.js';
import { directoryRoutes } from './routes/directory.routes.js';
import { emailRoutes } from './routes/email.routes.js';
import { healthRoutes } from './routes/health.routes.js';
import { prenoteRoutes } from './routes/prenote.routes.js';
import { pseRoutes } from './routes/pse.routes.js';
import { reportRoutes } from './routes/report.routes.js';
import { switchRoutes } from './routes/switches.routes.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The sandbox's HTTP API (docs/sandbox.md): JSON in and out, errors as `{ error, message, details? }`. */
export function createHttpApp(d: SandboxHttpDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;

  app.use(async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Request-Id', requestId);
    const started = Date.now();
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new ProviderError(404, 'ROUTE_NOT_FOUND', 'Ruta no encontrada.');
    } catch (err) {
      if (err instanceof ProviderError) {
        ctx.status = err.status;
        ctx.body = { error: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) };
      } else if ((err as { status?: number }).status === 405) {
        ctx.status = 405;
        ctx.body = { error: 'METHOD_NOT_ALLOWED', message: 'Método no permitido.' };
      } else {
        d.log.error({ err, method: ctx.method, route: routeOf(ctx), requestId }, 'request failed');
        ctx.status = 500;
        ctx.body = { error: 'INTERNAL_ERROR', message: 'Error interno del proveedor.' };
      }
    } finally {
      d.log.debug({ method: ctx.method, route: routeOf(ctx), status: ctx.status, ms: Date.now() - started, requestId }, 'request');
    }
  });

  const router = new Router();
  healthRoutes(router, d);
  collectRoutes(router, d);
  directoryRoutes(router, d);
  brebRoutes(router, d);
  achRoutes(router, d);
  prenoteRoutes(router, d);
  pseRoutes(router, d);
  switchRoutes(router, d);
  emailRoutes(router, d);
  reportRoutes(router, d);
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  return app;
}

/**
 * The route template a request matched (`/breb/directory/keys/:keyValue`), never the path itself:
 * paths carry Bre-B key values (phone numbers, e-mails, documents), which logs must not hold.
 */
function routeOf(ctx: object): string {
  const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof route === 'string' ? route : 'unmatched';
}
