import { AppError, asyncService, createLogger, devMeshTls, startGrpcServer, type AccessPolicy, type AsyncService } from '@wallet/platform';
import { reconciliationV1 } from '@wallet/proto';

type Impl = AsyncService<reconciliationV1.ReconciliationServiceServer>;

export interface ReconciliationStandIn {
  address: string;
  stop(): Promise<void>;
}

/**
 * TEST STAND-IN for the remote reconciliation service in the gateway's integration stack: a real
 * gRPC server over the mesh's mutual TLS (identity `reconciliation`, operators only) that keeps no
 * runs, breaks or exceptions, so GET /admin/exceptions merges its (empty) listing with the real
 * transfer and pse-deposit services'. The routes of the reconciliation itself are tested in
 * test/e2e/reconciliations-api.test.ts. Never used outside tests.
 */
export async function startReconciliationStandIn(): Promise<ReconciliationStandIn> {
  const admin = ['gateway:admin'] as const;
  const policy: AccessPolicy<Impl> = { startRun: admin, getRun: admin, listRuns: admin, listBreaks: admin, listExceptions: admin, resolveException: admin };
  const impl: Impl = {
    startRun: async () => {
      throw new AppError('SERVICE_UNAVAILABLE');
    },
    getRun: async () => {
      throw new AppError('RECONCILIATION_NOT_FOUND');
    },
    listRuns: async () => ({ items: [] }),
    listBreaks: async () => ({ items: [] }),
    listExceptions: async () => ({ items: [] }),
    resolveException: async () => {
      throw new AppError('EXCEPTION_NOT_FOUND');
    },
  };
  const tls = devMeshTls('reconciliation');
  const server = await startGrpcServer(
    '127.0.0.1',
    0,
    [
      {
        definition: reconciliationV1.ReconciliationServiceService,
        implementation: asyncService(impl, createLogger('reconciliation-stand-in', 'silent'), policy, tls),
      },
    ],
    tls,
  );
  return { address: `127.0.0.1:${server.port}`, stop: () => server.stop(1000) };
}
