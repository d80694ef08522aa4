import { startRailCall } from '@wallet/platform';
import type { HttpOutcome } from './http.js';

/** Transfer's provider calls (the rails and the Bre-B directory), metered by the platform's `wallet_rail_*` metrics. */
export type RailOperation = 'dispatch' | 'dispatch_bulk' | 'status' | 'validate_account' | 'lookup' | 'prenote' | 'prenote_status';

/** Times one provider call and counts its outcome (`okStatuses`: answers besides 2xx that are not failures, e.g. a 404 lookup). */
export async function meterRailCall(
  rail: string,
  operation: RailOperation,
  call: () => Promise<HttpOutcome>,
  okStatuses: readonly number[] = [],
): Promise<HttpOutcome> {
  const metered = startRailCall(rail, operation);
  const out = await call();
  metered.end(out.kind === 'error' ? undefined : out.status, okStatuses);
  return out;
}
