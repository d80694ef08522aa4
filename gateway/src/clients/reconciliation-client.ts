import type { Client } from '@grpc/grpc-js';
import { createAsyncClient, type AsyncClient, type MeshTls } from '@wallet/platform';
import { reconciliationV1 } from '@wallet/proto';

export type ReconciliationClient = AsyncClient<reconciliationV1.ReconciliationServiceServer> & { close(): void; raw: Client };

/**
 * The promise client for the reconciliation service (runs, breaks, their money exceptions); every
 * call carries the request's CallContext. The service must prove the mesh identity `reconciliation`.
 * `rerunDeadlineMs`: a resolve by `rerun` runs a whole day again synchronously, so it gets a longer
 * deadline than ordinary reads (passed per call by the route).
 */
export function connectReconciliation(address: string, deadlineMs: number, tls: MeshTls): ReconciliationClient {
  return createAsyncClient<reconciliationV1.ReconciliationServiceServer>(reconciliationV1.ReconciliationServiceClient, address, {
    deadlineMs,
    mesh: { tls, server: 'reconciliation' },
  });
}
