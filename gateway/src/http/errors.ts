import type { Next } from 'koa';
import { AppError, ERRORS, type ErrorCode, type Logger } from '@wallet/platform';
import type { GatewayContext } from './context.js';

/** Codes whose extra fields sit at the top level of the body (reference §7.1), not under `details`. */
const TOP_LEVEL_FIELDS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['INSUFFICIENT_SCOPE', 'RATE_LIMIT_EXCEEDED']);

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  [extra: string]: unknown;
}

export function errorBody(err: AppError): ErrorBody {
  const body: ErrorBody = { error: err.code, message: err.message };
  if (err.details) {
    if (TOP_LEVEL_FIELDS.has(err.code)) Object.assign(body, err.details, { error: err.code, message: err.message });
    else body.details = err.details;
  }
  return body;
}

/**
 * The one place an error becomes an HTTP answer: `{ error, message, details? }` with the
 * catalogue's status and Spanish message. Anything that is not an AppError is logged with its
 * stack here and answered as INTERNAL_ERROR, so no stack, SQL or host name reaches a client.
 */
export function errorMiddleware(log: Logger) {
  return async function handleErrors(ctx: GatewayContext, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new AppError('ROUTE_NOT_FOUND');
    } catch (err) {
      let app: AppError;
      if (err instanceof AppError) {
        app = err;
        if (app.code === 'INTERNAL_ERROR') log.error({ err, requestId: ctx.state.requestId }, 'internal error');
        // A 503 names what did not answer, in the log only (the gRPC status a client call ended with).
        else if (app.code === 'SERVICE_UNAVAILABLE' && app.cause !== undefined) {
          log.warn({ requestId: ctx.state.requestId, route: ctx.state.routeTemplate, cause: app.cause }, 'answered 503: a dependency did not answer');
        }
      } else {
        app = new AppError('INTERNAL_ERROR');
        log.error({ err, requestId: ctx.state.requestId, route: ctx.state.routeTemplate }, 'unhandled error');
      }
      ctx.status = ERRORS[app.code].http;
      ctx.body = errorBody(app);
      // A refusal that ends at a known time (rate limit, account lockout) says when, in seconds.
      const retryAfter = app.details?.retryAfter;
      if (typeof retryAfter === 'number' && Number.isInteger(retryAfter) && retryAfter > 0) ctx.set('Retry-After', String(retryAfter));
      ctx.set('Cache-Control', 'no-store');
    }
  };
}
