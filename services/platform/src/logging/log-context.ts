import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The ids every log line inside a request, gRPC call or message carries (read by the logger's
 * mixin). Values may be getters, so the gateway can expose the company id once authentication has
 * run without re-entering the store.
 */
export interface LogContext {
  requestId?: string | undefined;
  companyId?: string | undefined;
  eventId?: string | undefined;
}

const storage = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `fields` as the log context of everything it does (async continuations included). */
export function runWithLogContext<T>(fields: LogContext, fn: () => T): T {
  return storage.run(fields, fn);
}

/** The log context of the current request / call / message, if any. */
export function currentLogContext(): LogContext | undefined {
  return storage.getStore();
}
