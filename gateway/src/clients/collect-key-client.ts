import type { Client } from '@grpc/grpc-js';
import { createAsyncClient, type AsyncClient, type MeshTls } from '@wallet/platform';
import { collectKeyV1 } from '@wallet/proto';

export type CollectKeyClient = AsyncClient<collectKeyV1.CollectKeyServiceServer> & { close(): void; raw: Client };

/** The promise client for the collect-key service; every call carries the request's CallContext. */
export function connectCollectKey(address: string, deadlineMs: number, tls: MeshTls): CollectKeyClient {
  return createAsyncClient<collectKeyV1.CollectKeyServiceServer>(collectKeyV1.CollectKeyServiceClient, address, {
    deadlineMs,
    mesh: { tls, server: 'collect-key' },
  });
}
