import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { GatewayContext } from './context.js';

const VALID_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Echoes a well-formed incoming X-Request-Id (≤ 128 of [A-Za-z0-9._-]); otherwise mints a UUID. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v !== undefined && VALID_REQUEST_ID.test(v) ? v : randomUUID();
}

export async function requestIdMiddleware(ctx: GatewayContext, next: Next): Promise<void> {
  const id = requestIdFrom(ctx.req.headers['x-request-id']);
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
  await next();
}
